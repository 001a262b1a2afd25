// key_gateway: forward authentication (K16) for nginx's auth_request and
// Traefik's ForwardAuth, over the key store key_admin writes.
//
//   key_gateway --listen HOST:PORT --store STORE --routes FILE --proxy nginx|traefik
//               --trusted-proxy CIDR [--trusted-proxy CIDR]... [--stale-for SECONDS]
//               [--log json|none] [--metrics-listen HOST:PORT] [--limits shared|local]
//
// --store STORE is "jsonl:PATH" or a plain PATH (a JSON-lines file), or
// postgresql://... (also postgres://...: one store many gateways share,
// examples/shared/postgres_key_store.hpp); examples/shared/store_opener.hpp
// refuses any other form, naming the accepted ones: exit 2. The
// command line is read by CLI11 under rule O1 (examples/shared/cli.hpp):
// --help, --version, usage errors naming the flag; --proxy in any case.
// --trusted-proxy is required (K16): without it every call would come from
// an untrusted address, and nginx's auth_request subrequest
// (GET /.key_gateway, from nginx's address) would be judged instead of the
// call it asks about. The gateway never starts in that state.
//
// Peppers from KEYHOOK_PEPPERS, as key_admin. The decisions are in
// forward_auth.hpp; this file adds the HTTP server (H13), the store and the
// signals. With --limits local (a file store's only choice) rate states live
// in memory; credits and lastUsedAt go back to the
// store at most once a second and on shutdown, merged under the store's lock
// (key_store::merge_write_backs; only the changed keys' lines are formatted
// and checked, key_store::jsonl_key_store::update_usage), and so does a key's digest under the
// current pepper after it matched under a legacy form or an older pepper.
// All of that runs on the main thread, off the request path: a call never
// waits on file I/O or on the store's lock (a write-back the lock defers is
// tried again a quarter of a second later). On PostgreSQL the write-back
// goes row by row instead (key_store::key_store::write_usage: credits spent
// are subtracted, so several gateways' spending adds up).
// K17, --limits shared (the default on PostgreSQL): a call on a key with a
// rate limit or credits that passes every other check is decided by the
// database, in the batches of shared_limits.hpp (one transaction per round
// trip, the database's clock, committed before the answer), so all gateways
// together allow exactly what one would; the call holds no server thread
// meanwhile (http_server's deferred handler). A batch that fails is
// answered 503 UNAVAILABLE: limits are never guessed.
// The store is read again when it changes (its version checked four times a
// second; a database's NOTIFY wakes the gateway at once, and only makes it
// read: a notification carries no content it trusts) and on SIGHUP; SIGINT
// and SIGTERM stop the server, write back, and exit 0.
// K17: a store that cannot be read (a file removed, corrupted, unreadable;
// a database that does not answer within 2 s, or at all) leaves the gateway
// answering from what it holds for --stale-for seconds (default 5) after it
// last heard from the store; then every call is refused with 503
// (UNAVAILABLE) until the store reads again (a database connection is made
// again by itself, after a pause of 250 ms doubling to 2 s). Such failures
// are logged at most once a second.
// O2: every answer has one code (forward_auth.hpp). O3: with --log json (the
// default) each decision is one JSON line on standard error
// (examples/shared/request_log.hpp), written by a thread of its own so a slow
// standard error never holds a call; the program's other lines are plain
// text ("key_gateway: ...") and carry no "code".
// O4: with --metrics-listen HOST:PORT (a separate address; refused, exit 2,
// in a build without prometheus-cpp) GET /metrics serves
// keyhook_gateway_decisions_total{code} (O2's codes),
// keyhook_gateway_decision_seconds and keyhook_store_errors_total{store="key"}
// (examples/shared/metrics.hpp), and GET /healthz answers 503 exactly when
// the calls are refused as stale (K17) and while the gateway stops, else 200.
//
// Exit status (rule O1): 0 stopped by SIGINT or SIGTERM with the usage
// written back; 1 bad input: the routes file missing or malformed, or a store
// whose content is refused at start; 2 usage error, KEYHOOK_PEPPERS missing
// or malformed included; 3 the store cannot be read at start (its file, or
// the database cannot be reached), the address cannot be listened on, or
// the usage could not be written back at shutdown (tried again for 5 s).
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "forward_auth.hpp"
#include "shared_limits.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/stored_key.hpp"
#include "shared/cli.hpp"
#include "shared/read_file.hpp"
#include "shared/http_server.hpp"
#include "shared/key_store.hpp"
#include "shared/metrics.hpp"
#include "shared/request_log.hpp"
#include "shared/store_opener.hpp"

namespace {

namespace cli = examples::cli;
namespace metrics = examples::metrics;

// O4: a decision's metric label is its answer's code (O2), one table apart:
// gateway::code and metrics::gateway_code name the same codes in one order.
constexpr bool metric_codes_match() {
    if (std::size(gateway::code_rows) != metrics::gateway_code_names.size()) return false;
    for (std::size_t i = 0; i < metrics::gateway_code_names.size(); ++i)
        if (gateway::code_rows[i].name != metrics::gateway_code_names[i]) return false;
    return true;
}
static_assert(metric_codes_match(), "the metrics' code label takes exactly the answer codes, in order");

const cli::program program{"key_gateway",
                           "usage: key_gateway --listen HOST:PORT --store STORE --routes FILE --proxy nginx|traefik\n"
                           "                   --trusted-proxy CIDR [--trusted-proxy CIDR]... [--stale-for SECONDS]\n"
                           "                   [--log json|none] [--metrics-listen HOST:PORT] [--limits shared|local]",
                           ""};

constexpr const char* description =
    "Forward authentication (K16) for nginx's auth_request and Traefik's ForwardAuth, over the key\n"
    "store key_admin writes; the store is read again when it changes and on SIGHUP, and usage is\n"
    "written back at most once a second and on SIGINT or SIGTERM. On PostgreSQL, many gateways\n"
    "share one store and a change reaches each at once (NOTIFY); rate limits and credits are\n"
    "decided by the database for all of them (--limits shared, the default there).\n"
    "Environment: KEYHOOK_PEPPERS=\"id:base64 ...\" (the first is current); PGPASSFILE or PGPASSWORD\n"
    "for a database's password (never on the command line).";

struct settings {
    std::string host;
    unsigned short port = 0;
    examples::store::store_address store;  // --store: jsonl:PATH, a plain PATH or postgresql://...
    std::string routes;
    gateway::proxy_kind proxy = gateway::proxy_kind::nginx;
    std::vector<keyhook::address_range> trusted;
    // K17: how long the gateway answers from what it holds once the store
    // cannot be read; then it refuses every call (503) until the store reads.
    std::chrono::milliseconds stale_for{5000};
    bool log_requests = true;                        // --log json (O3); none: no request lines
    std::optional<metrics::listen_address> metrics;  // --metrics-listen (O4)
    std::string metrics_text;                        // as given, for messages
    // --limits shared (K17): rate limits and credits decided by the store
    // for every gateway at once; local: counted in this gateway's memory.
    bool shared_limits = false;
    bool local_on_database = false;  // --limits local on a shared store: warned at start
};

std::string seconds_text(std::chrono::milliseconds d) {
    const auto ms = d.count();
    std::string out = std::to_string(ms / 1000);
    if (ms % 1000) {
        std::string frac = std::to_string(1000 + ms % 1000).substr(1);
        while (frac.back() == '0') frac.pop_back();
        out += "." + frac;
    }
    return out + " s";
}

using usage_error = cli::usage_error;

// Reads the command line (CLI11, rule O1). The settings, or the exit status
// after --help, --version or a usage error.
std::variant<settings, int> parse_arguments(int argc, char** argv) {
    CLI::App app;
    cli::configure(app, program, description);
    std::string listen, store, proxy, stale_for, log_format = "json", metrics_listen, limits;
    std::vector<std::string> trusted;
    settings s;
    app.add_option("--listen", listen, "serve HTTP on HOST:PORT (port 0: any free port, printed)")
        ->type_name("HOST:PORT")
        ->required();
    app.add_option("--store", store,
                   "the key store key_admin writes: jsonl:PATH or a plain PATH (a JSON-lines file), or "
                   "postgresql://... (also postgres://; shared by many gateways)")
        ->type_name("STORE")
        ->required();
    app.add_option("--routes", s.routes, "the routes and permission groups (JSON; see docs/embedding.md)")
        ->type_name("FILE")
        ->required();
    app.add_option("--proxy", proxy, "the proxy in front: how it passes the original call; any case")
        ->type_name("nginx|traefik")
        ->required();
    app.add_option("--trusted-proxy", trusted,
                   "the proxy's address range, whose forwarded headers are read (repeat for more); required (K16)")
        ->type_name("CIDR")
        ->allow_extra_args(false);  // one value each time it is given
    app.add_option("--stale-for", stale_for,
                   "answer from what the gateway holds this long after the store last read (K17), 0 to 3600, "
                   "at most 3 decimals; then 503")
        ->type_name("SECONDS")
        ->default_str("5");
    app.add_option("--log", log_format,
                   "json: one JSON line per decision on standard error (O3); none: no request lines; any case")
        ->type_name("json|none")
        ->default_str("json");
    app.add_option("--metrics-listen", metrics_listen,
                   "serve GET /metrics (Prometheus) and GET /healthz on HOST:PORT, a separate address (O4)")
        ->type_name("HOST:PORT")
        ->default_str("off");
    app.add_option("--limits", limits,
                   "shared: rate limits and credits decided by the store for all gateways (K17; a PostgreSQL "
                   "store only); local: counted by this gateway alone; any case")
        ->type_name("shared|local")
        ->default_str("shared on postgresql://, else local");
    if (const auto status = cli::parse(app, program, argc, argv)) return *status;
    try {
        if (app.get_option("--metrics-listen")->count() > 0) {
            // O4: refused before anything else in a build without prometheus-cpp.
            if (!metrics::built()) throw usage_error{metrics::not_built_message()};
            s.metrics = metrics::parse_listen_address(metrics_listen);
            if (!s.metrics)
                throw usage_error{"--metrics-listen: expected HOST:PORT, got " + keyhook::quoted_input(metrics_listen)};
            s.metrics_text = metrics_listen;
        }
        const auto colon = listen.rfind(':');
        if (colon == std::string::npos || colon + 1 == listen.size() ||
            listen.find_first_not_of("0123456789", colon + 1) != std::string::npos || listen.size() - colon > 6)
            throw usage_error{"--listen: expected HOST:PORT"};
        const auto port = std::stoul(listen.substr(colon + 1));
        if (port > 65535) throw usage_error{"--listen: the port is at most 65535"};
        s.host = listen.substr(0, colon);
        s.port = static_cast<unsigned short>(port);

        std::string why;
        auto address = examples::store::parse_store_address(store, examples::store::store_use::keys, why);
        if (!address) throw usage_error{why};
        s.store = std::move(*address);

        const bool database = s.store.kind == examples::store::backend::postgresql;
        const std::string limits_word = cli::lower(limits);  // O1: any case
        const bool limits_given = app.get_option("--limits")->count() > 0;
        if (limits_given && limits_word != "shared" && limits_word != "local")
            throw usage_error{"--limits: expected shared or local, got " + keyhook::quoted_input(limits)};
        if (limits_word == "shared" && !database)
            throw usage_error{
                "--limits shared needs a PostgreSQL store (postgresql://...): a file's usage is counted by "
                "each gateway alone"};
        s.shared_limits = limits_given ? limits_word == "shared" : database;
        s.local_on_database = database && !s.shared_limits;

        const std::string proxy_word = cli::lower(proxy);  // O1: any case
        if (proxy_word != "nginx" && proxy_word != "traefik")
            throw usage_error{"--proxy: expected nginx or traefik, got " + keyhook::quoted_input(proxy)};
        s.proxy = proxy_word == "nginx" ? gateway::proxy_kind::nginx : gateway::proxy_kind::traefik;

        const std::string log_word = cli::lower(log_format);  // O1: any case
        if (log_word != "json" && log_word != "none")
            throw usage_error{"--log: expected json or none, got " + keyhook::quoted_input(log_format)};
        s.log_requests = log_word == "json";

        if (app.get_option("--stale-for")->count() > 0) {
            // Seconds, with up to three decimals: 0 to 3600.
            const auto& value = stale_for;
            const auto dot = value.find('.');
            const auto whole = value.substr(0, dot);
            const auto frac = dot == std::string::npos ? std::string() : value.substr(dot + 1);
            if (whole.empty() || whole.size() > 4 || whole.find_first_not_of("0123456789") != std::string::npos ||
                (dot != std::string::npos && (frac.empty() || frac.size() > 3)) ||
                frac.find_first_not_of("0123456789") != std::string::npos)
                throw usage_error{"--stale-for: expected seconds (0 to 3600, at most 3 decimals)"};
            const long ms = std::stol(whole) * 1000 + (frac.empty() ? 0 : std::stol((frac + "00").substr(0, 3)));
            if (ms > 3600 * 1000) throw usage_error{"--stale-for: at most 3600 seconds"};
            s.stale_for = std::chrono::milliseconds{ms};
        }
        for (const auto& value : trusted) {
            auto r = keyhook::try_parse_address_range(value);
            if (!r) throw usage_error{"--trusted-proxy: " + r.error().message};
            s.trusted.push_back(*r);
        }
        // K16: fail closed. Without a trusted proxy no forwarded header is read,
        // so every call would be judged as the proxy's own subrequest.
        if (s.trusted.empty())
            throw usage_error{
                "--proxy needs --trusted-proxy CIDR (the proxy's address): without it the gateway would "
                "judge the proxy's own subrequest instead of the call it asks about"};
    } catch (const usage_error& e) {
        return cli::usage_failure(program, e.why);
    }
    return s;
}

keyhook::timestamp now() { return keyhook::to_timestamp(std::chrono::system_clock::now()); }

// Standard error's writer (O3), from the start of main to its end: the
// request lines and the program's own lines go through it, whole, in order.
examples::request_log::line_writer* standard_error = nullptr;

// One of the program's own lines ("key_gateway: ..."), plain text.
void log(const std::string& line) {
    if (standard_error)
        standard_error->write("key_gateway: " + line, examples::request_log::line_writer::kind::notice);
    else
        std::cerr << "key_gateway: " << line << std::endl;
}

using steady = std::chrono::steady_clock;

// One kind of failure, logged at most once a second (O3): the first at once,
// the repeats counted and named in the next line (and in the line that says
// it is over), so a store that stays unreadable never floods the log.
class failure_log {
public:
    explicit failure_log(std::string what) : what_(std::move(what)) {}
    void failed(const std::string& why) {
        const auto repeats = limit_.occurred(steady::now());
        if (!repeats) return;
        log(what_ + ": " + why + (*repeats ? " (" + std::to_string(*repeats) + " more since the last report)" : ""));
    }
    void succeeded(const std::string& now_line) {
        if (const auto all = limit_.ended()) log(now_line + " (after " + std::to_string(*all) + " failed attempts)");
    }

private:
    std::string what_;
    examples::request_log::repeated_error limit_;
};

// Runs a write-back's jobs (formatting and checking the changed lines, each
// independent) on a thread of its own at a lower CPU priority (nice 19, on
// Linux, for that thread alone), so that with the cores saturated the calls
// get the CPU first. The caller waits at most `patience` and then takes the
// jobs left itself, at its own priority; it returns when every job is done.
// So the lower priority delays a write-back by at most `patience` (and one
// job started at it), which the caller keeps inside K17's stale period.
class background_runner {
public:
    background_runner() : thread_([this] { loop(); }) {}
    ~background_runner() {
        {
            std::lock_guard<std::mutex> hold(mutex_);
            quit_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
    background_runner(const background_runner&) = delete;
    background_runner& operator=(const background_runner&) = delete;

    void run(std::size_t n, const std::function<void(std::size_t)>& job, steady::duration patience) {
        if (n == 0) return;
        auto b = std::make_shared<batch>(&job, n);
        {
            std::lock_guard<std::mutex> hold(mutex_);
            current_ = b;
        }
        wake_.notify_all();
        {
            std::unique_lock<std::mutex> hold(mutex_);
            done_.wait_for(hold, patience, [&] { return b->done.load() == n; });
        }
        work(*b);  // what the background thread has not taken yet
        std::unique_lock<std::mutex> hold(mutex_);
        done_.wait(hold, [&] { return b->done.load() == n; });
        if (current_ == b) current_.reset();
    }

private:
    struct batch {
        batch(const std::function<void(std::size_t)>* j, std::size_t count) : job(j), n(count) {}
        const std::function<void(std::size_t)>* job;  // called only for a k taken below n, so before run returns
        std::size_t n;
        std::atomic<std::size_t> next{0}, done{0};
    };

    void work(batch& b) {
        for (std::size_t k; (k = b.next.fetch_add(1)) < b.n;) {
            (*b.job)(k);
            if (b.done.fetch_add(1) + 1 == b.n) {
                std::lock_guard<std::mutex> hold(mutex_);
                done_.notify_all();
            }
        }
    }

    void loop() {
#ifdef __linux__
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);  // this thread only (Linux)
#endif
        for (;;) {
            std::shared_ptr<batch> b;
            {
                std::unique_lock<std::mutex> hold(mutex_);
                wake_.wait(hold, [&] { return quit_ || current_; });
                if (quit_) return;
                b.swap(current_);
            }
            work(*b);
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::shared_ptr<batch> current_;
    bool quit_ = false;
    std::thread thread_;  // last: started once the members above exist
};

// What the gateway holds of one stored key.
struct live_key {
    std::string tenant;
    std::string name;
    keyhook::key_limits limits;  // policy, and usage as of the last allowed call
    keyhook::credit_state base;  // the credits as the store has them
    std::optional<keyhook::timestamp> written_last_used;
    std::string stored_key;
    std::optional<std::string> rehash_to;  // the digest under the current pepper, not yet written
    bool queued = false;                   // its id is in gateway_state::changed_
    // K17, --limits shared: a key with a rate limit or credits has them
    // decided by the store; the gateway checks the rest against `checked`
    // (its addresses alone) and never counts its usage itself.
    bool shared = false;
    keyhook::key_limits checked;
};

using key_table = std::map<std::string, live_key, std::less<>>;
using tenant_set = std::set<std::string, std::less<>>;

// The request path (handle) and the store's thread (check, write_back) share
// the index, the key table and the list of changed ids under mutex_. The
// store's thread holds it only for work in memory: file I/O, the file's lock
// and building a new index all happen with mutex_ released, so an
// authorization never waits on the disk or on another writer.
class gateway_state {
public:
    gateway_state(settings s, keyhook::crypto::pepper_set peppers, std::vector<gateway::route> routes,
                  keyhook::permission_policy permissions)
        : settings_(std::move(s)),
          peppers_(std::move(peppers)),
          routes_(std::move(routes)),
          permissions_(std::move(permissions)),
          // A statement gets 2 s: a database that stops answering makes the
          // gateway stale (K17), never stuck past its stale period.
          store_(examples::store::open_key_store(settings_.store, std::chrono::seconds{2})),
          index_(std::make_unique<keyhook::key_index>(keyhook::crypto::openssl_random{})),
          heard_at_(steady::now().time_since_epoch().count()) {
        // A write-back after the gateway's own write or read parses nothing,
        // and formats and checks only the lines of the keys it changes.
        store_->keep_last_version(true);
        // K17: the shared limits' batches go over a connection of their own.
        if (settings_.shared_limits)
            limits_ = std::make_unique<gateway::shared_limits>(
                examples::store::open_key_store(settings_.store, std::chrono::seconds{2}),
                [this](const keyhook::error* failed) {
                    if (!failed) return limits_log_.succeeded("shared limits decided again");
                    limits_log_.failed(failed->what());
                    if (counts_) counts_->store_error(metrics::store::key);  // O4: once per failed batch
                });
    }

    // O4: where decisions and store failures are counted, and the store's
    // outcomes told for /healthz. Set before serving (either may be null).
    void observe(metrics::registry* counts, metrics::health* health) {
        counts_ = counts;
        health_ = health;
    }

    // Answers a call (K16, O2), logs it (O3) and counts it (O4). A key whose
    // limits the store decides (K17) is answered once its batch is decided;
    // every other call at once.
    void handle(examples::http_server::request&& req, const examples::http_server::reply_fn& reply) {
        const auto started = steady::now();
        keyhook::http_headers headers;
        headers.reserve(req.headers.size());
        for (const auto& f : req.headers)
            headers.push_back({f.name, f.value, keyhook::header_name_equal(f.name, keyhook::synthetic_key_header)});
        // The call asked about. A trusted proxy's request without its
        // forwarded headers (once each) is a misconfigured proxy: it is logged
        // and judged as a call no route covers, from the proxy's address (the
        // key's checks answer first, K15; a valid key gets FORBIDDEN), so it
        // too has a code (O2).
        gateway::original_request asked{req.method, req.target, {}};
        const auto peer = keyhook::try_parse_ip_address(req.peer_address);
        bool routable = false;
        if (peer) {
            auto original =
                gateway::read_original(settings_.proxy, headers, req.method, req.target, *peer, settings_.trusted);
            if (original) {
                asked = std::move(*original);
                routable = true;
            } else {
                asked.caller = *peer;
                std::lock_guard<std::mutex> hold(proxy_log_mutex_);
                proxy_log_.failed(original.error().path + ": " + original.error().message);
            }
        }
        const auto* route = routable ? gateway::match_route(routes_, asked.method, asked.uri) : nullptr;
        const auto& family = route ? route->family : gateway::no_route_family();
        const keyhook::resource_ref resource = route ? route->resource.ref() : keyhook::resource_ref::all();
        const auto access = route ? route->access : keyhook::access_level::read;

        const auto tenant = keyhook::find_header(headers, keyhook::tenant_name_header);
        // The peer's address is always an IP address; were it not, no call could be judged.
        auto d = peer ? decide(headers, family, resource, access, asked.caller, tenant ? &tenant->value : nullptr)
                      : decision{gateway::unavailable_answer(), std::nullopt, false, now(), std::nullopt};
        seen_call seen;
        seen.started = started;
        if (settings_.log_requests && standard_error) {
            if (tenant) seen.tenant = tenant->value;
            seen.method = std::move(asked.method);
            const auto path = gateway::plain_path(asked.uri);
            seen.path = path ? *path : asked.uri.substr(0, asked.uri.find_first_of("?#"));
            // The key the call presented is never logged, wherever the client also put it.
            for (const auto& h : headers)
                if (h.sensitive) seen.secrets.push_back(h.value);
        }
        if (!d.pending) return reply(respond(d, seen));
        auto call = std::move(d.pending->call);
        limits_->ask(std::move(call), [this, d = std::move(d), seen = std::move(seen),
                                       reply](const keyhook::result<key_store::limits_outcome>& r) mutable {
            settle_limits(d, r);
            reply(respond(d, seen));
        });
    }

    // Reads the store again when its file changed (or always, with `reload`)
    // and swaps the new index in. A store that cannot be opened or read is a
    // failure (logged at most once a second); one that can is "heard from"
    // (K17). False on a failure.
    bool check(bool reload) {
        auto stamp = store_->current_stamp();
        if (stamp && *stamp == seen_ && !reload && loaded_) {
            heard();
            return true;
        }
        if (!stamp) return read_failed(stamp.error());
        auto snap = store_->read_snapshot();
        if (!snap) return read_failed(snap.error());
        install(build(snap->entries), {}, {});
        seen_ = snap->stamp;
        heard();
        return true;
    }

    // Writes back the usage changed since the last write-back (K14's credits,
    // K15's lastUsedAt, K11's rehash), merged under the store's lock. With
    // `wait` false (the periodic write-back) a lock held by another writer
    // defers it to the next call; with `wait` true (shutdown) it waits.
    // True when nothing is left unwritten.
    bool write_back(bool wait) {
        {
            std::lock_guard<std::mutex> hold(mutex_);
            if (changed_.empty()) return true;
        }
        if (store_->shared()) return write_back_rows();
        // The changes are taken once the store's lock is held (a deferred
        // write-back copies nothing).
        std::vector<key_store::write_back> changes;
        std::vector<key_store::entry> merged;  // filled only when the index is built again
        std::vector<merge_result> results;
        bool external = false, rehashed = false, missing = false;
        const auto merge = [&](std::vector<key_store::entry>& entries, const key_store::store_version& before) {
            // A store that is gone is not an empty one: nothing is written, and
            // the gateway keeps what it holds (K17's stale period).
            missing = !before.exists;
            if (missing) return std::vector<std::size_t>{};
            external = before != seen_;
            changes = take_changes();
            results.assign(changes.size(), merge_result{});
            auto changed = key_store::merge_write_backs(entries, changes);
            std::unordered_map<std::string_view, const key_store::entry*> by_id;
            by_id.reserve(entries.size());
            for (const auto& e : entries) by_id.emplace(e.record.id.str(), &e);
            for (std::size_t i = 0; i < changes.size(); ++i) {
                const auto found = by_id.find(changes[i].id.str());
                if (found == by_id.end()) continue;
                const auto& e = *found->second;
                results[i] = merge_result{true, e.usage.credits, e.record.last_used_at, e.stored_key};
                rehashed = rehashed || (changes[i].rehash_to && e.stored_key == *changes[i].rehash_to);
            }
            if (external || rehashed || !loaded_) merged = entries;
            return changed;
        };
        // Only the changed entries' lines are formatted and checked; the
        // others are written as read (update_usage; K18 still holds). The
        // changed lines are done at a lower priority for at most half of
        // K17's stale period since the store was last heard from (and at most
        // a second), then at the store thread's own: the lower priority never
        // lets the gateway go stale. At shutdown, no waiting.
        const auto since_heard =
            steady::now() - steady::time_point(steady::duration(heard_at_.load(std::memory_order_relaxed)));
        const auto patience =
            wait ? steady::duration::zero()
                 : std::clamp<steady::duration>(
                       std::chrono::duration_cast<steady::duration>(settings_.stale_for) / 2 - since_heard,
                       steady::duration::zero(), std::chrono::duration_cast<steady::duration>(std::chrono::seconds{1}));
        const auto run = [this, patience](std::size_t n, const std::function<void(std::size_t)>& job) {
            runner_.run(n, job, patience);
        };
        std::optional<key_store::store_version> stamp;
        if (wait) {
            auto r = store_->update_usage(merge, run);
            if (!r) return write_failed(changes, r.error().what());
            stamp = *r;
        } else {
            auto r = store_->try_update_usage(merge, run);
            if (!r) return write_failed(changes, r.error().what());
            if (!*r) return write_failed(changes, "the store is locked by another writer; trying again", false);
            stamp = **r;
        }
        if (missing) return write_failed(changes, store_->path() + ": cannot open: the store is missing");
        if (changes.empty()) return true;
        std::optional<loaded> fresh;
        if (external || rehashed || !loaded_) fresh = build(merged);
        install(std::move(fresh), changes, results);
        seen_ = *stamp;
        heard();
        write_log_.succeeded("usage written back");
        return true;
    }

    // How many keys the gateway holds.
    std::size_t key_count() {
        std::lock_guard<std::mutex> hold(mutex_);
        return keys_.size();
    }

    // A store many gateways share (PostgreSQL): the changes go row by row
    // (key_store::write_usage: the credits spent are subtracted, so the
    // gateways' spending adds up), in one short transaction that waits for
    // no key_admin; then they settle as a file's write-back does (install).
    bool write_back_rows() {
        auto changes = take_changes();
        if (changes.empty()) return true;
        auto written = store_->write_usage(changes);
        if (!written) return write_failed(changes, written.error().what());
        std::vector<merge_result> results;
        results.reserve(written->size());
        for (auto& w : *written)
            results.push_back(merge_result{w.found, w.credits, w.last_used_at, std::move(w.stored_key)});
        install(std::nullopt, changes, results);
        heard();
        write_log_.succeeded("usage written back");
        return true;
    }

    // K17: a store that announces its changes (a database): waits at most
    // `max` for one; true when the store may have changed (check it now).
    bool wait_for_change(std::chrono::milliseconds max) { return store_->wait_for_change(max); }
    bool store_announces() const { return store_->shared(); }

    // How many of the store's keys the last read left out, and why the first was.
    std::pair<std::size_t, std::string> left_out() {
        std::lock_guard<std::mutex> hold(mutex_);
        return {left_out_, first_left_out_};
    }

    // Whether the last failed read was the file system's (O1: exit 3 at
    // start), not the store's content (exit 1).
    bool last_read_failure_was_platform() const { return last_read_failure_was_platform_; }

    // K17: the stale period is over and a refusal starts (logged once, from the store's thread).
    void note_staleness() {
        if (stale() && !stale_logged_) {
            stale_logged_ = true;
            log("stale: the store has not been read for more than " + seconds_text(settings_.stale_for) +
                "; every call is refused (503) until it reads again");
        }
    }

private:
    struct loaded {
        std::unique_ptr<keyhook::key_index> index;
        key_table keys;
        tenant_set tenants;          // the tenants of `keys`
        std::size_t left_out = 0;    // the store's keys the gateway cannot serve (a pepper it lacks, ...)
        std::string first_left_out;  // why the first of them was left out
    };
    struct merge_result {
        bool found = false;
        keyhook::credit_state credits;
        std::optional<keyhook::timestamp> last_used_at;
        std::string stored_key;
    };

    static bool unsaved(const live_key& k) {
        return k.limits.usage.credits != k.base || k.limits.usage.last_used_at != k.written_last_used ||
               k.rehash_to.has_value();
    }

    bool stale() const {
        const auto heard = steady::time_point(steady::duration(heard_at_.load(std::memory_order_relaxed)));
        return steady::now() - heard > settings_.stale_for;
    }

    void heard() {
        heard_at_.store(steady::now().time_since_epoch().count(), std::memory_order_relaxed);
        if (health_) health_->store_ok();  // O4
        read_log_.succeeded("the store reads again");
        if (stale_logged_) log("no longer stale: calls are answered again");
        stale_logged_ = false;
    }

    bool read_failed(const keyhook::error& e) {
        // O4: counted; /healthz turns 503 when stale() does, its period from the last time the store was heard.
        if (counts_) counts_->store_error(metrics::store::key);
        if (health_)
            health_->store_failed(steady::time_point(steady::duration(heard_at_.load(std::memory_order_relaxed))));
        last_read_failure_was_platform_ = key_store::is_platform_failure(e);
        read_log_.failed(e.what());
        note_staleness();
        return false;
    }

    // `error`: false for a write-back deferred by another writer's lock (not a store failure, O4).
    bool write_failed(const std::vector<key_store::write_back>& changes, const std::string& why, bool error = true) {
        if (error && counts_) counts_->store_error(metrics::store::key);
        {
            std::lock_guard<std::mutex> hold(mutex_);
            for (const auto& c : changes) queue(c.id.str());  // written with the next write-back
        }
        write_log_.failed(why);
        return false;
    }

    // Under mutex_: marks a key's usage as not yet written.
    void queue(std::string_view id) {
        const auto it = keys_.find(id);
        if (it == keys_.end() || it->second.queued || !unsaved(it->second)) return;
        it->second.queued = true;
        changed_.emplace_back(id);
    }

    // An answer and what its log line names (O3): the key's id (never on
    // NOT_FOUND, which must not tell a key of another tenant from an unknown
    // one, nor on UNAVAILABLE) and whether the store knows the tenant.
    struct decision {
        gateway::answer answer;
        std::optional<std::string> key_id;
        bool tenant_known = false;
        keyhook::timestamp at{};
        // K17: a call whose other checks passed, its limits still to decide
        // (answer unset until then), and whom the answer names.
        struct pending_limits {
            key_store::limits_call call;
            std::string name, tenant;
        };
        std::optional<pending_limits> pending;
    };

    // What a request's log line says of the call besides its decision (O3),
    // owned: it outlives the request when the store decides the limits.
    struct seen_call {
        steady::time_point started;
        std::optional<std::string> tenant;
        std::string method, path;
        std::vector<std::string> secrets;
    };

    // The response to a decided call; counted (O4) and logged (O3).
    examples::http_server::response respond(decision& d, const seen_call& seen) {
        namespace hs = examples::http_server;
        const auto took = steady::now() - seen.started;
        if (counts_) counts_->gateway_decision(static_cast<metrics::gateway_code>(d.answer.value), took);  // O4
        hs::response out;
        out.status = d.answer.status;
        for (auto& h : d.answer.headers) out.headers.push_back({std::move(h.name), std::move(h.value)});
        out.body = std::move(d.answer.body);
        if (settings_.log_requests && standard_error) {
            examples::request_log::request_line line;
            line.time = d.at;
            if (seen.tenant) line.tenant = std::string_view(*seen.tenant);
            line.tenant_known = d.tenant_known;
            if (d.key_id) line.key_id = std::string_view(*d.key_id);
            line.method = seen.method;
            line.path = seen.path;
            line.code = gateway::row_of(d.answer.value).name;
            line.latency = took;
            for (const auto& secret : seen.secrets) line.secrets.push_back(secret);
            standard_error->write(examples::request_log::format_request_line(line));
        }
        return out;
    }

    // K17: the answer to a call once the store decided its limits. A store
    // that could not decide (the database unreachable, or not within its
    // statement deadline) is UNAVAILABLE, 503: the limits are never guessed.
    // A key deleted meanwhile is NOT_FOUND, as any unknown key.
    void settle_limits(decision& d, const keyhook::result<key_store::limits_outcome>& r) {
        const auto& p = *d.pending;
        if (!r) {
            d.answer = gateway::unavailable_answer();
            d.key_id.reset();
            return;
        }
        if (!r->found) {
            d.answer = gateway::answer_of(gateway::code::not_found);
            d.key_id.reset();
            return;
        }
        const gateway::key_identity who{p.name, p.tenant};
        d.answer = gateway::answer_for_limits(r->decision, d.key_id ? *d.key_id : std::string(), &who, r->at);
    }

    decision decide(const keyhook::http_headers& headers, const keyhook::api_family& family,
                    keyhook::resource_ref resource, keyhook::access_level access, const keyhook::ip_address& caller,
                    const std::string* tenant) {
        std::lock_guard<std::mutex> hold(mutex_);
        const auto at = now();
        const bool tenant_known = tenant && tenants_.count(*tenant) > 0;
        // K17: past the stale period without a read of the store, every call is refused.
        if (stale()) return decision{gateway::unavailable_answer(), std::nullopt, tenant_known, at, std::nullopt};
        const auto find = [this](std::string_view id) -> const keyhook::key_limits* {
            const auto it = keys_.find(id);
            if (it == keys_.end()) return nullptr;
            return it->second.shared ? &it->second.checked : &it->second.limits;  // K17: the rest in the store
        };
        const auto a =
            keyhook::authorize(*index_, headers, family, resource, access, at, keyhook::call_context{caller, 1}, find);
        const auto found = a.key() ? keys_.find(a.key()->str()) : keys_.end();
        if (a.allowed()) {
            const auto it = found;
            if (it != keys_.end()) {
                if (a.usage() && !it->second.shared) it->second.limits.usage = *a.usage();
                if (a.digest_outdated()) {
                    std::string_view presented;
                    for (const auto& h : headers)
                        if (keyhook::header_name_equal(h.name, keyhook::synthetic_key_header)) presented = h.value;
                    const auto rehash = keyhook::crypto::try_rehash_answer(peppers_, a, presented);
                    if (rehash && *rehash) {
                        if (auto text = (*rehash)->try_store_form()) it->second.rehash_to = std::move(*text);
                    }
                }
                // A shared key's usage is the store's; only a rehash is left to write.
                if (!it->second.queued && (!it->second.shared || it->second.rehash_to)) {
                    it->second.queued = true;
                    changed_.push_back(it->first);
                }
            }
        }
        if (a.allowed() && found != keys_.end() && found->second.shared) {
            decision d{gateway::answer{}, a.key()->str(), tenant_known, at, std::nullopt};
            d.pending = decision::pending_limits{key_store::limits_call{found->first, found->second.limits.policy, 1},
                                                 found->second.name, found->second.tenant};
            return d;
        }
        gateway::key_identity who;
        if (found != keys_.end()) who = {found->second.name, found->second.tenant};
        decision d{gateway::answer_for(a, at, found != keys_.end() ? &who : nullptr), std::nullopt, tenant_known, at,
                   std::nullopt};
        if (d.answer.value != gateway::code::not_found && a.key()) d.key_id = a.key()->str();
        return d;
    }

    // The usage to write, as it is now: the list is taken in one step, the
    // keys copied under mutex_ a batch at a time (a call waits for one batch
    // at most). A key stays marked queued until its batch is copied, so a
    // call made meanwhile is in the copy, or puts the key on the new list.
    std::vector<key_store::write_back> take_changes() {
        std::vector<std::string> ids;
        {
            std::lock_guard<std::mutex> hold(mutex_);
            ids.swap(changed_);
        }
        std::vector<key_store::write_back> changes;
        changes.reserve(ids.size());
        for (std::size_t from = 0; from < ids.size(); from += batch) {
            std::lock_guard<std::mutex> hold(mutex_);
            for (std::size_t i = from; i < std::min(ids.size(), from + batch); ++i) take_one(ids[i], changes);
        }
        return changes;
    }

    // Under mutex_.
    void take_one(const std::string& id, std::vector<key_store::write_back>& changes) {
        {
            const auto it = keys_.find(id);
            if (it == keys_.end()) return;
            auto& k = it->second;
            k.queued = false;
            if (!unsaved(k)) return;
            key_store::write_back w;
            w.id = keyhook::key_id(id);
            w.base = k.base;
            w.credits = k.limits.usage.credits;
            w.spent = key_store::credits_spent(k.limits.policy, k.base, w.credits);
            w.last_used_at = k.limits.usage.last_used_at;
            if (k.rehash_to) {
                w.rehash_from = k.stored_key;
                w.rehash_to = k.rehash_to;
            }
            changes.push_back(std::move(w));
        }
    }

    static constexpr std::size_t batch = 256;
    static constexpr std::size_t shown_left_out = 3;  // "key ID left out" lines per read; the rest counted

    // Off mutex_: a new index and key table from the store's entries, usage
    // as the store has it (install carries the gateway's over).
    loaded build(const std::vector<key_store::entry>& entries) const {
        loaded out{std::make_unique<keyhook::key_index>(keyhook::crypto::openssl_random{}), {}, {}, 0, {}};
        for (const auto& e : entries) {
            const auto digest = keyhook::crypto::try_parse_stored_digest(e.stored_key);
            if (!digest) continue;  // the store's reader checked it already
            const auto added =
                keyhook::crypto::try_add_stored(*out.index, peppers_, e.tenant, e.record, *digest, permissions_);
            if (!added) {
                // O3: a few lines, then a count; a store of a million keys under
                // another pepper must not flood the log.
                if (out.left_out < shown_left_out)
                    log("key " + e.record.id.str() + " left out: " + added.error().what());
                if (out.left_out == 0) out.first_left_out = added.error().what();
                ++out.left_out;
                continue;
            }
            out.tenants.insert(e.tenant);
            live_key k;
            k.tenant = e.tenant;
            k.name = e.record.name;
            k.limits = keyhook::key_limits{e.policy, e.usage};
            k.base = e.usage.credits;
            k.written_last_used = e.usage.last_used_at;
            k.stored_key = e.stored_key;
            k.shared = settings_.shared_limits && (e.policy.rate || e.policy.limited_credits);
            if (k.shared) k.checked.policy.addresses = e.policy.addresses;
            out.keys.emplace(e.record.id.str(), std::move(k));
        }
        return out;
    }

    // Under mutex_. First what a write-back wrote (`changes`, `results`: the
    // store now holds those credits, that lastUsedAt, that stored key; calls
    // made while it was written stay unwritten and are queued again), then,
    // with a new table, the gateway's usage carried over by id: rate states
    // always, usage not yet written unless the store's credits changed under
    // it (key_admin's value wins). Every use is in exactly one place: written
    // (base moved up to it) or still queued, never both, never neither.
    void install(std::optional<loaded> fresh, const std::vector<key_store::write_back>& changes,
                 const std::vector<merge_result>& results) {
        loaded old;  // the replaced table is freed after mutex_ is released
        for (std::size_t from = 0; from < changes.size(); from += batch) {
            std::lock_guard<std::mutex> hold(mutex_);
            for (std::size_t i = from; i < std::min(changes.size(), from + batch); ++i) {
                const auto it = keys_.find(changes[i].id.str());
                if (it == keys_.end() || !results[i].found) continue;
                auto& k = it->second;
                const auto& r = results[i];
                if (r.credits == changes[i].credits) k.base = r.credits;
                if (r.last_used_at) k.written_last_used = r.last_used_at;
                if (changes[i].rehash_to && r.stored_key == *changes[i].rehash_to) {
                    k.stored_key = r.stored_key;
                    if (k.rehash_to == changes[i].rehash_to) k.rehash_to.reset();
                }
                if (!fresh) queue(it->first);
            }
        }
        {
            std::lock_guard<std::mutex> hold(mutex_);
            if (fresh) {
                std::vector<std::string> changed;
                for (auto& [id, k] : fresh->keys) {
                    const auto o = keys_.find(id);
                    if (o == keys_.end()) continue;
                    const auto& was = o->second;
                    k.limits.usage.rate = was.limits.usage.rate;
                    // Credits not yet written: kept where the store's are
                    // as they were; where they moved within the same refill
                    // period (other gateways' spending on a shared store),
                    // what this gateway spent comes off the store's; a later
                    // refill, or credits key_admin set, win.
                    const auto& held = was.limits.usage.credits;
                    if (held != was.base && k.base == was.base) {
                        k.limits.usage.credits = held;
                    } else if (held != was.base && k.base.last_refill == held.last_refill) {
                        const auto spent = key_store::credits_spent(was.limits.policy, was.base, held);
                        k.limits.usage.credits = keyhook::credit_state{
                            k.base.remaining > spent ? k.base.remaining - spent : 0, k.base.last_refill};
                    }
                    if (was.limits.usage.last_used_at &&
                        (!k.limits.usage.last_used_at || *k.limits.usage.last_used_at < *was.limits.usage.last_used_at))
                        k.limits.usage.last_used_at = was.limits.usage.last_used_at;
                    if (was.rehash_to && was.stored_key == k.stored_key) k.rehash_to = was.rehash_to;
                    if (unsaved(k)) {
                        k.queued = true;
                        changed.push_back(id);
                    }
                }
                old.index = std::move(index_);
                index_ = std::move(fresh->index);
                old.keys.swap(keys_);
                keys_.swap(fresh->keys);
                old.tenants.swap(tenants_);
                tenants_.swap(fresh->tenants);
                left_out_ = fresh->left_out;
                first_left_out_ = fresh->first_left_out;
                changed_ = std::move(changed);
            }
        }
        if (fresh) {
            const bool first = !loaded_;
            loaded_ = true;
            const std::size_t left_out = fresh->left_out;
            if (left_out > shown_left_out)
                log("... and " + std::to_string(left_out - shown_left_out) + " more keys left out");
            log(std::string(first ? "store read: " : "store read again: ") + std::to_string(key_count()) + " keys" +
                (left_out ? " served, " + std::to_string(left_out) + " left out" : std::string()));
        }
    }

    settings settings_;
    keyhook::crypto::pepper_set peppers_;
    std::vector<gateway::route> routes_;
    keyhook::permission_policy permissions_;
    std::unique_ptr<key_store::key_store> store_;
    std::mutex mutex_;
    // Under mutex_:
    std::unique_ptr<keyhook::key_index> index_;
    key_table keys_;
    tenant_set tenants_;                // the tenants keys_ has (O3: only these are logged by name)
    std::size_t left_out_ = 0;          // the store's keys the last read could not serve
    std::string first_left_out_;        // why the first of them was left out
    std::vector<std::string> changed_;  // ids whose usage is not yet written, each once
    // The store's thread alone:
    key_store::store_version seen_;
    bool loaded_ = false;
    bool stale_logged_ = false;
    bool last_read_failure_was_platform_ = false;
    failure_log read_log_{"the store could not be read"};
    failure_log write_log_{"usage not written back"};
    // The request threads': a trusted proxy's request without its forwarded headers.
    std::mutex proxy_log_mutex_;
    failure_log proxy_log_{"a request from a trusted proxy lacks its forwarded headers"};
    // Both: when the store was last read or written (steady clock ticks).
    std::atomic<steady::rep> heard_at_;
    // O4, set before serving: the request threads count decisions, the store's thread failures.
    metrics::registry* counts_ = nullptr;
    metrics::health* health_ = nullptr;
    background_runner runner_;  // the store thread's write-back jobs
    // K17: the store's decisions on shared limits (the batch thread alone logs their failures).
    failure_log limits_log_{"shared limits could not be decided; calls with them answered UNAVAILABLE"};
    // Last: destroyed first, so no batch's answer outlives the members it uses.
    std::unique_ptr<gateway::shared_limits> limits_;
};

std::string read_file(const std::string& path) {
    std::string why;
    auto text = examples::cli::read_whole_file(path, why);
    if (!text) throw keyhook::error{keyhook::errc::invalid_value, path, "cannot read: " + why};
    return std::move(*text);
}

}  // namespace

int main(int argc, char** argv) {
    const auto parsed = parse_arguments(argc, argv);
    if (const int* status = std::get_if<int>(&parsed)) return *status;
    const auto& s = std::get<settings>(parsed);
    // Standard error's writer (O3) until main returns; a failure closes it
    // before it writes to std::cerr itself, so no two writers interleave.
    examples::request_log::line_writer lines("key_gateway");
    standard_error = &lines;
    const auto close_lines = [&lines] {
        standard_error = nullptr;
        lines.close(std::chrono::seconds{2});
    };
    try {
        // KEYHOOK_PEPPERS is configuration, as the command line is: a usage error (O1).
        const char* pepper_text = std::getenv("KEYHOOK_PEPPERS");
        auto peppers = key_store::parse_peppers(pepper_text ? pepper_text : "");
        if (!peppers) {
            close_lines();
            return cli::usage_failure(program,
                                      keyhook::escape_text(peppers.error().path + ": " + peppers.error().message));
        }
        // The routes file is input: missing or malformed, exit 1.
        const auto routes_text = read_file(s.routes);
        auto routes = gateway::parse_routes(routes_text);
        if (!routes)
            throw keyhook::error{routes.error().code, s.routes + ": " + routes.error().path, routes.error().message};
        auto groups = gateway::parse_groups(routes_text);
        if (!groups)
            throw keyhook::error{groups.error().code, s.routes + ": " + groups.error().path, groups.error().message};

        // The signals are taken by this thread alone (sigtimedwait below);
        // the server's threads inherit the mask.
        sigset_t signals;
        sigemptyset(&signals);
        sigaddset(&signals, SIGINT);
        sigaddset(&signals, SIGTERM);
        sigaddset(&signals, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &signals, nullptr);

        gateway_state state(s, std::move(*peppers), std::move(*routes), std::move(*groups));
        // O4: recorded only when --metrics-listen serves them.
        metrics::registry counts(metrics::program::key_gateway);
        metrics::health health(s.stale_for);
        if (s.metrics) state.observe(&counts, &health);
        // A store that does not read is not served: 3 when its file cannot
        // be read, 1 when what it holds is refused.
        if (!state.check(true)) {
            close_lines();
            return state.last_read_failure_was_platform() ? cli::exit_failure : cli::exit_bad_input;
        }
        // Keys the store holds but none can be served (a pepper KEYHOOK_PEPPERS
        // lacks, most likely): the store's content refused at start (O1: exit 1).
        const auto [left_out, why] = state.left_out();
        if (state.key_count() == 0 && left_out > 0) {
            log("the store's " + std::to_string(left_out) + " keys are all left out, none can be served (the first: " +
                why + "); is KEYHOOK_PEPPERS the one key_admin wrote them with?");
            close_lines();
            return cli::exit_bad_input;
        }
        if (left_out > 0)
            log("warning: " + std::to_string(left_out) + " of the store's keys are left out (the first: " + why +
                "): calls with them are answered NOT_FOUND (401)");
        // Served, but every call would be NOT_FOUND: most likely the wrong file.
        if (state.key_count() == 0)
            log("warning: the store holds no keys: every call is answered NOT_FOUND (401) until key_admin adds one");
        // K17: one gateway counting alone lets a key past the limits the shared ones hold.
        if (s.local_on_database)
            log("warning: --limits local on a shared store: this gateway counts rate limits and credits alone, "
                "so the keys' limits are not exact across the gateways (use --limits shared on every gateway)");

        examples::http_server::options o;
        o.threads = 2;
        o.max_body_bytes = 4096;  // an authorization request has no body to speak of
        examples::http_server::server server(
            o, [&state](examples::http_server::request&& r, examples::http_server::reply_fn reply) {
                state.handle(std::move(r), reply);
            });
        std::string error;
        metrics::listener metrics_listener(counts, health);
        if (s.metrics) {
            const auto metrics_port = metrics_listener.start(*s.metrics, error);
            if (!metrics_port) {
                log("cannot listen on " + keyhook::quoted_input(s.metrics_text) + " (--metrics-listen): " + error);
                close_lines();
                return cli::exit_failure;
            }
            std::cout << "key_gateway: metrics on " << s.metrics->host << ":" << *metrics_port << std::endl;
        }
        const auto port = server.listen(s.host, s.port, error);
        if (!port) {
            log("cannot listen: " + error);
            close_lines();
            return cli::exit_failure;
        }
        std::cout << "key_gateway: listening on " << s.host << ":" << *port << std::endl;
        std::thread serving([&server] { server.run(); });

        // This thread is the store's: it checks the store four times a
        // second (a database's changes also wake it at once: it waits on
        // their announcements, then looks for a signal), writes usage back at
        // most once a second (a write the store's lock defers is tried again
        // at the next check), and takes the signals. The server's threads
        // never touch the store.
        auto last_write = steady::now();
        const bool announced = state.store_announces();
        for (;;) {
            const timespec quarter{0, 250 * 1000 * 1000}, none{0, 0};
            if (announced) state.wait_for_change(std::chrono::milliseconds{250});
            const int sig = sigtimedwait(&signals, nullptr, announced ? &none : &quarter);
            if (sig == SIGINT || sig == SIGTERM) {
                health.shutting_down();  // O4: /healthz says so until the metrics listener stops
                break;
            }
            const auto t = steady::now();
            if (t - last_write >= std::chrono::seconds{1} && state.write_back(false)) last_write = t;
            state.check(sig == SIGHUP);
            state.note_staleness();
        }
        server.stop();
        serving.join();
        // The last write-back may meet a database connection in its pause
        // after a failure (a restart just before the stop): it is tried
        // again, four times a second, for at most 5 s, before exit 3.
        bool written = state.write_back(true);
        for (const auto until = steady::now() + std::chrono::seconds{5}; !written && steady::now() < until;) {
            std::this_thread::sleep_for(std::chrono::milliseconds{250});
            written = state.write_back(true);
        }
        metrics_listener.stop();
        log(written ? "stopped; usage written back" : "stopped; the usage could not be written back");
        close_lines();
        return written ? cli::exit_ok : cli::exit_failure;
    } catch (const keyhook::error& e) {
        close_lines();
        std::cerr << "key_gateway: " << e << '\n';
        return key_store::is_platform_failure(e) ? cli::exit_failure : cli::exit_bad_input;
    } catch (const std::exception& e) {
        close_lines();
        std::cerr << "key_gateway: " << keyhook::escape_text(e.what()) << '\n';
        return cli::exit_failure;
    }
}
