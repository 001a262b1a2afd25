// The examples' HTTP client (webhook_deliver, key_audit --url): one request
// with libcurl. No redirect is followed, every address the host name resolves
// to is checked by the caller's rule just before the socket is opened (so DNS
// cannot rebind a request into a refused range: rule B4), TLS certificates and
// host names are verified, and proxies from the environment are ignored (a
// proxy would hide the address).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <curl/curl.h>

#include "keyhook/endpoint.hpp"
#include "keyhook/http.hpp"

namespace examples::http {

// The H1 check of an address about to be connected to: nullopt to allow it,
// else why not.
using address_rule = std::function<std::optional<std::string>(const std::string& ip)>;

// B4 for webhooks: the address must pass H1 under `policy`.
inline address_rule h1_rule(keyhook::endpoint_policy policy) {
    return [policy](const std::string& ip) -> std::optional<std::string> {
        const auto checked = keyhook::try_check_address(ip, policy);
        if (checked) return std::nullopt;
        return checked.error().message;
    };
}

struct client_options {
    address_rule allow_address;  // required
    bool allow_http = false;     // plain http besides https
    std::size_t max_body = 0;    // response bytes kept in response::body; the rest is read and dropped
    std::chrono::milliseconds connect_timeout{10000};
    std::chrono::milliseconds total_timeout{30000};
    std::vector<std::string> resolve;  // curl's HOST:PORT:ADDRESS entries (--resolve)
};

// How one request ended: a status (and the Retry-After it carried), or a
// transport error; `timed_out` tells a time-out from other failures.
struct response {
    std::optional<int> status;
    std::optional<std::string> retry_after;
    std::string body;
    bool body_truncated = false;
    std::string error;
    bool timed_out = false;
    bool reset = false;  // the connection dropped or closed without an answer
    std::optional<std::string> content_type;
};

namespace detail {

struct socket_guard {
    const address_rule* allow = nullptr;
    std::string refused;  // why the last address was refused, for the error text
};

struct body_sink {
    response* r = nullptr;
    std::size_t max = 0;
};

// B4: the H1 address check on each address curl is about to connect to.
inline curl_socket_t open_checked_socket(void* clientp, curlsocktype purpose, curl_sockaddr* address) {
    auto& guard = *static_cast<socket_guard*>(clientp);
    if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = nullptr;
    if (address->family == AF_INET)
        raw = &reinterpret_cast<const sockaddr_in*>(&address->addr)->sin_addr;
    else if (address->family == AF_INET6)
        raw = &reinterpret_cast<const sockaddr_in6*>(&address->addr)->sin6_addr;
    if (raw == nullptr || inet_ntop(address->family, raw, text, sizeof text) == nullptr) {
        guard.refused = "an address of an unknown family";
        return CURL_SOCKET_BAD;
    }
    if (auto why = (*guard.allow)(text)) {
        guard.refused = std::move(*why);
        return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype, address->protocol);
}

inline std::size_t keep_body(char* data, std::size_t size, std::size_t n, void* userdata) {
    auto& sink = *static_cast<body_sink*>(userdata);
    const std::size_t bytes = size * n;
    const std::size_t room = sink.max - sink.r->body.size();
    sink.r->body.append(data, bytes < room ? bytes : room);
    if (bytes > room) sink.r->body_truncated = true;
    return bytes;
}

inline std::size_t read_header(char* data, std::size_t size, std::size_t n, void* userdata) {
    auto& r = *static_cast<response*>(userdata);
    std::string_view line(data, size * n);
    // A new status line (after a 1xx) starts a new header block.
    if (line.substr(0, 5) == "HTTP/") r.retry_after.reset();
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return size * n;
    auto value = line.substr(colon + 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.remove_suffix(1);
    if (keyhook::header_name_equal(line.substr(0, colon), "Retry-After")) r.retry_after = std::string(value);
    if (keyhook::header_name_equal(line.substr(0, colon), "Content-Type")) r.content_type = std::string(value);
    return size * n;
}

struct easy_free {
    void operator()(CURL* c) const noexcept { curl_easy_cleanup(c); }
};
struct slist_free {
    void operator()(curl_slist* l) const noexcept { curl_slist_free_all(l); }
};

}  // namespace detail

// Sends `request` (its URL, headers and body as given) and returns how it ended.
inline response send(const keyhook::http_request& request, const client_options& options) {
    response r;
    std::unique_ptr<CURL, detail::easy_free> curl(curl_easy_init());
    if (!curl) {
        r.error = "libcurl could not start a transfer";
        return r;
    }
    std::unique_ptr<curl_slist, detail::slist_free> headers;
    const auto append = [&headers](const std::string& line) {
        curl_slist* next = curl_slist_append(headers.get(), line.c_str());
        if (next) {
            (void)headers.release();
            headers.reset(next);
        }
        return next != nullptr;
    };
    for (const auto& h : request.headers) append(h.name + ": " + h.value);
    append("Expect:");  // no 100-continue round trip
    std::unique_ptr<curl_slist, detail::slist_free> resolve;
    for (const auto& entry : options.resolve) {
        curl_slist* next = curl_slist_append(resolve.get(), entry.c_str());
        if (next) {
            (void)resolve.release();
            resolve.reset(next);
        }
    }

    detail::socket_guard guard{&options.allow_address, {}};
    detail::body_sink sink{&r, options.max_body};
    char message[CURL_ERROR_SIZE] = {};
    CURL* c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
    if (request.method == "GET") {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, options.allow_http ? "http,https" : "https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options.total_timeout.count()));
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, &detail::open_checked_socket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &guard);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &detail::keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &detail::read_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, message);
    if (resolve) curl_easy_setopt(c, CURLOPT_RESOLVE, resolve.get());

    const CURLcode code = curl_easy_perform(c);
    if (code == CURLE_OK) {
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        r.status = static_cast<int>(status);
        return r;
    }
    r.retry_after.reset();
    r.timed_out = code == CURLE_OPERATION_TIMEDOUT;
    r.reset =
        code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR || code == CURLE_GOT_NOTHING || code == CURLE_PARTIAL_FILE;
    if (!guard.refused.empty())
        r.error = "refused before connecting: " + guard.refused;
    else
        r.error = message[0] != '\0' ? std::string(message) : std::string(curl_easy_strerror(code));
    return r;
}

}  // namespace examples::http
