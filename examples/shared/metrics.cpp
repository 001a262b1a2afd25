// metrics.hpp's registry, health and listener (rule O4). The registry is
// prometheus-cpp's when KEYHOOK_EXAMPLES_HAVE_METRICS (prometheus-cpp's core
// and Boost.Beast found, examples/CMakeLists.txt); else recording does
// nothing and the listener never starts. Health, the listen address and the
// answers are the same in both builds.
#include "shared/metrics.hpp"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#if KEYHOOK_EXAMPLES_HAVE_METRICS
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "shared/http_server.hpp"
#endif

namespace examples::metrics {

// ---------------------------------------------------------------- health

health::health(std::chrono::milliseconds stale_period) : stale_period_(stale_period) {}

void health::store_ok() noexcept {
    last_heard_.store(ticks(clock::now()), std::memory_order_relaxed);
    failing_since_.store(0, std::memory_order_relaxed);
}

void health::store_failed() noexcept {
    const auto now = ticks(clock::now());
    last_heard_.store(now, std::memory_order_relaxed);
    std::int64_t ok = 0;
    // The first failure after a success starts the failing period; later ones leave it.
    failing_since_.compare_exchange_strong(ok, now, std::memory_order_relaxed);
}

void health::set_probe(std::function<bool()> probe) {
    std::lock_guard<std::mutex> lock(probe_mutex_);
    probe_ = std::move(probe);
}

void health::shutting_down() noexcept { shutting_down_.store(true); }

namespace {

std::string seconds_text(std::chrono::milliseconds d) {
    const auto ms = d.count();
    std::string text = std::to_string(ms / 1000);
    if (ms % 1000 != 0) {
        std::string fraction = std::to_string(1000 + ms % 1000).substr(1);
        while (fraction.back() == '0') fraction.pop_back();
        text += "." + fraction;
    }
    return text + " s";
}

}  // namespace

health::answer health::check() {
    if (shutting_down_.load()) return {false, "shutting down"};
    const auto now = clock::now();
    {
        // Nothing heard from the store for a second: ask it (one probe at a
        // time, at most one a second; a check during a probe does not wait).
        std::unique_lock<std::mutex> lock(probe_mutex_, std::try_to_lock);
        if (lock.owns_lock() && probe_) {
            const auto heard = last_heard_.load(std::memory_order_relaxed);
            const bool quiet = heard == 0 || now - clock::time_point(clock::duration(heard)) >= std::chrono::seconds(1);
            if (quiet && (last_probe_ == clock::time_point{} || now - last_probe_ >= std::chrono::seconds(1))) {
                last_probe_ = now;
                bool answered = false;
                try {
                    answered = probe_();
                } catch (...) {
                    answered = false;
                }
                if (answered)
                    store_ok();
                else
                    store_failed();
            }
        }
    }
    const auto since = failing_since_.load(std::memory_order_relaxed);
    if (since != 0 && clock::now() - clock::time_point(clock::duration(since)) > stale_period_)
        return {false, "the store has been unreadable or unwritable for more than " + seconds_text(stale_period_)};
    return {};
}

std::string health::body(const answer& a) {
    if (a.ok) return "{\"status\":\"ok\"}\n";
    // The reason is this file's own text: no quote or control character to escape.
    return "{\"status\":\"unavailable\",\"reason\":\"" + a.reason + "\"}\n";
}

// ---------------------------------------------------------------- listen address

std::optional<listen_address> parse_listen_address(std::string_view text) {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size() || text.size() - colon > 6)
        return std::nullopt;
    std::string_view host = text.substr(0, colon);
    if (host.front() == '[') {
        if (host.size() < 3 || host.back() != ']') return std::nullopt;
        host = host.substr(1, host.size() - 2);
    }
    long port = 0;
    for (const char c : text.substr(colon + 1)) {
        if (c < '0' || c > '9') return std::nullopt;
        port = port * 10 + (c - '0');
    }
    if (port > 65535) return std::nullopt;
    return listen_address{std::string(host), static_cast<unsigned short>(port)};
}

// ---------------------------------------------------------------- answers

reply answer(const registry& r, health& h, std::string_view method, std::string_view target) {
    const std::string_view path = target.substr(0, target.find('?'));
    const bool known = path == "/metrics" || path == "/healthz";
    if (!known)
        return {404, "application/json", "{\"error\":\"not found: this address serves /metrics and /healthz\"}\n"};
    if (method != "GET") return {405, "application/json", "{\"error\":\"expected GET\"}\n"};
    if (path == "/metrics") return {200, "text/plain; version=0.0.4; charset=utf-8", r.text()};
    const auto a = h.check();
    return {a.ok ? 200 : 503, "application/json", health::body(a)};
}

#if KEYHOOK_EXAMPLES_HAVE_METRICS

bool built() noexcept { return true; }

// ---------------------------------------------------------------- registry

struct registry::impl {
    prometheus::Registry families;
    std::array<prometheus::Counter*, store_names.size()> store_errors{};
    std::array<prometheus::Counter*, receiver_result_names.size()> receiver_requests{};
    std::array<prometheus::Counter*, gateway_code_names.size()> decisions{};
    prometheus::Histogram* decision_seconds = nullptr;
    std::array<prometheus::Counter*, delivery_outcome_names.size()> attempts{};
    prometheus::Histogram* attempt_seconds = nullptr;
    prometheus::Gauge* pending = nullptr;
    prometheus::Gauge* disabled = nullptr;
};

namespace {

template <std::size_t N>
std::array<prometheus::Counter*, N> counters(prometheus::Registry& reg, const char* name, const char* help,
                                             const char* label, const std::array<std::string_view, N>& values) {
    auto& family = prometheus::BuildCounter().Name(name).Help(help).Register(reg);
    std::array<prometheus::Counter*, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = &family.Add({{label, std::string(values[i])}});
    return out;
}

template <std::size_t N>
prometheus::Histogram* histogram(prometheus::Registry& reg, const char* name, const char* help,
                                 const std::array<double, N>& bounds) {
    auto& family = prometheus::BuildHistogram().Name(name).Help(help).Register(reg);
    return &family.Add({}, prometheus::Histogram::BucketBoundaries(bounds.begin(), bounds.end()));
}

prometheus::Gauge* gauge(prometheus::Registry& reg, const char* name, const char* help) {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(reg).Add({});
}

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

registry::registry(program p) : program_(p), impl_(std::make_unique<impl>()) {
    auto& reg = impl_->families;
    // The store of each program: one series, the others' never appear.
    const store own = p == program::key_gateway       ? store::key
                      : p == program::webhook_deliver ? store::delivery
                                                      : store::replay;
    auto& errors = prometheus::BuildCounter()
                       .Name("keyhook_store_errors_total")
                       .Help("Operations on the program's store that failed (store: key, delivery or replay)")
                       .Register(reg);
    impl_->store_errors[static_cast<std::size_t>(own)] =
        &errors.Add({{"store", std::string(store_names[static_cast<std::size_t>(own)])}});
    switch (p) {
        case program::webhook_receiver:
            impl_->receiver_requests =
                counters(reg, "keyhook_receiver_requests_total",
                         "Requests webhook_receiver --listen answered, by result", "result", receiver_result_names);
            break;
        case program::key_gateway:
            impl_->decisions =
                counters(reg, "keyhook_gateway_decisions_total", "Calls key_gateway decided, by answer code (rule O2)",
                         "code", gateway_code_names);
            impl_->decision_seconds = histogram(
                reg, "keyhook_gateway_decision_seconds",
                "Time key_gateway took to decide a call, from its request read to its answer made", decision_buckets);
            break;
        case program::webhook_deliver:
            impl_->attempts = counters(reg, "keyhook_delivery_attempts_total",
                                       "Delivery attempts webhook_deliver made, by what followed each", "outcome",
                                       delivery_outcome_names);
            impl_->attempt_seconds = histogram(reg, "keyhook_delivery_attempt_seconds",
                                               "Time a delivery attempt's HTTP request took", attempt_buckets);
            impl_->pending = gauge(reg, "keyhook_deliveries_pending",
                                   "Deliveries pending in the store, store-wide (aggregate workers with max)");
            impl_->disabled = gauge(reg, "keyhook_endpoints_disabled",
                                    "Webhooks disabled in the store, store-wide (aggregate workers with max)");
            break;
    }
}

registry::~registry() = default;

void registry::store_error(store s) {
    if (auto* c = impl_->store_errors[static_cast<std::size_t>(s)]) c->Increment();
}

void registry::receiver_request(receiver_result r) {
    if (auto* c = impl_->receiver_requests[static_cast<std::size_t>(r)]) c->Increment();
}

void registry::gateway_decision(gateway_code c, std::chrono::steady_clock::duration took) {
    if (auto* counter = impl_->decisions[static_cast<std::size_t>(c)]) {
        counter->Increment();
        impl_->decision_seconds->Observe(seconds(took));
    }
}

void registry::delivery_attempt(delivery_outcome o, std::chrono::steady_clock::duration took) {
    if (auto* counter = impl_->attempts[static_cast<std::size_t>(o)]) {
        counter->Increment();
        impl_->attempt_seconds->Observe(seconds(took));
    }
}

void registry::deliveries_pending(double n) {
    if (impl_->pending) impl_->pending->Set(n);
}

void registry::endpoints_disabled(double n) {
    if (impl_->disabled) impl_->disabled->Set(n);
}

std::string registry::text() const { return prometheus::TextSerializer().Serialize(impl_->families.Collect()); }

// ---------------------------------------------------------------- listener

struct listener::impl {
    const registry& reg;
    health& h;
    http_server::server server;
    std::thread thread;

    static http_server::options server_options() {
        http_server::options o;
        o.max_body_bytes = 4096;  // a GET has none
        o.max_connections = 32;
        o.threads = 1;
        return o;
    }

    impl(const registry& r, health& hl)
        : reg(r), h(hl), server(server_options(), [this](http_server::request&& req) { return handle(req); }) {}

    http_server::response handle(const http_server::request& req) {
        const auto a = answer(reg, h, req.method, req.target);
        http_server::response out;
        out.status = a.status;
        out.headers.push_back({"Content-Type", a.content_type});
        out.headers.push_back({"Cache-Control", "no-store"});
        if (a.status == 405) out.headers.push_back({"Allow", "GET"});
        out.body = a.body;
        return out;
    }
};

listener::listener(const registry& r, health& h) : impl_(std::make_unique<impl>(r, h)) {}

listener::~listener() { stop(); }

std::optional<unsigned short> listener::start(const listen_address& at, std::string& error) {
    const auto port = impl_->server.listen(at.host, at.port, error);
    if (!port) return std::nullopt;
    impl_->thread = std::thread([this] { impl_->server.run(); });
    return port;
}

void listener::stop() {
    impl_->server.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
}

#else  // without prometheus-cpp or Boost.Beast: nothing is recorded, nothing listens

bool built() noexcept { return false; }

struct registry::impl {};
registry::registry(program p) : program_(p) {}
registry::~registry() = default;
void registry::store_error(store) {}
void registry::receiver_request(receiver_result) {}
void registry::gateway_decision(gateway_code, std::chrono::steady_clock::duration) {}
void registry::delivery_attempt(delivery_outcome, std::chrono::steady_clock::duration) {}
void registry::deliveries_pending(double) {}
void registry::endpoints_disabled(double) {}
std::string registry::text() const { return {}; }

struct listener::impl {};
listener::listener(const registry&, health&) {}
listener::~listener() = default;
std::optional<unsigned short> listener::start(const listen_address&, std::string& error) {
    error = not_built_message();
    return std::nullopt;
}
void listener::stop() {}

#endif

std::string not_built_message() {
    return "--metrics-listen is not available: this build has no prometheus-cpp (Debian: prometheus-cpp-dev) "
           "or no Boost.Beast (libboost1.81-dev); reconfigure with them (scripts/install-deps.sh)";
}

}  // namespace examples::metrics
