// webhook_receiver --listen: spec 4.4, H7, H9 and B1 over HTTP, served by
// examples/shared/http_server (Boost.Beast), which gives H13 by itself.
//
//   KEYHOOK_RECEIVER_KEY=<key> [KEYHOOK_SIGNING_SECRET="whsec_... whpk_..."]
//     webhook_receiver --listen HOST:PORT [--key-env NAME] [--request-timeout S]
//       [--max-connections N] [--threads N] [--store sqlite:PATH | postgresql://... | PATH]
//       [--replay-scope NAME] [--pending-bound S] [--metrics-listen HOST:PORT] [--log json|none]
//
// The server answers, before the receiver sees a request (H13): 431 for a
// header section over 64 KiB or 100 fields, 400 for framing RFC 9112 refuses,
// 411 for Transfer-Encoding, 408 for a request not whole within
// --request-timeout (default 10 s), 503 past --max-connections (default 256),
// 413 for a Content-Length over 1 MiB. Then each request, in this order (the
// first failure answers):
//   405  any method but POST;
//   411, 415  a POST without Content-Length, a compressed body (refused
//        before the body is read);
//   401  no key, or a wrong one, in header x-api-key or query api_key (H7;
//        400 when both are present and differ, or api_key is malformed);
//   401  when KEYHOOK_SIGNING_SECRET is set: a missing, stale (more than 5
//        minutes either way) or wrong Standard Webhooks signature (B1; the
//        library reads the older svix-* header names too; keys of any
//        non-empty length verify; whpk_ public keys verify v1a entries, B3,
//        and may be mixed with whsec_ secrets);
//   400  a body nested deeper than 16 (counted before parsing, by the library) or malformed;
//   200  a webhook-id accepted before within the tolerance window: answered
//        again, not processed again (H9); 503 when the replay table is full
//        (in memory: 65,536 ids) or its store cannot answer. With --store the
//        table is kept in the store (B6, examples/shared/replay_ids.hpp):
//        receivers sharing it, and a restarted one, process an id once;
//        "sqlite:PATH" or a plain PATH: SQLite (one machine);
//        "postgresql://..." or "postgres://...": PostgreSQL (libpq's URI;
//        its password is best in PGPASSFILE or PGPASSWORD). Any other form
//        is a usage error naming these (examples/shared/store_opener.hpp);
//        messages show the address without its password. Ids are kept per
//        --replay-scope (default "default"): receivers of one endpoint share
//        one; receivers of other endpoints or tenants on the store take their
//        own, so an id one accepted is no replay at another. 503 as well when
//        standard output cannot be written (the line is the processing: the
//        signed id is given back to the table, so the retry is processed);
//   503  with Retry-After: the webhook-id is pending, claimed by another
//        request or receiver that has not written its line yet (B6): an id
//        is accepted only once its line is written, so a receiver killed in
//        between loses nothing. A claim pending longer than --pending-bound
//        (default 30 s, with --store) is taken over by the next copy, whose
//        line may then be the second for that id: the host deduplicates by
//        id (docs/receiving.md). Retry-After is at most the bound.
//        KEYHOOK_RECEIVER_TEST_STOP_BEFORE_WRITE=1 (tests only) makes the
//        receiver stop itself (SIGSTOP) between its claim and its line.
//   200  accepted: one JSON line on standard output,
//        {"id": webhook-id or null when unsigned, "notification": {spec 6.2}}.
// Each answer is counted, by the result word of metrics.hpp, in
// keyhook_receiver_requests_total{result}, and each failed operation on the
// replay store in keyhook_store_errors_total{store="replay"} (O4): with
// --metrics-listen HOST:PORT, GET /metrics serves them there and GET /healthz
// answers 503 once the replay store (--store) has failed for more than 5 s,
// probing it when no request has used it for a second, and while stopping.
// O3: with --log json (the default) each answer is also one JSON line on
// standard error (examples/shared/request_log.hpp): time, tenant and keyId
// (always null: the receiver knows one key and no tenant; the body's Tenant
// is the sender's text, and no body is logged), method, path (no query),
// code (the result word counted for it), latencyMs; method and path null for
// the server's own refusals. No key, signing key or signature is written,
// wherever the client put it. The program's other lines are plain text
// ("webhook_receiver: ..."), a failing replay store reported at most once a
// second with the count of repeats; a thread of its own writes them all, so
// a slow standard error never holds a request. --log none: no request lines.
// Port 0 picks a free port; "listening on HOST:PORT" goes to standard error
// (after "metrics on HOST:PORT" with --metrics-listen).
// SIGINT and SIGTERM stop it cleanly (exit 0). Exit 2: a usage error; 3: it
// cannot listen, or its store cannot be opened (rule O1).
#include "serve.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if KEYHOOK_RECEIVER_LISTEN

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/received_notification.hpp"
#include "keyhook/receiving.hpp"
#include "replay.hpp"
#include "replay_store.hpp"
#include "shared/cli.hpp"
#include "shared/http_server.hpp"
#include "shared/metrics.hpp"
#include "shared/request_log.hpp"

namespace webhook_receiver {
namespace {

namespace hs = examples::http_server;
namespace metrics = examples::metrics;
namespace rlog = examples::request_log;
using result = metrics::receiver_result;
using steady = std::chrono::steady_clock;

constexpr int exit_ok = examples::cli::exit_ok;
constexpr int exit_usage = examples::cli::exit_usage;
constexpr int exit_failure = examples::cli::exit_failure;

// Content codings are tokens compared without regard to ASCII case (RFC 9110).
bool is_identity_coding(std::string_view coding) {
    constexpr std::string_view identity = "identity";
    if (coding.size() != identity.size()) return false;
    for (std::size_t i = 0; i < coding.size(); ++i) {
        const char c = coding[i] >= 'A' && coding[i] <= 'Z' ? static_cast<char>(coding[i] - 'A' + 'a') : coding[i];
        if (c != identity[i]) return false;
    }
    return true;
}

int usage(std::string_view problem) {
    std::cerr << "webhook_receiver: " << problem << "\n"
              << "usage: KEYHOOK_RECEIVER_KEY=<key> webhook_receiver --listen HOST:PORT [--key-env NAME] "
                 "[--request-timeout S] [--max-connections N] [--threads N] [--store sqlite:PATH | postgresql://... | "
                 "PATH] [--replay-scope NAME] [--pending-bound S] [--metrics-listen HOST:PORT] [--log json|none]\n"
              << "Run 'webhook_receiver --help' for every option.\n";
    return exit_usage;
}

struct settings {
    std::string host;
    unsigned short port = 0;
    keyhook::secret key;
    keyhook::crypto::verification_keys signing;  // whsec_ secrets and whpk_ public keys (B1, B3)
    hs::options server;                          // H13's limits; the policy values unless given
    keyhook::body_limits limits;
    std::optional<examples::store::store_address> store;  // --store: H9's replay table there (B6), else in memory
    std::string replay_scope = default_replay_scope;      // --replay-scope: this receiver's ids in the store (B6)
    std::chrono::microseconds pending_bound = store_replay_table::default_pending_bound;  // --pending-bound
    bool stop_before_write = false;                  // KEYHOOK_RECEIVER_TEST_STOP_BEFORE_WRITE=1 (tests only)
    std::optional<metrics::listen_address> metrics;  // --metrics-listen (O4)
    bool log_requests = true;                        // --log json (O3); none: no request lines
    // The expected key and the signing keys' texts (whole, and after their
    // whsec_ or whpk_ prefix): replaced wherever a logged text holds one (O3).
    std::vector<std::string> log_secrets;
};

// Standard error's writer (O3) while serving: the request lines and the
// program's own lines go through it, whole, in order.
rlog::line_writer* standard_error = nullptr;

// One of the program's own lines ("webhook_receiver: ..."), plain text.
void log(const std::string& line) {
    if (standard_error)
        standard_error->write("webhook_receiver: " + line, rlog::line_writer::kind::notice);
    else
        std::cerr << "webhook_receiver: " << line << std::endl;
}

// One kind of failure, logged at most once a second (O3): the first at once,
// the repeats counted and named in the next line, and in the line that says
// it is over. Thread-safe.
class failure_log {
public:
    explicit failure_log(std::string what) : what_(std::move(what)) {}
    void failed(const std::string& why) {
        std::lock_guard<std::mutex> hold(mutex_);
        const auto repeats = limit_.occurred(steady::now());
        if (!repeats) return;
        log(what_ + why + (*repeats ? " (" + std::to_string(*repeats) + " more since the last report)" : ""));
    }
    void succeeded(const std::string& now_line) {
        std::lock_guard<std::mutex> hold(mutex_);
        if (const auto all = limit_.ended()) log(now_line + " (after " + std::to_string(*all) + " failed operations)");
    }

private:
    std::string what_;
    std::mutex mutex_;
    rlog::repeated_error limit_;
};

// The path a line names: the target without its query or fragment (a query
// may hold the key, api_key), an absolute URL without its user-info (P2).
std::string_view logged_path(std::string_view target, std::string& holder) {
    if (!target.empty() && target.front() != '/' && target.find("://") != std::string_view::npos) {
        holder = keyhook::redact_url(target);
        target = holder;
    }
    return target.substr(0, target.find_first_of("?#"));
}

bool name_is(std::string_view name, std::string_view lower_name) {
    if (name.size() != lower_name.size()) return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] - 'A' + 'a') : name[i];
        if (c != lower_name[i]) return false;
    }
    return true;
}

// What a request carries that a line must never hold (O3): the key it
// presents (header x-api-key, query api_key, Authorization) and its
// signatures (webhook-signature or svix-signature: each entry, and each
// entry's value after "v1," or "v1a,"). Views into `headers` and `target`.
template <class Headers>
void presented_secrets(const Headers& headers, std::string_view target, std::vector<std::string_view>& out) {
    for (const auto& h : headers) {
        const std::string_view name = h.name, value = h.value;
        if (name_is(name, keyhook::api_key_header) || name_is(name, "authorization")) {
            out.push_back(value);
        } else if (name_is(name, "webhook-signature") || name_is(name, "svix-signature")) {
            out.push_back(value);
            for (std::size_t from = 0; from < value.size();) {
                const auto end = std::min(value.find(' ', from), value.size());
                const auto entry = value.substr(from, end - from);
                if (!entry.empty()) out.push_back(entry);
                if (const auto comma = entry.find(','); comma != std::string_view::npos && comma + 1 < entry.size())
                    out.push_back(entry.substr(comma + 1));
                from = end + 1;
            }
        }
    }
    // api_key=VALUE in the query (the query is not logged; the path may hold the same text).
    const auto query = target.find('?');
    if (query == std::string_view::npos) return;
    for (std::size_t at = query + 1; at < target.size();) {
        const auto end = std::min(target.find('&', at), target.size());
        const auto pair = target.substr(at, end - at);
        const auto eq = pair.find('=');
        if (eq != std::string_view::npos && pair.substr(0, eq) == keyhook::api_key_query_parameter &&
            eq + 1 < pair.size())
            out.push_back(pair.substr(eq + 1));
        at = end + 1;
    }
}

// The request line of one answer (O3), written by the line writer's thread.
// tenant and keyId are null: the receiver holds one key, of no tenant.
void log_answer(const settings& s, result counted, std::optional<std::string_view> method,
                std::optional<std::string_view> target, std::vector<std::string_view> secrets, steady::duration took) {
    if (!s.log_requests || !standard_error) return;
    rlog::request_line line;
    line.time = keyhook::to_timestamp(std::chrono::system_clock::now());
    line.method = method;
    std::string holder;
    if (target) line.path = logged_path(*target, holder);
    line.code = metrics::receiver_result_names[static_cast<std::size_t>(counted)];
    line.latency = took;
    for (const auto& secret : s.log_secrets) secrets.push_back(secret);
    line.secrets = std::move(secrets);
    standard_error->write(rlog::format_request_line(line));
}

// Appends `s` as a JSON string: nlohmann's escaping, with ensure_ascii, so
// received text cannot drive the terminal (P1), and bytes that are not UTF-8
// replaced.
void append_json_string(std::string& out, const std::string& s) {
    // Printable ASCII (0x20 to 0x7E; ensure_ascii escapes DEL) other than
    // '"' and '\\' stands for itself: copied, the common case costs no serializer.
    const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u <= 0x7E && c != '"' && c != '\\';
    });
    if (plain) {
        out += '"';
        out += s;
        out += '"';
        return;
    }
    out += nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

// The line printed for an accepted delivery: {"id", "notification" (spec
// 6.2's members in order), "mismatches" when any}. Written member by member:
// the same bytes as an ordered_json built and dumped, in half the time (the
// receiver's speed row, docs/performance.md).
std::string accepted_line(const std::optional<std::string>& id, const keyhook::received_notification& n) {
    std::string out;
    out.reserve(512);
    out += "{\"id\":";
    if (id)
        append_json_string(out, *id);
    else
        out += "null";
    const std::pair<const char*, const std::string*> members[] = {
        {",\"notification\":{\"FolderName\":", &n.folder_name},
        {",\"ServiceName\":", &n.service_name},
        {",\"EntityId\":", &n.entity_id},
        {",\"UserAction\":", &n.user_action},
        {",\"AuditType\":", &n.audit_type},
        {",\"Data\":{\"ProductName\":", &n.folder_name},
        {",\"EngineName\":", &n.service_name},
        {",\"FileName\":", &n.file_name},
        {",\"ProductId\":", &n.entity_id},
        {",\"ServiceVersionId\":", &n.service_version_id},
        {"},\"Tenant\":", &n.tenant},
        {",\"RequestTimeStamp\":", &n.request_time_text},
    };
    for (const auto& [before, value] : members) {
        out += before;
        append_json_string(out, *value);
    }
    out += ",\"RevisionId\":null}";
    if (!n.mismatches.empty()) {
        const char* separator = ",\"mismatches\":[";
        for (const auto& m : n.mismatches) {
            out += separator;
            append_json_string(out, m);
            separator = ",";
        }
        out += ']';
    }
    out += '}';
    return out;
}

// Writes all of `text` to fd, resuming after a signal or a partial write.
bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// The message is the library's: it names fields, never a key or a signature.
hs::response answer(int status, std::string_view text) { return hs::json_answer(status, text); }

// The request as keyhook sees it: method, target (path and query), headers.
keyhook::http_request to_keyhook(hs::request&& req) {
    keyhook::http_request r{std::move(req.method), std::move(req.target), {}, std::move(req.body)};
    r.headers.reserve(req.headers.size());
    for (auto& f : req.headers) r.headers.push_back({std::move(f.name), std::move(f.value), true});
    return r;
}

// Before the body is read: what the receiver refuses on the head alone, and
// the result word counted for it (O4).
std::optional<hs::response> check_head(const hs::request& req, result& counted) {
    if (req.method != "POST") {
        auto r = answer(405, "expected POST, got " + keyhook::quoted_input(req.method, 16));
        r.headers.push_back({"Allow", "POST"});
        counted = result::method;
        return r;
    }
    if (const auto encoding = req.header("Content-Encoding"); encoding && !is_identity_coding(*encoding)) {
        counted = result::encoding;
        return answer(415, "a Content-Encoding is not accepted; send the body as is");
    }
    if (!req.header("Content-Length")) {
        counted = result::length;
        return answer(411, "a body must come with its Content-Length");
    }
    return std::nullopt;
}

// The result word of an answer the HTTP server made by itself (H13).
result server_result(int status) {
    switch (status) {
        case 400:
        case 411: return result::framing;
        case 413:
        case 431: return result::too_large;
        case 408: return result::timeout;
        case 503: return result::overloaded;
        default: return result::error;
    }
}

class receiver {
public:
    receiver(const settings& s, replay_table& replays, metrics::registry& counts)
        : s_(s), replays_(replays), counts_(counts) {}

    // Each answer counted once, by its result word (O4), and logged as one
    // line with that word as its code (O3). A handler that throws is counted
    // and logged by the server's 500 instead.
    hs::response post(hs::request&& req) {
        const auto started = steady::now();
        result counted = result::error;
        const auto request = to_keyhook(std::move(req));
        auto r = answer_post(request, counted);
        counts_.receiver_request(counted);
        if (s_.log_requests) {
            std::vector<std::string_view> secrets;
            presented_secrets(request.headers, request.url, secrets);
            log_answer(s_, counted, request.method, request.url, std::move(secrets), steady::now() - started);
        }
        return r;
    }

    std::optional<hs::response> head(const hs::request& req) {
        const auto started = steady::now();
        result counted = result::error;
        auto r = check_head(req, counted);
        if (r) {
            counts_.receiver_request(counted);
            if (s_.log_requests) {
                std::vector<std::string_view> secrets;
                presented_secrets(req.headers, req.target, secrets);
                log_answer(s_, counted, req.method, req.target, std::move(secrets), steady::now() - started);
            }
        }
        return r;
    }

private:
    hs::response answer_post(const keyhook::http_request& request, result& counted) {
        counted = result::bad_key;
        if (auto key = keyhook::try_authenticate(request, s_.key); !key)
            return answer(keyhook::suggested_http_status(key.error().code), key.error().what());
        std::optional<std::string> id;
        const auto now = keyhook::to_timestamp(std::chrono::system_clock::now());
        std::optional<keyhook::crypto::verified_webhook> verified;
        if (!s_.signing.empty()) {
            auto v = keyhook::crypto::try_verify_signature(s_.signing, request.headers, request.body, now);
            counted = result::bad_signature;
            if (!v) return answer(401, v.error().what());
            verified = std::move(*v);
            id = verified->id;
        }
        auto n = keyhook::try_parse_notification(request.body, s_.limits);
        counted = result::bad_body;
        if (!n) {
            // The server already refused a body over max_bytes (413), so a
            // limit here is the depth: a bad body (400), not a large one.
            const auto code = n.error().code;
            return answer(code == keyhook::errc::limit_exceeded ? 400 : keyhook::suggested_http_status(code),
                          n.error().what());
        }
        if (id) {
            std::chrono::seconds retry_after{1};
            switch (replays_.claim(*id, verified->signed_at, now, retry_after)) {
                case replay_table::outcome::replay:
                    counted = result::replay;
                    return answer(200, "already accepted; not processed again");
                case replay_table::outcome::pending: {
                    counted = result::pending;
                    // B6: not accepted until its line is written; the holder may yet die.
                    auto r = answer(503, "this delivery is being processed by another request; retry later");
                    r.headers.push_back({"Retry-After", std::to_string(retry_after.count())});
                    return r;
                }
                case replay_table::outcome::full: {
                    counted = result::full;
                    auto r = answer(503, "too many deliveries in the replay window; retry later");
                    r.headers.push_back({"Retry-After", "60"});
                    return r;
                }
                case replay_table::outcome::unavailable: {
                    counted = result::unavailable;
                    auto r = answer(503, "the replay table's store is unavailable; retry later");
                    r.headers.push_back({"Retry-After", "5"});
                    return r;
                }
                case replay_table::outcome::claimed: break;
            }
            // Test-only (B6's crash test): stop here, claimed and not written,
            // so the test can kill the receiver at this very point.
            if (s_.stop_before_write) ::raise(SIGSTOP);
        }
        std::string text = accepted_line(id, *n);
        text += '\n';
        {
            // One write(2) a line, whole, before the 200: nothing buffered in
            // this process is lost if it is killed after answering, and no
            // stream machinery runs under the lock (the receiver's speed row).
            std::lock_guard<std::mutex> lock(out_);
            if (!write_all(STDOUT_FILENO, text)) {
                // Not processed: the id is given back, so the sender's retry is.
                if (id) replays_.release(*id);
                counted = result::unwritten;
                auto r = answer(503, "the accepted line could not be written to standard output; retry later");
                r.headers.push_back({"Retry-After", "5"});
                return r;
            }
        }
        if (id) replays_.accept(*id);  // H9, B6: accepted once written, not before
        counted = result::accepted;
        return answer(200, "accepted");
    }

    const settings& s_;
    replay_table& replays_;
    metrics::registry& counts_;
    std::mutex out_;  // one whole line at a time
};

// A whole number from `min` to `max`, or nullopt.
std::optional<long> whole_number(const std::string& text, long min, long max) {
    char* end = nullptr;
    const long n = std::strtol(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0' || n < min || n > max) return std::nullopt;
    return n;
}

// Seconds from `min` to `max`, or nullopt.
std::optional<double> seconds(const std::string& text, double min, double max) {
    char* end = nullptr;
    const double s = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !(s >= min && s <= max)) return std::nullopt;
    return s;
}

}  // namespace

int run_listen_mode(const listen_arguments& args) {
    const std::optional<std::string> listen = args.listen;
    const std::string& key_env = args.key_env;
    settings s;
    s.server.max_body_bytes = s.limits.max_bytes;
    s.server.threads = std::max(2U, std::thread::hardware_concurrency());
    if (args.request_timeout) {
        const auto t = seconds(*args.request_timeout, 0.01, 3600);
        if (!t) return usage(args.request_timeout_name + ": expected seconds from 0.01 to 3600");
        s.server.request_deadline = std::chrono::milliseconds(static_cast<long long>(*t * 1000));
    }
    if (args.max_connections) {
        const auto n = whole_number(*args.max_connections, 1, 100000);
        if (!n) return usage("--max-connections: expected 1 to 100000");
        s.server.max_connections = static_cast<std::size_t>(*n);
    }
    if (args.threads) {
        const auto n = whole_number(*args.threads, 1, 256);
        if (!n) return usage("--threads: expected 1 to 256");
        s.server.threads = static_cast<unsigned>(*n);
    }
    if (args.store) {
        std::string why;
        s.store = examples::store::parse_store_address(*args.store, examples::store::store_use::replay_ids, why);
        if (!s.store) return usage(why);
    }
    if (args.replay_scope) {
        s.replay_scope = *args.replay_scope;
        const bool printable =
            std::all_of(s.replay_scope.begin(), s.replay_scope.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
        if (s.replay_scope.empty() || s.replay_scope.size() > 128 || !printable)
            return usage("--replay-scope: expected a name of 1 to 128 printable ASCII characters");
    }
    if (args.pending_bound) {
        const auto t = seconds(*args.pending_bound, 0.1, 3600);
        if (!t) return usage("--pending-bound: expected seconds from 0.1 to 3600");
        s.pending_bound = std::chrono::microseconds(static_cast<long long>(*t * 1e6));
    }
    if (const auto at = metrics::parse_listen_address(*listen)) {
        s.host = at->host;
        s.port = at->port;
    } else {
        return usage("--listen: expected HOST:PORT, got " + keyhook::quoted_input(*listen));
    }
    if (args.log_format) {
        const std::string word = examples::cli::lower(*args.log_format);  // O1: any case
        if (word != "json" && word != "none")
            return usage("--log: expected json or none, got " + keyhook::quoted_input(*args.log_format));
        s.log_requests = word == "json";
    }
    if (args.metrics_listen) {
        if (!metrics::built()) return usage(metrics::not_built_message());
        s.metrics = metrics::parse_listen_address(*args.metrics_listen);
        if (!s.metrics)
            return usage("--metrics-listen: expected HOST:PORT, got " + keyhook::quoted_input(*args.metrics_listen));
        // O1: one address for both cannot listen twice; said as the usage error it is.
        if (s.metrics->port != 0 && s.metrics->host == s.host && s.metrics->port == s.port)
            return usage("--metrics-listen: " + keyhook::quoted_input(*args.metrics_listen) +
                         " is --listen's address too; give the metrics their own port");
    }
    const char* key_text = std::getenv(key_env.c_str());
    if (key_text == nullptr || *key_text == '\0')
        return usage("environment variable " + keyhook::quoted_input(key_env) + " is not set");
    s.key = keyhook::secret(key_text);
    s.log_secrets.push_back(s.key.reveal());
    if (const char* secrets = std::getenv("KEYHOOK_SIGNING_SECRET"); secrets != nullptr) {
        // Each key's text, and its text after the prefix, never logged (O3).
        std::string_view all(secrets);
        for (std::size_t from = 0; from < all.size();) {
            const auto end = std::min(all.find_first_of(" \t\n", from), all.size());
            const auto token = all.substr(from, end - from);
            if (!token.empty()) s.log_secrets.emplace_back(token);
            if (const auto under = token.find('_'); under != std::string_view::npos && under + 1 < token.size())
                s.log_secrets.emplace_back(token.substr(under + 1));
            from = end + 1;
        }
        // Space-separated whsec_ and whpk_ keys; the library's message quotes no key material.
        auto parsed = keyhook::crypto::try_parse_verification_keys(secrets);
        if (!parsed) {
            if (parsed.error().code == keyhook::errc::missing_member)
                return usage("KEYHOOK_SIGNING_SECRET is set but holds no key");
            // The library's path ("signing_keys[1]") in the variable's words: its key 2.
            std::string where;
            const auto& path = parsed.error().path;
            if (const auto open = path.find('['); open != std::string::npos) {
                const auto index = std::strtoul(path.c_str() + open + 1, nullptr, 10);
                where = ", its key " + std::to_string(index + 1) + " (of the space-separated list)";
            }
            return usage("KEYHOOK_SIGNING_SECRET" + where + ": " + parsed.error().message);
        }
        s.signing = std::move(*parsed);
    }
    if (const char* stop = std::getenv("KEYHOOK_RECEIVER_TEST_STOP_BEFORE_WRITE")) s.stop_before_write = *stop == '1';

    // Standard error's writer (O3) from here to the end; closed before a
    // usage error is written to std::cerr itself, so no two writers interleave.
    rlog::line_writer lines("webhook_receiver");
    standard_error = &lines;
    const auto close_lines = [&lines] {
        standard_error = nullptr;
        lines.close(std::chrono::seconds{2});
    };
    if (s.store && s.signing.empty())
        log("note: --store keeps the webhook-ids of signed deliveries, and without KEYHOOK_SIGNING_SECRET none is "
            "signed");

    // SIGINT and SIGTERM are taken by a thread of their own (sigwait), so
    // stopping the server never runs in a signal handler. Blocked before the
    // server's threads start, so none of them takes the signal instead.
    // A reader of standard output that goes away must not kill the receiver:
    // the write then fails with EPIPE, and the delivery is answered 503 and
    // its id given back (H9, B6), as when the output cannot be written at all.
    std::signal(SIGPIPE, SIG_IGN);
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    // H9's replay table: in memory (65,536 ids), or in the store, shared.
    std::unique_ptr<replay_table> replays;
    if (s.store) {
        try {
            replays =
                std::make_unique<store_replay_table>(examples::store::open_replay_store(*s.store, s.replay_scope),
                                                     keyhook::crypto::default_signature_tolerance, s.pending_bound);
        } catch (const examples::store::store_not_built& e) {
            close_lines();
            return usage(e.what());
        } catch (const std::exception& e) {
            log(e.what());
            close_lines();
            return exit_failure;
        }
    } else {
        replays = std::make_unique<memory_replay_table>(keyhook::crypto::default_signature_tolerance, 65536);
    }
    // O4: every answer counted; the replay store's outcomes make /healthz.
    // O3: its failures logged at most once a second, with their count.
    metrics::registry counts(metrics::program::webhook_receiver);
    metrics::health health;
    failure_log store_log("");
    if (auto* stored = dynamic_cast<store_replay_table*>(replays.get())) {
        stored->set_observer([&counts, &health, &store_log](bool answered) {
            if (answered) {
                health.store_ok();
                store_log.succeeded("the replay store answers again");
            } else {
                health.store_failed();
                counts.store_error(metrics::store::replay);
            }
        });
        stored->set_reporter([&store_log](const std::string& what) { store_log.failed(what); });
        health.set_probe([stored] { return stored->probe(); });
    }
    s.server.server_answered = [&counts, &s](int status, steady::duration took) {
        const auto counted = server_result(status);
        counts.receiver_request(counted);
        log_answer(s, counted, std::nullopt, std::nullopt, {}, took);
    };
    receiver r(s, *replays, counts);
    hs::server server(
        s.server, [&r](hs::request&& req) { return r.post(std::move(req)); },
        [&r](const hs::request& req) { return r.head(req); });
    metrics::listener metrics_listener(counts, health);
    std::string why;
    if (s.metrics) {
        const auto metrics_port = metrics_listener.start(*s.metrics, why);
        if (!metrics_port) {
            log("cannot listen on " + keyhook::quoted_input(*args.metrics_listen) + " (--metrics-listen): " + why);
            close_lines();
            return exit_failure;
        }
        log("metrics on " + s.metrics->host + ':' + std::to_string(*metrics_port));
    }
    const auto port = server.listen(s.host, s.port, why);
    if (!port) {
        log("cannot listen on " + keyhook::quoted_input(*listen) + ": " + why);
        close_lines();
        return exit_failure;
    }
    log("listening on " + s.host + ':' + std::to_string(*port));

    std::atomic<bool> stopping{false};
    std::thread stopper([&server, &stopping, &health, stop_signals] {
        int signal = 0;
        sigwait(&stop_signals, &signal);
        stopping = true;
        health.shutting_down();  // /healthz says so until the metrics listener stops
        server.stop();           // open connections are dropped: each request has a deadline anyway
    });
    server.run();
    // run() returned on its own (it should not): wake the stopper.
    if (!stopping) pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    metrics_listener.stop();
    log("stopped");
    close_lines();
    return exit_ok;
}

}  // namespace webhook_receiver

#else  // built without Boost.Beast or keyhook::crypto

namespace webhook_receiver {

int run_listen_mode(const listen_arguments&) {
    std::cerr << "webhook_receiver: --listen is not available: this build has no Boost.Beast "
                 "(Debian: libboost1.81-dev) or no keyhook::crypto (OpenSSL); reconfigure with them\n";
    return 2;
}

}  // namespace webhook_receiver

#endif
