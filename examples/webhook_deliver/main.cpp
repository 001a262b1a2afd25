// webhook_deliver: sends the requests webhook_dispatch would print for the same
// input (spec 4.3, H8) over HTTP
// and runs the retry plan of rule B2 on each delivery, under rule B4.
//
// Usage:
//   webhook_deliver [--allow-local] [--time-scale F] [--timeout S]
//                   [--resolve HOST:PORT:ADDRESS]... [FILE | -]
//   webhook_deliver --store S [options] FILE          enqueue FILE's deliveries, then work the store
//   webhook_deliver --store S [options] --work [--until-empty] [--metrics-listen HOST:PORT]
//   webhook_deliver --store S --list [--status S]... [--tenant T [--webhook W]] [--since T0]
//   webhook_deliver --store S --resend DELIVERY_ID [--to-current-endpoint]
//   webhook_deliver --store S --recover --tenant T --webhook W --since T0 [--to-current-endpoint]
//   webhook_deliver --store S --enable --tenant T --webhook W
//   webhook_deliver --store S --purge-before T [--tenant T [--webhook W]]
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
//                  Without --store too the ids are under that variable's
//                  key when it is set; malformed, it is refused (2).
// --work           works the store only; --until-empty stops once no
//                  delivery is pending, else it polls for ever, and rides
//                  out a store that fails (O4): the failure said at most
//                  once a second with the count of repeats, tried again
//                  four times a second, and its end said; with --until-empty
//                  a failing store ends the run (exit 3).
// --metrics-listen HOST:PORT (with --work; rule O4, refused with exit 2 in
//                  a build without prometheus-cpp): GET /metrics serves
//                  keyhook_delivery_attempts_total{outcome} (the attempt
//                  lines' words), keyhook_delivery_attempt_seconds (each
//                  attempt's HTTP request), keyhook_deliveries_pending and
//                  keyhook_endpoints_disabled (the whole store's, read at most
//                  once a second between attempts: aggregate workers with
//                  max) and keyhook_store_errors_total{store="delivery"};
//                  GET /healthz answers 503 once the store has failed for
//                  more than 5 s and from SIGINT or SIGTERM on. "metrics on
//                  HOST:PORT" goes to standard error once it listens.
// --lease S        how long a claimed delivery stays this worker's (default
//                  30, real seconds); another worker takes over a stopped
//                  one's deliveries after it, so a receiver may see an id twice.
//                  Before each attempt the delivery's lease is renewed to
//                  now + --timeout + one --lease (the allowance for recording
//                  the outcome), and the delivery skipped when another worker
//                  holds it by then: a crashed worker's deliveries are taken
//                  over within --timeout + --lease.
// --list           prints each stored delivery's state (JSON, without the
//                  body) with every attempt of its history: status,
//                  duration, transport error, the response body's first 1 KiB
//                  (the webhook's secrets replaced, escaped); filtered by
//                  --status, --tenant and --webhook, --since (created at or
//                  after).
//
// The operator's actions on a store (rule O5, actions.hpp) only queue:
// running workers (or --work --until-empty) send. Each changes only
// deliveries in the state it names, so repeating or racing it queues each
// delivery at most once per time it ended:
// --resend ID      queues one delivery that gave up, was ended by its
//                  webhook's disabling, or was delivered: a new attempt
//                  sequence, the same webhook-id, its history kept.
// --recover        with --tenant, --webhook and --since: queues every delivery
//                  of that webhook created at or after the time that gave up
//                  or was ended by its disabling.
//                  Both refuse a disabled webhook (enable it first) and a
//                  delivery enqueued for another endpoint URL than its
//                  webhook's now, unless --to-current-endpoint.
// --enable         with --tenant and --webhook: clears the webhook's disabled
//                  flag and health (H10), printing an endpoint.enabled notice.
// --purge-before T reduces the deliveries that ended before T (of --tenant,
//                  --webhook) to tombstones: their ids stay, so enqueueing
//                  their events again adds nothing.
// Times (--since, --purge-before) take key_admin's forms
// (shared/time_option.hpp): now, YYYY-MM-DD (00:00:00Z) or a T1 timestamp,
// on the workers' timeline (the wall clock unless --time-scale): now is the
// store's timeline's now.
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
// Every run that is not refused ends with one line on standard output,
//   {"summary": {"delivered": N, "gaveUp": N, "disabled": N, "pending": N}}
// the deliveries this run saw end each way (--list: of those listed) and
// those pending in the store at its end (without --store: left unsent).
// A delivery ended without an attempt (its webhook disabled) has a line
// too, with "outcome" "disabled". SIGINT or SIGTERM stops a worker after
// the attempt in flight, with its summary.
//
// Exit status (rule O1): 0 once every delivery has ended delivered, 4 once
// every delivery has ended and one or more of this run's did not reach its
// endpoint (gave up, or ended by its webhook's disabling; a --work worker
// counts the deliveries it worked), 1 invalid input (an input FILE that cannot
// be read included), 2 usage error (a --store
// this build has no library for included), 3 the store failed (or libcurl
// could not start). The actions exit 0 when done (a recover or enable with
// nothing to do included), 1 when refused (an unknown or purged id, a
// delivery not ended, a disabled webhook, an endpoint changed), 3 when the
// store fails.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
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

#include "actions.hpp"
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
#include "shared/metrics.hpp"
#include "shared/store_opener.hpp"
#include "shared/time_option.hpp"
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
    "[--store S [--work [--until-empty] [--metrics-listen HOST:PORT]] [--lease S]] [FILE | -]\n"
    "       webhook_deliver --store S --list [--status S]... [--tenant T [--webhook W]] [--since T0]\n"
    "       webhook_deliver --store S --resend DELIVERY_ID [--to-current-endpoint]\n"
    "       webhook_deliver --store S --recover --tenant T --webhook W --since T0 [--to-current-endpoint]\n"
    "       webhook_deliver --store S --enable --tenant T --webhook W\n"
    "       webhook_deliver --store S --purge-before T [--tenant T [--webhook W]]",
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
    "On a store, an operator's actions (O5) queue ended deliveries again (--resend, --recover), enable a\n"
    "disabled webhook (--enable) and purge ended deliveries (--purge-before); they only queue: the\n"
    "workers send. Every run not refused ends with\n"
    "{\"summary\": {\"delivered\", \"gaveUp\", \"disabled\", \"pending\"}}.\n"
    "Exit 4 when a delivery of this run ended without being delivered (it gave up, or its webhook was\n"
    "disabled). See docs/embedding.md and docs/retries.md.";

// What a run on a store does besides enqueueing and working it (O5).
enum class action { none, list, resend, recover, enable, purge };

struct arguments {
    bool allow_local = false;
    double time_scale = 1.0;
    bool time_scale_given = false;
    double timeout_seconds = 30.0;
    std::vector<std::string> resolve;
    std::optional<std::string> file;
    std::optional<examples::store::store_address> store;
    bool work = false;
    bool until_empty = false;
    std::optional<double> lease_seconds;
    action act = action::none;
    std::string resend_id;
    bool to_current_endpoint = false;
    examples::store::delivery_filter filter;                   // --status, --tenant, --webhook, --since, --purge-before
    std::optional<examples::metrics::listen_address> metrics;  // --metrics-listen (O4), with --work
    std::string metrics_text;                                  // as given, for messages
    bool since_now = false, purge_before_now = false;          // "now": the store's timeline's, read when it is open
};

std::optional<double> parse_non_negative(std::string_view text) {
    const std::string s(text);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
    return v;
}

// --status: a delivery's status, in any case, "gave_up" also as "gaveUp".
std::optional<keyhook::delivery_status> parse_status(std::string_view text) {
    std::string key;
    for (const char c : examples::cli::lower(text))
        if (c != '_' && c != '-') key += c;
    if (key == "pending") return keyhook::delivery_status::pending;
    if (key == "delivered") return keyhook::delivery_status::delivered;
    if (key == "gaveup") return keyhook::delivery_status::gave_up;
    if (key == "disabled") return keyhook::delivery_status::disabled;
    return std::nullopt;
}

// The arguments, or the exit status after --help, --version or a usage error.
std::variant<arguments, int> parse_arguments(int argc, char** argv) {
    using keyhook::quoted_input;
    CLI::App app;
    examples::cli::configure(app, program, description);
    arguments args;
    std::string time_scale, timeout, store, lease, file, since, purge_before, tenant, webhook, metrics_listen;
    std::vector<std::string> statuses;
    bool list = false, recover = false, enable = false;
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
    app.add_option("--metrics-listen", metrics_listen,
                   "with --work: serve GET /metrics (Prometheus) and GET /healthz on HOST:PORT, a separate "
                   "address (O4)")
        ->type_name("HOST:PORT")
        ->default_str("off")
        ->group(stored);
    const std::string actions = "An operator's actions on a store (rule O5; they only queue, workers send)";
    app.add_flag("--list", list,
                 "print each stored delivery (JSON, without the body) with every attempt: status, duration, "
                 "error, the response's first 1 KiB")
        ->group(actions);
    app.add_option("--status", statuses,
                   "with --list: only deliveries of this status (pending, delivered, gave_up, disabled); repeatable")
        ->type_name("S")
        ->default_str("every status")
        ->allow_extra_args(false)
        ->group(actions);
    app.add_option("--tenant", tenant,
                   "the tenant whose webhook --webhook names; with --list and --purge-before "
                   "a filter")
        ->type_name("T")
        ->default_str("every tenant")
        ->group(actions);
    app.add_option("--webhook", webhook, "the webhook (of --tenant); with --list and --purge-before a filter")
        ->type_name("W")
        ->default_str("every webhook")
        ->group(actions);
    app.add_option("--since", since,
                   "with --list and --recover: deliveries created at or after T0 (now, YYYY-MM-DD or a T1 timestamp)")
        ->type_name("T0")
        ->default_str("any time")
        ->group(actions);
    app.add_option("--resend", args.resend_id,
                   "queue one delivery that gave up, was ended by its webhook's disabling, or was delivered")
        ->type_name("DELIVERY_ID")
        ->group(actions);
    app.add_flag("--recover", recover,
                 "with --tenant, --webhook, --since: queue every delivery of the webhook created since T0 that "
                 "gave up or was ended by its disabling")
        ->group(actions);
    app.add_flag("--to-current-endpoint", args.to_current_endpoint,
                 "with --resend and --recover: send deliveries enqueued for another endpoint URL to the "
                 "webhook's current one")
        ->group(actions);
    app.add_flag("--enable", enable, "with --tenant, --webhook: enable the disabled webhook, clearing its health")
        ->group(actions);
    app.add_option("--purge-before", purge_before,
                   "reduce the deliveries that ended before T to tombstones (their ids kept); now, YYYY-MM-DD "
                   "or a T1 timestamp")
        ->type_name("T")
        ->group(actions);
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
    if (given("--metrics-listen")) {
        // O4: refused before anything else in a build without prometheus-cpp.
        if (!examples::metrics::built()) return usage_error(examples::metrics::not_built_message());
        args.metrics = examples::metrics::parse_listen_address(metrics_listen);
        if (!args.metrics)
            return usage_error("--metrics-listen: expected HOST:PORT, got " + quoted_input(metrics_listen));
        args.metrics_text = metrics_listen;
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
        args.time_scale_given = true;
    }
    if (given("FILE")) args.file = file;

    // O5: one action at most, and the options each takes.
    std::vector<std::pair<action, const char*>> chosen;
    if (list) chosen.emplace_back(action::list, "--list");
    if (given("--resend")) chosen.emplace_back(action::resend, "--resend");
    if (recover) chosen.emplace_back(action::recover, "--recover");
    if (enable) chosen.emplace_back(action::enable, "--enable");
    if (given("--purge-before")) chosen.emplace_back(action::purge, "--purge-before");
    if (chosen.size() > 1)
        return usage_error(std::string(chosen[0].second) + " and " + chosen[1].second + " do not go together");
    args.act = chosen.empty() ? action::none : chosen[0].first;
    const char* act_name = chosen.empty() ? "" : chosen[0].second;
    const auto only_with = [&](const char* option, std::initializer_list<action> allowed) -> std::optional<int> {
        if (!given(option) || std::find(allowed.begin(), allowed.end(), args.act) != allowed.end()) return std::nullopt;
        std::string names;
        for (const auto a : allowed) {
            const char* n = a == action::list      ? "--list"
                            : a == action::resend  ? "--resend"
                            : a == action::recover ? "--recover"
                            : a == action::enable  ? "--enable"
                                                   : "--purge-before";
            names += names.empty() ? n : std::string(", ") + n;
        }
        return usage_error(std::string(option) + " goes with " + names);
    };
    if (auto e = only_with("--status", {action::list})) return *e;
    if (auto e = only_with("--since", {action::list, action::recover})) return *e;
    if (auto e = only_with("--tenant", {action::list, action::recover, action::enable, action::purge})) return *e;
    if (auto e = only_with("--webhook", {action::list, action::recover, action::enable, action::purge})) return *e;
    if (auto e = only_with("--to-current-endpoint", {action::resend, action::recover})) return *e;
    if (args.metrics && (!args.store || !args.work || args.act != action::none))
        return usage_error("--metrics-listen goes with --store S --work (a worker's metrics and health)");
    if (args.act != action::none) {
        if (!args.store) return usage_error(std::string(act_name) + " needs --store");
        if (args.file || args.work || args.until_empty || args.lease_seconds || args.time_scale_given)
            return usage_error(std::string(act_name) +
                               " takes no input file, --work, --until-empty, --lease or --time-scale (an action "
                               "uses the store's timeline and only queues; workers send)");
    }
    if ((args.act == action::recover || args.act == action::enable) && (!given("--tenant") || !given("--webhook")))
        return usage_error(std::string(act_name) + " needs --tenant T and --webhook W (either may hold '/')");
    if (args.act == action::recover && !given("--since")) return usage_error("--recover needs --since T0");
    if (given("--webhook") && !given("--tenant"))
        return usage_error("--webhook needs --tenant: a webhook's name is its tenant's own");
    if (given("--tenant")) args.filter.tenant = tenant;
    if (given("--webhook")) args.filter.webhook = webhook;
    for (const auto& text : statuses) {
        const auto s = parse_status(text);
        if (!s)
            return usage_error("--status: expected pending, delivered, gave_up or disabled, got " + quoted_input(text));
        args.filter.statuses.push_back(*s);
    }
    // key_admin's forms (O5); "now" is resolved again on the store's timeline when it is open.
    const auto read_time = [](const char* option, const std::string& text) -> std::variant<keyhook::timestamp, int> {
        auto t = examples::cli::parse_time(text, deliver::clock_now());
        if (!t) return usage_error(std::string(option) + ": " + t.error().message);
        return *t;
    };
    if (given("--since")) {
        const auto t = read_time("--since", since);
        if (const int* status = std::get_if<int>(&t)) return *status;
        args.filter.created_since = std::get<keyhook::timestamp>(t);
        args.since_now = examples::cli::lower(since) == "now";
    }
    if (given("--purge-before")) {
        const auto t = read_time("--purge-before", purge_before);
        if (const int* status = std::get_if<int>(&t)) return *status;
        args.filter.ended_before = std::get<keyhook::timestamp>(t);
        args.purge_before_now = examples::cli::lower(purge_before) == "now";
    }
    if (args.act == action::resend && !keyhook::try_parse_delivery_id(args.resend_id))
        return usage_error("--resend: expected a delivery id (msg_ and 32 hex digits), got " +
                           quoted_input(args.resend_id));
    if (args.act != action::none) return args;

    if (!args.store && (args.work || args.until_empty || args.lease_seconds))
        return usage_error("--work, --until-empty and --lease need --store");
    if (args.store && args.time_scale == 0)
        return usage_error(
            "--time-scale 0 has no timeline the workers on a store can share (B6); give a scale above 0");
    if (args.store && args.time_scale < deliver::min_store_time_scale)
        return usage_error(
            "--time-scale with a store: at least 0.000001 (a million times faster than real "
            "time), so that the shared timeline stays within the years a timestamp holds");
    if (args.until_empty && !args.work) return usage_error("--until-empty goes with --work");
    if (args.store && args.work && args.file) return usage_error("--work takes no input file");
    if (args.store && !args.work && !args.file)
        return usage_error(
            "--store needs an input FILE, --work, or an action (--list, --resend, --recover, "
            "--enable, --purge-before)");
    return args;
}

// SIGINT and SIGTERM ask a worker to stop after the attempt in flight (its
// summary printed); with --metrics-listen, /healthz says it is shutting down
// from then on (an atomic store: safe in a signal handler).
std::atomic<bool> stop_requested{false};
examples::metrics::health* stopping_health = nullptr;  // set before the handler is installed
extern "C" void request_stop(int) {
    stop_requested.store(true);
    if (stopping_health) stopping_health->shutting_down();
}

// O5: an action on the store, its summary line and exit status.
int run_action(arguments args, examples::store::delivery_store& store) {
    if (args.since_now) args.filter.created_since = deliver::store_now(store);
    if (args.purge_before_now) args.filter.ended_before = deliver::store_now(store);
    deliver::action_result r;
    switch (args.act) {
        case action::list: r = deliver::list_deliveries(store, args.filter); break;
        case action::resend: r = deliver::resend(store, args.resend_id, args.to_current_endpoint); break;
        case action::recover:
            r = deliver::recover(store, {*args.filter.tenant, *args.filter.webhook}, *args.filter.created_since,
                                 args.to_current_endpoint);
            break;
        case action::enable: r = deliver::enable(store, {*args.filter.tenant, *args.filter.webhook}); break;
        case action::purge: r = deliver::purge(store, args.filter); break;
        case action::none: break;
    }
    // A refused action (exit 1) prints no summary: it did nothing to count.
    if (r.status == exit_ok) deliver::print_summary(r.counts, r.pending ? *r.pending : store.pending());
    return r.status;
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
        // --list and the operator's actions read a store: on a file that is not
        // there they would make an empty one and report nothing (a mistyped path).
        if (args->act != action::none && args->store->kind == examples::store::backend::sqlite &&
            !examples::store::store_file_exists(*args->store)) {
            std::cerr << "webhook_deliver: " << keyhook::escape_text(args->store->shown)
                      << ": no delivery store here: the file does not exist (a worker or an enqueue makes one)\n";
            return exit_invalid;
        }
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
            if (args->act != action::none) return run_action(*args, *store);
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
    std::vector<examples::store::webhook_config> settings;
    std::string tenant;
    if (!args->work) {
        const std::optional<std::string> file = args->file.value_or("-");
        std::string why;
        const auto text = examples::read_input_text(file, {}, &why);
        if (!text) {  // O1: input that cannot be had is bad input, as input that does not parse
            std::cerr << "webhook_deliver: cannot read " << keyhook::quoted_input(*file, 256) << ": " << why << '\n';
            return exit_invalid;
        }
        const std::string source = examples::input_name(file);
        auto input = deliver::parse_delivery_input(*text, clock.now(), policy);
        if (!input) {
            std::cerr << "webhook_deliver: " << source << ": " << input.error() << '\n';
            return exit_invalid;
        }
        // H4: the tenant's switch off sends nothing; say so.
        if (!input->settings.tenant.webhooks_enabled)
            std::cerr << "webhook_deliver: " << source << ": tenant "
                      << keyhook::quoted_input(input->settings.tenant.name, 128)
                      << " has webhooksEnabled false: no webhook fires (H4), nothing is sent\n";
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
        } else if (const auto key = deliver::delivery_id_key_from_environment()) {
            // Without a store too, a malformed key is a usage error (O1), never ignored.
            if (!*key) {
                std::cerr << "webhook_deliver: " << key->error() << '\n';
                return exit_usage;
            }
            options.id_key = **key;
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
    if (args->store) client.max_body = deliver::read_response_bytes;  // O5: the history keeps its first 1 KiB

    // O4: a worker's metrics and health on their own address (--metrics-listen, with --work).
    examples::metrics::registry metrics(examples::metrics::program::webhook_deliver);
    examples::metrics::health health;
    examples::metrics::listener metrics_listener(metrics, health);
    if (args->metrics) {
        std::string why;
        const auto port = metrics_listener.start(*args->metrics, why);
        if (!port) {
            std::cerr << "webhook_deliver: cannot listen on " << keyhook::quoted_input(args->metrics_text)
                      << " (--metrics-listen): " << why << '\n';
            curl_global_cleanup();
            return exit_store;
        }
        std::cerr << "webhook_deliver: metrics on " << args->metrics->host << ':' << *port << std::endl;
        stopping_health = &health;
    }
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    deliver::run_counts counts;
    std::uint64_t pending = 0;
    try {
        // B6: recorded before the first attempt.
        if (!args->work) {
            const auto added = store->enqueue(tenant, settings, states, clock.now());
            if (args->store)
                std::cerr << "webhook_deliver: " << added << " of " << states.size()
                          << " deliveries added to the store\n";
            states.clear();
        }
        deliver::work_options options;
        options.until_empty = args->until_empty || !args->work;
        options.stop = &stop_requested;
        if (args->lease_seconds)
            options.lease = std::chrono::microseconds(static_cast<std::int64_t>(*args->lease_seconds * 1e6));
        options.timeout = client.total_timeout;
        options.policy = policy;
        options.keep_history = args->store.has_value();
        options.ride_out_store_failures = args->work && !args->until_empty;
        if (args->metrics) {
            options.metrics = &metrics;
            options.health = &health;
        }
        counts = deliver::work(*store, options, client, clock);
        pending = store->pending();
    } catch (const std::exception& e) {
        std::cerr << "webhook_deliver: " << keyhook::escape_text(e.what()) << '\n';
        curl_global_cleanup();
        return exit_store;
    }
    curl_global_cleanup();
    deliver::print_summary(counts, pending);
    return counts.undelivered() == 0 ? exit_ok : exit_gave_up;
}
