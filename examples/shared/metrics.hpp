// Metrics and health for the programs that serve or work a store (rule O4):
// key_gateway, webhook_receiver --listen and webhook_deliver --work. Each
// takes `--metrics-listen HOST:PORT`, a listen address of its own (never the
// one its clients use), answering
//
//   GET /metrics   the program's metrics in Prometheus's text format (0.0.4)
//   GET /healthz   200 {"status":"ok"} when the program would serve now;
//                  503 {"status":"unavailable","reason":"..."} when its store
//                  has failed (unreadable or unwritable) for longer than the
//                  stale period (5 s, as K17's) or it is shutting down
//   anything else  404 (405 for a method other than GET)
//
// Labels take values from closed sets only (the enums below): no metric
// label and no health reason carries a tenant, key, webhook name, URL or
// store address (O4). docs/embedding.md "Metrics and health (O4)" lists every
// metric.
//
// The registry and its text form are prometheus-cpp's core library (Debian
// prometheus-cpp-dev; its pull exposer, civetweb, is not used): the listener
// is the programs' own HTTP server (http_server.hpp). A build without
// prometheus-cpp or Boost.Beast has the same interface: recording does
// nothing, built() is false, and the programs refuse --metrics-listen with
// not_built_message() (exit 2, O1).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace examples::metrics {

// True when this build serves metrics (prometheus-cpp and Boost.Beast found).
[[nodiscard]] bool built() noexcept;
// Why --metrics-listen is refused in a build without them, for a usage error.
[[nodiscard]] std::string not_built_message();

// The program a registry is for: each exposes its own families only.
enum class program { key_gateway, webhook_receiver, webhook_deliver };

// keyhook_store_errors_total{store}: which store failed. The gateway's key
// store, the deliverer's delivery store, the receiver's replay store.
enum class store { key, delivery, replay };
inline constexpr std::array<std::string_view, 3> store_names{"key", "delivery", "replay"};

// keyhook_receiver_requests_total{result}: how webhook_receiver --listen
// answered a request, the words of its answers (serve.cpp).
enum class receiver_result {
    accepted,       // 200, processed: its line written
    replay,         // 200, accepted before: not processed again (H9)
    pending,        // 503, its webhook-id is being processed elsewhere (B6)
    full,           // 503, the in-memory replay table is full
    unavailable,    // 503, the replay store could not answer
    unwritten,      // 503, the line could not be written to standard output
    bad_key,        // 401 (or 400): no key, a wrong or an ambiguous one (H7)
    bad_signature,  // 401: a missing, stale or wrong signature (B1)
    bad_body,       // 400: not a notification, or nested too deep
    method,         // 405: not POST
    encoding,       // 415: a Content-Encoding other than identity
    length,         // 411: a POST without Content-Length
    framing,        // 400 or 411 from the server: framing RFC 9112 refuses (H13)
    too_large,      // 413 or 431: a body or header section over its limit (H13)
    timeout,        // 408: the request did not arrive whole in time (H13)
    overloaded,     // 503: past the connection limit (H13)
    error,          // 500: the request could not be handled
};
inline constexpr std::array<std::string_view, 17> receiver_result_names{
    "accepted", "replay",   "pending", "full",    "unavailable", "unwritten", "bad_key",    "bad_signature", "bad_body",
    "method",   "encoding", "length",  "framing", "too_large",   "timeout",   "overloaded", "error"};

// keyhook_gateway_decisions_total{code}: the gateway's answer codes (O2).
enum class gateway_code {
    VALID,
    NOT_FOUND,
    REVOKED,
    EXPIRED,
    NOT_YET_ACTIVE,
    ADDRESS_NOT_ALLOWED,
    FORBIDDEN,
    RATE_LIMITED,
    USAGE_EXCEEDED,
    UNAVAILABLE,
};
inline constexpr std::array<std::string_view, 10> gateway_code_names{
    "VALID",     "NOT_FOUND",    "REVOKED",        "EXPIRED",    "NOT_YET_ACTIVE", "ADDRESS_NOT_ALLOWED",
    "FORBIDDEN", "RATE_LIMITED", "USAGE_EXCEEDED", "UNAVAILABLE"};

// keyhook_delivery_attempts_total{outcome}: what followed an attempt, the
// words of webhook_deliver's attempt lines ("outcome").
enum class delivery_outcome { delivered, retry, gave_up, disabled };
inline constexpr std::array<std::string_view, 4> delivery_outcome_names{"delivered", "retry", "gave_up", "disabled"};

// The histograms' upper bounds, in seconds. A decision is a lookup in
// memory: tenths of a millisecond to a second (a store's lock held). An
// attempt is an HTTP request: milliseconds to the client's timeout.
inline constexpr std::array<double, 13> decision_buckets{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                         0.025,  0.05,    0.1,    0.25,  0.5,    1.0};
inline constexpr std::array<double, 12> attempt_buckets{0.005, 0.01, 0.025, 0.05, 0.1,  0.25,
                                                        0.5,   1.0,  2.5,   5.0,  10.0, 30.0};

// One program's metrics. Every series of its families exists from the start
// (at 0), one for each value of each closed label set, so a query sees them
// before the first event. Recording is thread-safe and takes no lock but
// the histograms' (prometheus-cpp's). Recording into a family the program
// does not expose does nothing.
class registry {
public:
    explicit registry(program p);
    ~registry();
    registry(const registry&) = delete;
    registry& operator=(const registry&) = delete;

    [[nodiscard]] program for_program() const noexcept { return program_; }

    void store_error(store s);
    void receiver_request(receiver_result r);
    void gateway_decision(gateway_code c, std::chrono::steady_clock::duration took);
    void delivery_attempt(delivery_outcome o, std::chrono::steady_clock::duration took);
    // Store-wide gauges: every worker on a store reports the same count, so
    // they are aggregated with max, not sum.
    void deliveries_pending(double n);
    void endpoints_disabled(double n);

    // The Prometheus text format (version 0.0.4) of every family.
    [[nodiscard]] std::string text() const;

    struct impl;

private:
    program program_;
    std::unique_ptr<impl> impl_;
};

// /healthz. A program with a store tells its outcomes (store_ok,
// store_failed); it is unhealthy once its store has failed without a
// success for longer than the stale period. When the store has not been
// heard from for a second (nothing used it: no traffic), the check asks the
// probe, when one is set, so a store that recovered, or failed, while idle
// is seen; probes run one at a time, at most once a second. Without a store
// (no outcome ever told, no probe) the program is healthy until it shuts
// down.
class health {
public:
    // K17's stale period, the policy value.
    static constexpr std::chrono::milliseconds default_stale_period{5000};

    explicit health(std::chrono::milliseconds stale_period = default_stale_period);

    void store_ok() noexcept;
    void store_failed() noexcept;
    // True when the store answered. Called by check() (on the listener's thread).
    void set_probe(std::function<bool()> probe);
    void shutting_down() noexcept;

    struct answer {
        bool ok = true;
        std::string reason;  // one line, fixed text: never an address, tenant or key
    };
    [[nodiscard]] answer check();
    // 200 {"status":"ok"} or 503 {"status":"unavailable","reason":"..."}, one line.
    [[nodiscard]] static std::string body(const answer& a);

private:
    using clock = std::chrono::steady_clock;
    static std::int64_t ticks(clock::time_point t) noexcept { return t.time_since_epoch().count(); }

    std::chrono::milliseconds stale_period_;
    std::atomic<std::int64_t> failing_since_{0};  // clock ticks; 0: the last outcome was a success
    std::atomic<std::int64_t> last_heard_{0};     // clock ticks of the last outcome; 0: none yet
    std::atomic<bool> shutting_down_{false};
    std::mutex probe_mutex_;
    std::function<bool()> probe_;
    clock::time_point last_probe_{};
};

// "HOST:PORT" or "[v6]:PORT" (the form every --listen option takes).
struct listen_address {
    std::string host;
    unsigned short port = 0;
};
[[nodiscard]] std::optional<listen_address> parse_listen_address(std::string_view text);

// What the listener answers a request (the table at the top of this file).
struct reply {
    int status = 200;
    std::string content_type;
    std::string body;
};
[[nodiscard]] reply answer(const registry& r, health& h, std::string_view method, std::string_view target);

// The separate listener of /metrics and /healthz, on a thread of its own.
class listener {
public:
    listener(const registry& r, health& h);
    ~listener();  // stops
    listener(const listener&) = delete;
    listener& operator=(const listener&) = delete;

    // Binds, listens and starts serving; returns the port (port 0 picks a
    // free one), or nullopt with the reason in `error`.
    [[nodiscard]] std::optional<unsigned short> start(const listen_address& at, std::string& error);
    void stop();

    struct impl;

private:
    std::unique_ptr<impl> impl_;
};

}  // namespace examples::metrics
