// webhook_deliver: sends the requests webhook_dispatch would print for the same
// input (spec 4.3, H8) over HTTP
// and runs the retry plan of rule B2 on each delivery, under rule B4.
//
// Usage:
//   webhook_deliver [--allow-local] [--time-scale F] [--timeout S]
//                   [--resolve HOST:PORT:ADDRESS]... [FILE | -]
//   webhook_deliver --store S [options] FILE          enqueue FILE's deliveries, then work the store
//   webhook_deliver --store S [options] --work [--until-empty]
//   webhook_deliver --store S --list
//
// Reads the INPUT of webhook_dispatch (a tenant, its webhooks, one event; not
// webhook_dispatch's output) from
// FILE, or from standard input when FILE is "-" or absent, with three
// additions (delivery_input.hpp):
//   "events": [{"after": seconds, "event": {...}}, ...] instead of "event":
//     several events, each dispatched that long into the run (on the run's
//     timeline, see --time-scale);
//   webhooks[i]."maxPerSecond": H11's throttle (burst 1): a delivery over the
//     rate waits, which is neither a failure nor an attempt;
//   webhooks[i]."signingKeys": B5's key set in keyhook's stored form
//     ({"current": [...], "oldKeys": [{"key", "expiresAt"}]}) instead of
//     "signingSecret": each attempt is signed with the keys valid at its time.
// Every request of a dispatch is sent, signed (B1) when its webhook has keys,
// signed again at each attempt; the deliveries are interleaved by their next
// attempt time, one request at a time, by one loop (worker.hpp) over one
// store interface: in memory without --store (lost when the process stops),
// SQLite or PostgreSQL with it:
//   - B2: the schedule with jitter (OpenSSL's random source), Retry-After on
//     429 and 503, 2xx ends a delivery, the last failed attempt gives up;
//   - H10: one health per webhook, shared by all its deliveries: a webhook
//     answering 410, or failing 5 days or more since its last success, is
//     disabled; its pending deliveries end and later events skip it;
//   - B4: no redirect is followed (a 3xx is a failed attempt), each resolved
//     address passes the H1 check before connecting, TLS is verified, proxies
//     from the environment are not used.
// --allow-local    permits plain http and loopback or private addresses (in the
//                  endpoints and after resolution): development and tests only.
// --time-scale F   multiplies every wait (events, retries, throttles) by F (0.001 turns 5 minutes into 0.3 s;
//                  0 sends the attempts back to back). With --store the
//                  run's timeline is the wall clock's, idle and store time
//                  included: epoch + (real now - epoch) / F, the epoch kept
//                  in the store by its first worker so that all agree (B6);
//                  0 is refused there.
// --timeout S      a transfer's overall limit in seconds (default 30; the
//                  connection must be made within min(S, 10)).
// --resolve H:P:A  resolves host H, port P to address A (as curl's --resolve);
//                  the address is still checked. For tests and pinning.
//
// With a store (rule B6; docs/embedding.md, "Past one machine"), every
// delivery is recorded before its first attempt and each attempt's outcome
// with the next due time in one transaction, so a worker killed at any moment
// loses nothing:
// --store S        "sqlite:PATH" (or a plain PATH): SQLite, one machine;
//                  "postgresql://..." or "postgres://...": PostgreSQL, many
//                  workers claiming due deliveries with FOR UPDATE SKIP
//                  LOCKED (a password is best in PGPASSFILE or PGPASSWORD,
//                  not in the URI). Each needs its library at build time
//                  (libsqlite3-dev, libpq-dev). Any other form is a usage
//                  error naming these (examples/shared/store_opener.hpp);
//                  messages show the URI without its password.
//                  With FILE: its deliveries are added (by delivery id: a
//                  file enqueued twice adds nothing, when its event carries
//                  "RequestTimeStamp") and the store is worked until empty.
//                  Ids are H12's under KEYHOOK_DELIVERY_ID_KEY (32 hex
//                  digits) when set, else under a key kept in the store.
// --work           works the store only; --until-empty stops once no
//                  delivery is pending, else it polls for ever.
// --lease S        how long a claimed delivery stays this worker's (default
//                  30, real seconds); another worker takes over a stopped
//                  one's deliveries after it, so a receiver may see an id twice.
//                  Before each attempt the delivery's lease is renewed to
//                  now + --timeout + one --lease (the allowance for recording
//                  the outcome), and the delivery skipped when another worker
//                  holds it by then: a crashed worker's deliveries are taken
//                  over within --timeout + --lease.
// --list           prints every stored delivery's state (JSON, without the body).
//
// One JSON line per attempt on standard output:
//   {"deliveryId", "tenant", "webhook" (its name within the tenant), "attempt" (from 1), "sentAt" (on the run's
//    timeline, see --time-scale), "status" (HTTP status or null), "error" (null or what failed in transport), "outcome"
//    ("delivered", "retry", "disabled" or "gave_up"), "retryAt" (for "retry": when)}
// and one per operational notice (H10), after the attempt that caused it:
//   {"operational": {"type": "message.attempt.failing" | "message.attempt.exhausted" | "endpoint.disabled",
//                    "timestamp", "data": {"tenant", "endpointId", "msgId", "failSince", "lastAttempt"}}}
// With a store, a webhook is its tenant's (B6): the store keys its settings,
// health, throttle and deliveries by (tenant, webhook name), so two tenants'
// webhooks of one name never share a row (docs/embedding.md).
// Nothing of an authentication value or signing secret is printed.
//
// Exit status (rule O1): 0 once every delivery has ended delivered, 4 once
// every delivery has ended and one or more of this run's did not reach its
// endpoint (gave up, or ended by its webhook's disabling; a --work worker
// counts the deliveries it worked), 1 invalid input (an input FILE that cannot
// be read included), 2 usage error (a --store
// this build has no library for included), 3 the store failed (or libcurl
// could not start).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "attempt.hpp"
#include "delivery_input.hpp"
#include "key_sets.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/delivery_state.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/endpoint_health.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/retry.hpp"
#include "keyhook/timestamps.hpp"
#include "shared/cli.hpp"
#include "shared/curl_client.hpp"
#include "shared/dispatch_input.hpp"
#include "shared/memory_store.hpp"
#include "shared/store_opener.hpp"
#include "worker.hpp"

namespace {

constexpr int exit_ok = examples::cli::exit_ok;
constexpr int exit_invalid = examples::cli::exit_bad_input;
constexpr int exit_usage = examples::cli::exit_usage;
constexpr int exit_store = examples::cli::exit_failure;
constexpr int exit_gave_up = examples::cli::exit_gave_up;

const examples::cli::program program{
    "webhook_deliver",
    "usage: webhook_deliver [--allow-local] [--time-scale F] [--timeout S] [--resolve HOST:PORT:ADDRESS]... "
    "[--store S [--work [--until-empty]] [--lease S] [--list]] [FILE | -]",
    "give at most one input file"};

int usage_error(std::string_view problem) { return examples::cli::usage_failure(program, problem); }

constexpr const char* description =
    "Sends the requests of webhook_dispatch's INPUT (not its output: the same {\"tenant\", \"webhooks\",\n"
    "\"event\"} document), with the retry plan of rule B2, and prints one JSON line per attempt and per\n"
    "operational notice; with --store, durably (rule B6).\n"
    "The input may also hold\n"
    "  \"events\": [{\"after\": SECONDS, \"event\": {...}}, ...]  several events at set times\n"
    "                   into the run, instead of \"event\";\n"
    "  webhooks[i].maxPerSecond: N      at most N deliveries a second (H11);\n"
    "  webhooks[i].signingKeys: {\"current\": [KEY...], \"oldKeys\": [{\"key\", \"expiresAt\"}]}\n"
    "                   a rotating key set (B5) instead of signingSecret.\n"
    "A webhook failing for 5 days, or answering 410, is disabled (H10).\n"
    "Ids are H12's under KEYHOOK_DELIVERY_ID_KEY (32 hex digits) when set, else under a key kept in the store.\n"
    "Exit 4 when a delivery of this run ended without being delivered (it gave up, or its webhook was\n"
    "disabled). See docs/embedding.md and docs/retries.md.";

struct arguments {
    bool allow_local = false;
    double time_scale = 1.0;
    double timeout_seconds = 30.0;
    std::vector<std::string> resolve;
    std::optional<std::string> file;
    std::optional<examples::store::store_address> store;
    bool work = false;
    bool until_empty = false;
    bool list = false;
    std::optional<double> lease_seconds;
};

std::optional<double> parse_non_negative(std::string_view text) {
    const std::string s(text);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
    return v;
}

// The arguments, or the exit status after --help, --version or a usage error.
std::variant<arguments, int> parse_arguments(int argc, char** argv) {
    using keyhook::quoted_input;
    CLI::App app;
    examples::cli::configure(app, program, description);
    arguments args;
    std::string time_scale, timeout, store, lease, file;
    app.add_option("FILE", file, "the input; '-' reads standard input")->type_name("")->default_str("-");
    app.add_flag("--allow-local", args.allow_local,
                 "permit plain http and loopback or private addresses (development and tests only)");
    app.add_option("--time-scale", time_scale,
                   "multiply every wait (events, retries, throttles) by F; 0 sends the attempts back to back "
                   "(not with --store)")
        ->type_name("F")
        ->default_str("1");
    app.add_option("--timeout", timeout,
                   "a transfer's overall limit in seconds, 0.001 to 86400 (the connection within min(S, 10))")
        ->type_name("S")
        ->default_str("30");
    app.add_option("--resolve", args.resolve,
                   "resolve HOST, PORT to ADDRESS (as curl's --resolve); the address is still checked")
        ->type_name("HOST:PORT:ADDRESS")
        ->allow_extra_args(false);  // one value each time it is given
    const std::string stored = "With --store S (rule B6)";
    app.add_option("--store", store,
                   "sqlite:PATH or a plain PATH (SQLite), postgresql://... or postgres://... (PostgreSQL; its "
                   "password in PGPASSFILE or PGPASSWORD); with FILE, its deliveries are added, then the store "
                   "worked until empty")
        ->type_name("S")
        ->default_str("in memory, lost when the process stops")
        ->group(stored);
    app.add_flag("--work", args.work, "work the store only (no input file)")->group(stored);
    app.add_flag("--until-empty", args.until_empty, "with --work: stop once no delivery is pending")->group(stored);
    app.add_option("--lease", lease, "how long a claimed delivery stays this worker's, real seconds 0.01 to 86400")
        ->type_name("S")
        ->default_str("30")
        ->group(stored);
    app.add_flag("--list", args.list, "print every stored delivery's state (JSON, without the body)")->group(stored);
    if (const auto status = examples::cli::parse(app, program, argc, argv)) return *status;
    const auto given = [&app](const char* name) { return app.get_option(name)->count() > 0; };

    for (const auto& value : args.resolve) {
        // HOST:PORT:ADDRESS, no control characters (curl reads it as is).
        const bool printable = std::all_of(value.begin(), value.end(), [](char c) {
            return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
        });
        if (!printable || std::count(value.begin(), value.end(), ':') < 2)
            return usage_error("--resolve: expected HOST:PORT:ADDRESS, got " + quoted_input(value));
    }
    if (given("--store")) {
        std::string why;
        args.store = examples::store::parse_store_address(store, examples::store::store_use::deliveries, why);
        if (!args.store) return usage_error(why);
    }
    if (given("--lease")) {
        const auto number = parse_non_negative(lease);
        if (!number || *number < 0.01 || *number > 86400)
            return usage_error("--lease: expected seconds from 0.01 to 86400, got " + quoted_input(lease));
        args.lease_seconds = *number;
    }
    if (given("--timeout")) {
        const auto number = parse_non_negative(timeout);
        if (!number || *number < 0.001 || *number > 86400)
            return usage_error("--timeout: expected seconds from 0.001 to 86400, got " + quoted_input(timeout));
        args.timeout_seconds = *number;
    }
    if (given("--time-scale")) {
        const auto number = parse_non_negative(time_scale);
        if (!number) return usage_error("--time-scale: expected a number >= 0, got " + quoted_input(time_scale));
        args.time_scale = *number;
    }
    if (given("FILE")) args.file = file;
    if (!args.store && (args.work || args.until_empty || args.list || args.lease_seconds))
        return usage_error("--work, --until-empty, --list and --lease need --store");
    if (args.store && !args.list && args.time_scale == 0)
        return usage_error(
            "--time-scale 0 has no timeline the workers on a store can share (B6); give a scale above 0");
    if (args.store && !args.list && args.time_scale < deliver::min_store_time_scale)
        return usage_error(
            "--time-scale with a store: at least 0.000001 (a million times faster than real "
            "time), so that the shared timeline stays within the years a timestamp holds");
    if (args.until_empty && !args.work) return usage_error("--until-empty goes with --work");
    if (args.store && (args.work || args.list) && args.file) return usage_error("--work and --list take no input file");
    if (args.store && !args.work && !args.list && !args.file)
        return usage_error("--store needs an input FILE, --work or --list");
    return args;
}

}  // namespace

int main(int argc, char** argv) {
    const auto parsed = parse_arguments(argc, argv);
    if (const int* status = std::get_if<int>(&parsed)) return *status;
    const auto* args = &std::get<arguments>(parsed);
    keyhook::endpoint_policy policy;
    policy.allow_http = args->allow_local;
    policy.allow_non_global_addresses = args->allow_local;
    deliver::run_clock clock(args->time_scale);

    // One loop, one store interface (worker.hpp): in memory without --store,
    // on the run's virtual timeline; SQLite or PostgreSQL with it, on B6's.
    std::unique_ptr<examples::store::delivery_store> store;
    if (args->store) {
        try {
            store = examples::store::open_delivery_store(*args->store);
        } catch (const examples::store::store_not_built& e) {
            return usage_error(e.what());
        } catch (const std::exception& e) {
            // The address as it may be shown, then the store's reason: never the password.
            std::cerr << "webhook_deliver: " << keyhook::escape_text(e.what()) << '\n';
            return exit_store;
        }
        try {
            if (args->list) {
                deliver::list_store(*store);
                return exit_ok;
            }
            // B6: the store's one timeline, from the epoch and the scale its first worker kept.
            const double kept = store->clock_scale(args->time_scale);
            if (kept != args->time_scale) {
                std::cerr << "webhook_deliver: --time-scale " << args->time_scale << ": this store's workers run at "
                          << kept << " (kept by its first worker; B6: one timeline per store)\n";
                return exit_usage;
            }
            clock = deliver::run_clock::anchored(
                args->time_scale, examples::store::from_micros(store->clock_epoch(deliver::real_micros())));
        } catch (const std::exception& e) {
            std::cerr << "webhook_deliver: " << keyhook::escape_text(e.what()) << '\n';
            return exit_store;
        }
    } else {
        store = std::make_unique<examples::store::memory_store>();
    }

    // The input's deliveries, each due at its event's time on the run's timeline.
    std::vector<keyhook::delivery_state> states;
    std::vector<std::pair<std::string, std::string>> settings;
    std::string tenant;
    if (!args->work) {
        const std::optional<std::string> file = args->file.value_or("-");
        const auto text = examples::read_input_text(file, {});
        if (!text) {  // O1: input that cannot be had is bad input, as input that does not parse
            std::cerr << "webhook_deliver: cannot read " << keyhook::quoted_input(*file, 256) << '\n';
            return exit_invalid;
        }
        const std::string source = examples::input_name(file);
        auto input = deliver::parse_delivery_input(*text, clock.now(), policy);
        if (!input) {
            std::cerr << "webhook_deliver: " << source << ": " << input.error() << '\n';
            return exit_invalid;
        }
        keyhook::dispatch_options options;
        if (args->store) {
            try {
                auto key = deliver::delivery_id_key_for(*store);
                if (!key) {
                    std::cerr << "webhook_deliver: " << key.error() << '\n';
                    return exit_usage;
                }
                options.id_key = *key;
            } catch (const std::exception& e) {
                std::cerr << "webhook_deliver: " << keyhook::escape_text(e.what()) << '\n';
                return exit_store;
            }
        }
        // Dispatching and signing every event once up front checks every event
        // and secret before anything is sent.
        for (std::size_t i = 0; i < input->events.size(); ++i) {
            const auto& ev = input->events[i];
            auto signed_requests = keyhook::crypto::try_dispatch_signed(
                input->settings.tenant, input->settings.webhooks, ev.event, deliver::clock_now(), options);
            if (!signed_requests) {
                // A body member's path ("FolderName") is said under its event's.
                auto e = signed_requests.error();
                if (e.path.rfind("webhooks", 0) != 0)
                    e.path = e.path.empty() ? ev.path : keyhook::json_path_member(ev.path, e.path);
                std::cerr << "webhook_deliver: " << source << ": " << e << '\n';
                return exit_invalid;
            }
            for (const auto& d : *signed_requests)
                states.push_back(keyhook::make_delivery_state(d.outbound, clock.now() + ev.after));
        }
        settings = deliver::stored_settings_of(*input);
        tenant = input->settings.tenant.name;
    }

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        std::cerr << "webhook_deliver: libcurl could not be initialised\n";
        return exit_store;
    }
    examples::http::client_options client;
    client.allow_address = examples::http::h1_rule(policy);
    client.allow_http = policy.allow_http;
    client.total_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(args->timeout_seconds * 1000));
    client.connect_timeout = std::min(client.total_timeout, std::chrono::milliseconds(10000));
    client.resolve = args->resolve;

    std::size_t undelivered = 0;
    try {
        // B6: recorded before the first attempt.
        if (!args->work) {
            const auto added = store->enqueue(tenant, settings, states);
            if (args->store)
                std::cerr << "webhook_deliver: " << added << " of " << states.size()
                          << " deliveries added to the store\n";
            states.clear();
        }
        deliver::work_options options;
        options.until_empty = args->until_empty || !args->work;
        if (args->lease_seconds)
            options.lease = std::chrono::microseconds(static_cast<std::int64_t>(*args->lease_seconds * 1e6));
        options.timeout = client.total_timeout;
        options.policy = policy;
        undelivered = deliver::work(*store, options, client, clock);
    } catch (const std::exception& e) {
        std::cerr << "webhook_deliver: " << keyhook::escape_text(e.what()) << '\n';
        curl_global_cleanup();
        return exit_store;
    }
    curl_global_cleanup();
    return undelivered == 0 ? exit_ok : exit_gave_up;
}
