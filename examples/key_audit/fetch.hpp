// key_audit --url BASE_URL --tenant TENANT [--page-size N] [--timeout S]: the
// list call (spec 4.1, L1, L2) made by key_audit itself, every page of it.
//
// The bearer token comes from the environment variable KEYHOOK_TOKEN, never
// from the command line, and is never printed. Each request is built by the
// library (try_list_keys_request, next_page_query); pages are fetched until
// the first page's `count` is covered; records are merged by id (a record seen
// on two pages counts once) and handed to the file-mode audit as one list-call
// response, so every output is the one the same keys give from a file.
//
// Transport: https with certificate and host name verification; plain http
// only when every address the host resolves to is a loopback address; no
// redirects, no proxy from the environment; a connect limit of min(S, 10) s and
// an overall limit of S s per request (--timeout, default 30). A 5xx answer, a
// reset connection or an empty reply is retried up to 3 times, 0.25 s, 0.5 s
// then 1 s apart. Exit status 3 for a network or HTTP failure (401/403 say
// the token was refused for the tenant), 2 for a usage error (also: --url in
// a build without libcurl), and the file mode's statuses otherwise.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/api_key.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/key_list_request.hpp"
#include "keyhook/secret.hpp"

#if KEYHOOK_KEY_AUDIT_URL
#include <unistd.h>

#include "shared/curl_client.hpp"
#endif

namespace key_audit::fetch {

inline constexpr int exit_network = 3;
inline constexpr int exit_usage_error = 2;
// B7: however many pages the platform claims, key_audit makes at most this many requests.
inline constexpr std::int64_t max_page_requests = 10000;

struct url_options {
    std::optional<std::string> url;
    std::optional<std::string> tenant;
    std::int64_t page_size = keyhook::default_list_page_size;
    double timeout_seconds = 30;
};

// Whether url's scheme is https, in any case (RFC 3986 schemes are
// case-insensitive; keyhook's list request accepts "HTTPS://" too).
inline bool is_https_url(std::string_view url) {
    constexpr std::string_view scheme = "https://";
    if (url.size() < scheme.size()) return false;
    for (std::size_t i = 0; i < scheme.size(); ++i) {
        const char c = url[i] >= 'A' && url[i] <= 'Z' ? static_cast<char>(url[i] - 'A' + 'a') : url[i];
        if (c != scheme[i]) return false;
    }
    return true;
}

// The URL as it may be shown: no user-info, no query.
inline std::string shown_url(std::string_view url) {
    std::string s(url.substr(0, url.find_first_of("?#")));
    const auto scheme = s.find("://");
    const auto start = scheme == std::string::npos ? 0 : scheme + 3;
    const auto at = s.find('@', start);
    if (at != std::string::npos && at < s.find('/', start)) s.erase(start, at + 1 - start);
    return keyhook::quoted_input(s, 256);
}

// Whether `c` may be part of a bearer token (RFC 6750's b64token: letters,
// digits, - . _ ~ + / and a trailing =).
inline bool is_token_char(char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
}

// What the service writes may echo the bearer token (a `message` quoting the
// Authorization header). Rule O1: the token is blanked only where the whole
// of it occurs, as a word of its own (no token character right before or
// after it), and so is a prefix of 8 or more of its characters that a quote's
// length limit cut short (right before quoted_input's '"...'). Nothing else
// is touched: a short token's characters inside other words ("e" in
// "resolve") stay as they are; blanking them would garble the message and
// show where they occur.
template <class T>
std::string without_token(const T& what, std::string_view token) {
    std::ostringstream os;
    os << what;
    const std::string s = os.str();
    if (token.empty()) return s;
    constexpr std::string_view cut_marker = "\"...";
    constexpr std::size_t min_cut_prefix = 8;
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        std::size_t n = 0;
        if (i == 0 || !is_token_char(s[i - 1]))
            while (n < token.size() && i + n < s.size() && s[i + n] == token[n]) ++n;
        const bool whole = n == token.size() && (i + n == s.size() || !is_token_char(s[i + n]));
        const bool cut = n >= min_cut_prefix && s.compare(i + n, cut_marker.size(), cut_marker) == 0;
        if (n > 0 && (whole || cut)) {
            out += "[redacted]";
            i += n;
        } else {
            out += s[i++];
        }
    }
    return out;
}

// Valid records of every page, merged by id, as one list-call response.
inline std::string merged_response(std::int64_t count, std::int64_t page_size,
                                   const std::vector<keyhook::api_key>& records) {
    nlohmann::ordered_json result = nlohmann::ordered_json::array();
    for (const auto& k : records) result.push_back(k);
    nlohmann::ordered_json data;
    data["count"] = count;
    data["page"] = 1;
    data["pageSize"] = page_size;
    data["result"] = std::move(result);
    nlohmann::ordered_json doc;
    doc["status"] = "success";
    doc["data"] = std::move(data);
    return doc.dump();
}

// Every page of the list call, merged; `text` gets one list-call response.
// Returns 0, or an exit status after writing the reason to `err`.
inline int fetch_all(const url_options& o, std::ostream& err, std::string& text) {
#if !KEYHOOK_KEY_AUDIT_URL
    (void)o;
    (void)text;
    err << "key_audit: --url is not available: this build has no libcurl (Debian: libcurl4-openssl-dev); "
           "reconfigure with it, or save the list call's response to a file and pass that\n";
    return exit_usage_error;
#else
    using keyhook::quoted_input;
    const char* token = std::getenv("KEYHOOK_TOKEN");
    if (token == nullptr || *token == '\0') {
        err << "key_audit: --url: set the bearer token in the environment variable KEYHOOK_TOKEN\n";
        return exit_usage_error;
    }
    keyhook::key_list_query query;
    query.base_url = *o.url;
    query.tenant = *o.tenant;
    query.size = o.page_size;
    query.token = keyhook::secret(token);
    auto first = keyhook::try_list_keys_request(query);
    if (!first) {
        err << "key_audit: --url: " << first.error() << '\n';
        return exit_usage_error;
    }
    const bool https = is_https_url(*o.url);

    examples::http::client_options client;
    client.allow_http = !https;
    // Plain http carries the token in clear: only to this machine.
    client.allow_address = [https](const std::string& ip) -> std::optional<std::string> {
        if (https) return std::nullopt;
        const auto parsed = keyhook::try_parse_ip_address(ip);
        if (parsed && keyhook::classify_address(*parsed) == keyhook::address_class::loopback) return std::nullopt;
        return "plain http is allowed only to a loopback address, and the host resolved to " + quoted_input(ip) +
               "; use https";
    };
    client.max_body = std::size_t{256} << 20;
    client.total_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_seconds * 1000));
    client.connect_timeout = std::min(client.total_timeout, std::chrono::milliseconds(10000));
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        err << "key_audit: libcurl could not be initialised\n";
        return exit_network;
    }
    const bool progress = isatty(STDERR_FILENO) == 1;
    const std::string where = "tenant " + quoted_input(*o.tenant) + " at " + shown_url(*o.url);

    std::vector<keyhook::api_key> records;
    std::unordered_set<std::string> seen;
    // B7: the first page's count and pageSize hold for the whole read; pages
    // are numbered by the pageSize the platform answers.
    std::int64_t count = -1, page_size = o.page_size, total_pages = 1, max_requests = 1, requests = 0;
    std::optional<keyhook::key_list_query> next = query;
    int status = 0;
    const auto fail = [&](const std::string& why) {
        err << "key_audit: " << where << ": " << why << '\n';
        status = exit_network;
    };
    const auto said = [](std::int64_t page, std::int64_t c, std::int64_t size) {
        return "page " + std::to_string(page) + " said count " + std::to_string(c) + ", pageSize " +
               std::to_string(size);
    };
    while (next) {
        const std::int64_t asked_page = next->page;
        const auto request = keyhook::try_list_keys_request(*next);
        if (!request) {
            err << "key_audit: --url: " << request.error() << '\n';
            // Past the first page the query holds the platform's pageSize: its answer is at fault.
            status = asked_page == 1 ? exit_usage_error : exit_network;
            break;
        }
        ++requests;
        examples::http::response r;
        static constexpr std::chrono::milliseconds backoff[] = {
            std::chrono::milliseconds(250), std::chrono::milliseconds(500), std::chrono::milliseconds(1000)};
        for (std::size_t attempt = 0;; ++attempt) {
            r = examples::http::send(*request, client);
            const bool retryable = (r.status && *r.status >= 500 && *r.status <= 599) || (!r.status && r.reset);
            if (!retryable || attempt == std::size(backoff)) break;
            std::this_thread::sleep_for(backoff[attempt]);
        }
        const std::string page_name = "page " + std::to_string(next->page);
        if (!r.status) {
            err << "key_audit: " << where << ", " << page_name << ": " << without_token(r.error, token) << '\n';
            status = exit_network;
            break;
        }
        if (*r.status == 401 || *r.status == 403) {
            err << "key_audit: the platform refused the token in KEYHOOK_TOKEN for tenant " << quoted_input(*o.tenant)
                << " (HTTP " << *r.status << "): check that it is valid and may list that tenant's keys\n";
            status = exit_network;
            break;
        }
        if (*r.status != 200) {
            err << "key_audit: " << where << ", " << page_name << ": HTTP " << *r.status << '\n';
            status = exit_network;
            break;
        }
        if (r.body_truncated) {
            err << "key_audit: " << where << ", " << page_name << ": the response exceeds " << (client.max_body >> 20)
                << " MiB\n";
            status = exit_network;
            break;
        }
        auto page = keyhook::try_parse_key_list(r.body);
        if (!page) {
            err << "key_audit: " << where << ", " << page_name << ": " << without_token(page.error(), token) << '\n';
            status = exit_network;
            break;
        }
        if (page->rejected_count > 0) {
            // The first 100 errors are kept (J3), the rest counted, as in file mode.
            for (const auto& e : page->rejected)
                err << "key_audit: " << where << ", " << page_name << ": " << without_token(e, token) << '\n';
            if (page->rejected_count > page->rejected.size())
                err << "key_audit: " << where << ", " << page_name << ": ... and "
                    << page->rejected_count - page->rejected.size() << " more rejected records\n";
            status = 1;  // bad input, as in file mode
            break;
        }
        if (count < 0) {
            count = page->count;
            if (page->page_size > 0) page_size = page->page_size;
            total_pages = std::max<std::int64_t>(1, count / page_size + (count % page_size != 0 ? 1 : 0));
            if (total_pages > max_page_requests) {
                fail("page 1 said count " + std::to_string(count) + ", pageSize " + std::to_string(page_size) +
                     ": that is " + std::to_string(total_pages) + " pages, more than the " +
                     std::to_string(max_page_requests) + " requests key_audit makes; not audited");
                break;
            }
            // Two more than the pages count needs: room for keys the list moved across a page boundary.
            max_requests = std::min(total_pages + 2, max_page_requests);
        } else if (page->count != count || (page->page_size > 0 && page->page_size != page_size)) {
            fail(said(1, count, page_size) + "; " + said(asked_page, page->count, page->page_size) +
                 ": the list changed while it was read; run again");
            break;
        }
        const std::size_t before = records.size();
        for (auto& k : page->records)
            if (seen.insert(k.id.str()).second) records.push_back(std::move(k));
        // A page that adds no new key means the service repeats itself (a page
        // number that does not advance, a count no page can cover): stop
        // rather than ask again and again.
        if (!page->records.empty() && records.size() == before) {
            err << "key_audit: " << where << ", " << page_name
                << ": the service answered keys already seen on earlier pages; its paging does not advance\n";
            status = exit_network;
            break;
        }
        if (progress && total_pages > 1)
            err << "\rkey_audit: page " << next->page << " of " << total_pages << ", " << records.size() << " keys"
                << std::flush;
        const auto distinct = static_cast<std::int64_t>(records.size());
        if (distinct >= count) break;  // every key counted was seen
        const std::string short_of = std::to_string(distinct) + " of the " + std::to_string(count) +
                                     " keys counted were seen (" + said(1, count, page_size) + ")";
        // A page shorter than pageSize is the list's last.
        if (static_cast<std::int64_t>(page->records.size()) < page_size) {
            fail("the pages ended at page " + std::to_string(asked_page) + " (" + std::to_string(page->records.size()) +
                 " keys) but " + short_of);
            break;
        }
        if (requests >= max_requests) {
            fail("after " + std::to_string(requests) + " requests (pages 1 to " + std::to_string(asked_page) +
                 ") only " + short_of);
            break;
        }
        // The next page follows the page asked for, not the page the service
        // says it sent (a service that always answers "page 1" cannot hold
        // key_audit on one page), at the pageSize the platform answered.
        next->page = asked_page + 1;
        next->size = page_size;
    }
    if (progress && total_pages > 1) err << '\n';
    curl_global_cleanup();
    if (status != 0) return status;
    text = merged_response(count, page_size, records);
    return 0;
#endif
}

}  // namespace key_audit::fetch
