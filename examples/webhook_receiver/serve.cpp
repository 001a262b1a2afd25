// webhook_receiver --listen: spec 4.4, H7, H9 and B1 over HTTP, with cpp-httplib.
//
//   KEYHOOK_RECEIVER_KEY=<key> [KEYHOOK_SIGNING_SECRET="whsec_... whpk_..."]
//     webhook_receiver --listen HOST:PORT [--key-env NAME] [--read-timeout S]
//
// Each request, in this order (the first failure answers):
//   405  any method but POST;
//   411, 415, 431  a chunked or unsized body, a compressed body, over 100 header
//        fields (refused before the body is read);
//   413  a body over 1 MiB (refused while it is read, before any parsing);
//   401  no key, or a wrong one, in header x-api-key or query api_key (H7;
//        400 when both are present and differ, or api_key is malformed);
//   401  when KEYHOOK_SIGNING_SECRET is set: a missing, stale (more than 5
//        minutes either way) or wrong Standard Webhooks signature (B1; the
//        library reads the older svix-* header names too; keys of any
//        non-empty length verify; whpk_ public keys verify v1a entries, B3,
//        and may be mixed with whsec_ secrets);
//   200  a webhook-id accepted before within the tolerance window: answered
//        again, not processed again (H9);
//   400  a body nested deeper than 16 (counted before parsing) or malformed;
//   200  accepted: one JSON line on standard output,
//        {"id": webhook-id or null when unsigned, "notification": {spec 6.2}}.
// Port 0 picks a free port; "listening on HOST:PORT" goes to standard error.
// SIGINT and SIGTERM stop it cleanly (exit 0). Exit 2: usage, or cannot listen.
#include "serve.hpp"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if KEYHOOK_RECEIVER_LISTEN

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/received_notification.hpp"
#include "keyhook/receiving.hpp"

namespace webhook_receiver {
namespace {

constexpr int exit_ok = 0;
constexpr int exit_usage = 2;

int usage(std::string_view problem) {
    std::cerr << "webhook_receiver: " << problem << "\n"
              << "usage: KEYHOOK_RECEIVER_KEY=<key> webhook_receiver --listen HOST:PORT [--key-env NAME] "
                 "[--read-timeout S]\n";
    return exit_usage;
}

// The deepest nesting of arrays and objects in `body`, strings skipped; stops
// counting past `limit`. Linear, no recursion: run before the parser sees it.
std::size_t nesting_depth(std::string_view body, std::size_t limit) {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : body) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
            if (deepest > limit) return deepest;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

// H9: webhook-ids accepted within the tolerance window. An id older than the
// window would be refused as stale anyway, so it is forgotten; at most
// `capacity` ids are held, and a full table answers 503 rather than forget one
// early (which would let a replay through).
class replay_window {
public:
    replay_window(std::chrono::seconds window, std::size_t capacity) : window_(window), capacity_(capacity) {}

    [[nodiscard]] bool seen(const std::string& id) const { return ids_.count(id) != 0; }
    [[nodiscard]] bool full(keyhook::timestamp now) {
        prune(now);
        return ids_.size() >= capacity_;
    }
    void remember(const std::string& id, keyhook::timestamp signed_at) { ids_.emplace(id, signed_at); }

private:
    void prune(keyhook::timestamp now) {
        for (auto it = ids_.begin(); it != ids_.end();)
            // Saturating (outside finding 10): a window of seconds::max() keeps every id, never wraps.
            it = keyhook::detail::add_saturating(keyhook::detail::add_saturating(it->second, window_), window_) < now
                     ? ids_.erase(it)
                     : std::next(it);
    }
    std::chrono::seconds window_;
    std::size_t capacity_;
    std::map<std::string, keyhook::timestamp> ids_;
};

struct settings {
    std::string host;
    int port = 0;
    keyhook::secret key;
    keyhook::crypto::verification_keys signing;  // whsec_ secrets and whpk_ public keys (B1, B3)
    std::chrono::milliseconds read_timeout{5000};
    keyhook::body_limits limits;
};

nlohmann::ordered_json notification_json(const keyhook::received_notification& n) {
    nlohmann::ordered_json data;
    data["ProductName"] = n.folder_name;
    data["EngineName"] = n.service_name;
    data["FileName"] = n.file_name;
    data["ProductId"] = n.entity_id;
    data["ServiceVersionId"] = n.service_version_id;
    nlohmann::ordered_json j;
    j["FolderName"] = n.folder_name;
    j["ServiceName"] = n.service_name;
    j["EntityId"] = n.entity_id;
    j["UserAction"] = n.user_action;
    j["AuditType"] = n.audit_type;
    j["Data"] = std::move(data);
    j["Tenant"] = n.tenant;
    j["RequestTimeStamp"] = n.request_time_text;
    j["RevisionId"] = nullptr;
    return j;
}

void answer(httplib::Response& res, int status, std::string_view text) {
    res.status = status;
    // The message is the library's: it names fields, never a key or a signature.
    nlohmann::json body;
    body[status < 300 ? "result" : "error"] = std::string(text);
    res.set_content(body.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
}

// The request as keyhook sees it: method, target (path and query), headers.
keyhook::http_request to_keyhook(const httplib::Request& req) {
    keyhook::http_request r{req.method, req.target, {}, req.body};
    for (const auto& [name, value] : req.headers) r.headers.push_back({name, value, true});
    return r;
}

class receiver {
public:
    explicit receiver(const settings& s) : s_(s), replays_(keyhook::crypto::default_signature_tolerance, 65536) {}

    void post(const httplib::Request& req, httplib::Response& res) {
        const auto request = to_keyhook(req);
        if (auto key = keyhook::try_authenticate(request, s_.key); !key)
            return answer(res, keyhook::suggested_http_status(key.error().code), key.error().what());
        std::optional<std::string> id;
        const auto now = keyhook::to_timestamp(std::chrono::system_clock::now());
        std::optional<keyhook::crypto::verified_webhook> verified;
        if (!s_.signing.empty()) {
            auto v = keyhook::crypto::try_verify_signature(s_.signing, request.headers, request.body, now);
            if (!v) return answer(res, 401, v.error().what());
            verified = std::move(*v);
            id = verified->id;
        }
        if (nesting_depth(request.body, s_.limits.max_depth) > s_.limits.max_depth)
            return answer(res, 400,
                          "the body nests deeper than " + std::to_string(s_.limits.max_depth) + "; not parsed");

        std::lock_guard<std::mutex> lock(mutex_);
        if (id && replays_.seen(*id)) return answer(res, 200, "already accepted; not processed again");
        if (id && replays_.full(now)) {
            res.set_header("Retry-After", "60");
            return answer(res, 503, "too many deliveries in the replay window; retry later");
        }
        auto n = keyhook::try_parse_notification(request.body, s_.limits);
        if (!n) return answer(res, keyhook::suggested_http_status(n.error().code), n.error().what());
        if (id) replays_.remember(*id, verified->signed_at);

        nlohmann::ordered_json line;
        line["id"] = id ? nlohmann::ordered_json(*id) : nlohmann::ordered_json(nullptr);
        line["notification"] = notification_json(*n);
        if (!n->mismatches.empty()) line["mismatches"] = n->mismatches;
        // ensure_ascii: received text cannot drive the terminal (P1).
        std::cout << line.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace) << std::endl;
        answer(res, 200, "accepted");
    }

private:
    const settings& s_;
    std::mutex mutex_;
    replay_window replays_;
};

// "HOST:PORT", "[v6]:PORT".
bool split_listen(std::string_view text, std::string& host, int& port) {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size() || text.size() - colon > 6)
        return false;
    std::string_view h = text.substr(0, colon);
    if (h.front() == '[') {
        if (h.size() < 3 || h.back() != ']') return false;
        h = h.substr(1, h.size() - 2);
    }
    long p = 0;
    for (const char c : text.substr(colon + 1)) {
        if (c < '0' || c > '9') return false;
        p = p * 10 + (c - '0');
    }
    if (p > 65535) return false;
    host = std::string(h);
    port = static_cast<int>(p);
    return true;
}

}  // namespace

std::optional<int> run_listen_mode(int argc, char** argv) {
    std::optional<std::string> listen;
    std::string key_env = "KEYHOOK_RECEIVER_KEY";
    double read_timeout = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--listen" || arg.substr(0, 9) == "--listen=") {
            if (arg == "--listen" && i + 1 == argc) return usage("--listen needs HOST:PORT");
            listen = arg == "--listen" ? std::string(argv[++i]) : std::string(arg.substr(9));
        }
    }
    if (!listen) return std::nullopt;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--listen") {
            ++i;
        } else if (arg.substr(0, 9) == "--listen=") {
        } else if (arg == "--key-env" && i + 1 < argc) {
            key_env = argv[++i];
        } else if (arg == "--read-timeout" && i + 1 < argc) {
            char* end = nullptr;
            read_timeout = std::strtod(argv[++i], &end);
            if (*end != '\0' || !(read_timeout >= 0.01 && read_timeout <= 3600))
                return usage("--read-timeout: expected seconds from 0.01 to 3600");
        } else {
            return usage("--listen takes only --key-env NAME and --read-timeout S, not " +
                         keyhook::detail::quote_input(arg));
        }
    }
    settings s;
    if (!split_listen(*listen, s.host, s.port))
        return usage("--listen: expected HOST:PORT, got " + keyhook::detail::quote_input(*listen));
    const char* key_text = std::getenv(key_env.c_str());
    if (key_text == nullptr || *key_text == '\0')
        return usage("environment variable " + keyhook::detail::quote_input(key_env) + " is not set");
    s.key = keyhook::secret(key_text);
    if (const char* secrets = std::getenv("KEYHOOK_SIGNING_SECRET"); secrets != nullptr) {
        // Space-separated whsec_ and whpk_ keys; the library's message quotes no key material.
        auto parsed = keyhook::crypto::try_parse_verification_keys(secrets);
        if (!parsed)
            return usage(parsed.error().code == keyhook::errc::missing_member
                             ? std::string("KEYHOOK_SIGNING_SECRET is set but holds no key")
                             : "KEYHOOK_SIGNING_SECRET, " + parsed.error().path + ": " + parsed.error().message);
        s.signing = std::move(*parsed);
    }
    s.read_timeout = std::chrono::milliseconds(static_cast<long long>(read_timeout * 1000));

    // SIGINT and SIGTERM are taken by a thread of their own (sigwait), so
    // stopping the server never runs in a signal handler.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    httplib::Server server;
    receiver r(s);
    server.set_payload_max_length(s.limits.max_bytes);
    server.set_read_timeout(s.read_timeout);
    server.set_write_timeout(s.read_timeout);
    // An idle kept-alive connection is closed as soon as a slow one would be.
    server.set_keep_alive_timeout(std::max<time_t>(1, static_cast<time_t>(std::ceil(read_timeout))));
    // cpp-httplib applies its size limit to Content-Length alone: it would
    // inflate a compressed body, and read a chunked or unsized one, whole and
    // unbounded. Such requests are refused before any of the body is read
    // (this handler runs before cpp-httplib reads it).
    server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
        if (req.headers.size() > 100) {
            answer(res, 431, "more than 100 header fields");
            res.set_header("Connection", "close");
            return httplib::Server::HandlerResponse::Handled;
        }
        if (req.method != "POST") return httplib::Server::HandlerResponse::Unhandled;
        const std::string encoding = req.get_header_value("Content-Encoding");
        if (!encoding.empty() && !keyhook::detail::ascii_iequal(encoding, "identity")) {
            answer(res, 415, "a Content-Encoding is not accepted; send the body as is");
            res.set_header("Connection", "close");
            return httplib::Server::HandlerResponse::Handled;
        }
        if (req.has_header("Transfer-Encoding") || !req.has_header("Content-Length")) {
            answer(res, 411, "a body must come with its Content-Length");
            res.set_header("Connection", "close");
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    server.Post(".*", [&r](const httplib::Request& req, httplib::Response& res) { r.post(req, res); });
    const auto not_post = [](const httplib::Request& req, httplib::Response& res) {
        res.set_header("Allow", "POST");
        answer(res, 405, "expected POST, got " + keyhook::detail::quote_input(req.method, 16));
    };
    server.Get(".*", not_post).Put(".*", not_post).Patch(".*", not_post).Delete(".*", not_post).Options(".*", not_post);
    // cpp-httplib answers 413 itself while reading an oversized body.
    server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (res.status == 413 && res.body.empty()) answer(res, 413, "the body exceeds 1048576 bytes");
    });

    const int port =
        s.port == 0 ? server.bind_to_any_port(s.host) : (server.bind_to_port(s.host, s.port) ? s.port : -1);
    if (port < 0) {
        std::cerr << "webhook_receiver: cannot listen on " << keyhook::detail::quote_input(*listen) << '\n';
        return exit_usage;
    }
    std::cerr << "webhook_receiver: listening on " << s.host << ':' << port << std::endl;

    std::atomic<bool> stopping{false}, returned{false};
    std::thread stopper([&server, &stopping, &returned, stop_signals] {
        int signal = 0;
        sigwait(&stop_signals, &signal);
        stopping = true;
        server.stop();
        // cpp-httplib's timeouts are per read, so a client that keeps
        // trickling bytes holds its worker, and the server, for ever: after a
        // grace period the process ends anyway, what it printed flushed.
        for (int i = 0; i < 40 && !returned; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!returned) {
            std::cout.flush();
            std::cerr << "webhook_receiver: stopped (a connection still open was dropped)" << std::endl;
            std::_Exit(exit_ok);
        }
    });
    server.listen_after_bind();
    returned = true;
    // listen_after_bind returned on its own (an error): wake the stopper.
    if (!stopping) pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    std::cerr << "webhook_receiver: stopped" << std::endl;
    return exit_ok;
}

}  // namespace webhook_receiver

#else  // built without cpp-httplib or keyhook::crypto

namespace webhook_receiver {

std::optional<int> run_listen_mode(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--listen" || arg.substr(0, 9) == "--listen=") {
            std::cerr << "webhook_receiver: --listen is not available: this build has no cpp-httplib "
                         "(Debian: libcpp-httplib-dev) or no keyhook::crypto (OpenSSL); reconfigure with them\n";
            return 2;
        }
    }
    return std::nullopt;
}

}  // namespace webhook_receiver

#endif
