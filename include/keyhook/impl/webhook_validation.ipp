#pragma once
// keyhook: definitions of webhook_validation.hpp.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/detail/constant_time.hpp"
#include "keyhook/detail/name_index.hpp"
#include "keyhook/detail/utf8.hpp"
#include "keyhook/receiving.hpp"
#include "keyhook/webhook_validation.hpp"

namespace keyhook {

KEYHOOK_INLINE bool validated_webhook::is_equal(const validated_webhook& a, const validated_webhook& b) {
    return a.state_ == b.state_ || a.state_->config == b.state_->config;
}
KEYHOOK_INLINE std::ostream& validated_webhook::print_to(std::ostream& os, const validated_webhook& w) { return os << w.state_->config; }

namespace detail::hooks {

KEYHOOK_INLINE void problem_sink::add(errc code, std::string path, std::string message) {
    if (!done()) out.push_back(error{code, std::move(path), std::move(message)});
}

// The message of a name used twice in a list (`earlier` is the index of its first use).
KEYHOOK_INLINE std::string duplicate_name_message(std::string_view name, std::string_view base, std::size_t earlier) {
    return quote_input(name) + " is already the name of " + path_index(base, earlier) +
           "; names identify webhooks and must be unique";
}

KEYHOOK_INLINE std::string describe_char(char ch) {
    switch (ch) {
        case '\r': return "a carriage return (CR)";
        case '\n': return "a line feed (LF)";
        case '\0': return "a NUL byte";
        default: break;
    }
    if (ch == ' ') return "a space";
    return describe_byte(ch);
}

// The first CR, LF or NUL in s, which would let a value end a header line or a
// request early (request splitting); npos when there is none.
KEYHOOK_INLINE std::size_t find_line_break_or_nul(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size(); ++i)
        if (s[i] == '\r' || s[i] == '\n' || s[i] == '\0') return i;
    return std::string_view::npos;
}

KEYHOOK_INLINE void check_name(std::string_view name, const std::string& path, problem_sink& sink) {
    if (!is_valid_utf8(name)) return sink.add(errc::invalid_utf8, path, "is not valid UTF-8");
    bool blank = true;
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f)
            return sink.add(errc::invalid_name, path, "contains a control character (" + describe_char(c) + ")");
        if (c != ' ') blank = false;
    }
    if (blank) return sink.add(errc::invalid_name, path, "is empty; a webhook needs a name");
    if (const auto n = code_point_count(name); n > max_webhook_name_length)
        sink.add(errc::invalid_name, path,
                 "has " + std::to_string(n) + " characters; at most " + std::to_string(max_webhook_name_length) +
                     " are allowed");
}

// H2 for one parameter; `others` are the parameters before it (for duplicates).
KEYHOOK_INLINE void check_auth_parameter(const auth_parameter& p, std::size_t index,
                                         const std::vector<auth_parameter>& all, const std::string& base,
                                         problem_sink& sink) {
    const std::string at = path_index(path_member(base, "auth"), index);
    const std::string name_path = path_member(at, "name");
    const std::string value_path = path_member(at, "value");
    const bool header = p.in == auth_location::header;
    const errc code = header ? errc::invalid_header : errc::invalid_parameter;
    const std::string_view what = header ? "header" : "query parameter";

    // Name. Names are configuration, not secrets, so they may be quoted.
    if (p.name.empty()) {
        sink.add(code, name_path, "is empty; a " + std::string(what) + " needs a name");
    } else if (p.name.size() > max_auth_name_length) {
        sink.add(errc::limit_exceeded, name_path,
                 "is " + std::to_string(p.name.size()) + " bytes long; at most " +
                     std::to_string(max_auth_name_length) + " are allowed");
    } else if (const auto bad = find_line_break_or_nul(p.name); bad != std::string_view::npos) {
        sink.add(
            code, name_path,
            std::string(what) + " name contains " + describe_char(p.name[bad]) + " at byte " + std::to_string(bad));
    } else if (header) {
        std::size_t bad_at = std::string::npos;
        for (std::size_t i = 0; i < p.name.size() && bad_at == std::string::npos; ++i)
            if (!is_token_char(p.name[i])) bad_at = i;
        if (bad_at != std::string::npos) {
            sink.add(code, name_path,
                     "header name " + quote_input(p.name) + " contains " + describe_char(p.name[bad_at]) +
                         ", which is not allowed in an HTTP token (RFC 9110)");
        } else {
            for (auto reserved : reserved_header_names)
                if (header_name_equal(p.name, reserved)) {
                    sink.add(code, name_path,
                             "header " + quote_input(p.name) +
                                 " is set by the HTTP client or by keyhook; an auth parameter may not set it");
                    break;
                }
        }
    }
    if (sink.done()) return;
    // Quadratic in the count, which validation caps at max_auth_parameters
    // before calling this: at most 32 x 31 / 2 comparisons of 128 bytes.
    for (std::size_t j = 0; j < index && !p.name.empty(); ++j) {
        const auto& q = all[j];
        if (q.in != p.in) continue;
        if (header ? header_name_equal(q.name, p.name) : q.name == p.name) {
            sink.add(code, name_path,
                     std::string(what) + " " + quote_input(p.name) + " is already set by " +
                         path_index(path_member(base, "auth"), j));
            break;
        }
    }
    if (sink.done()) return;

    // Value: a secret, so messages say what is wrong and where, never what it is.
    const std::string& v = p.value.reveal();
    if (v.empty()) return sink.add(code, value_path, "is empty; an authentication value is required");
    if (v.size() > max_auth_value_length)
        return sink.add(errc::limit_exceeded, value_path,
                        "is " + std::to_string(v.size()) + " bytes long; at most " +
                            std::to_string(max_auth_value_length) + " are allowed");
    if (const auto bad = find_line_break_or_nul(v); bad != std::string_view::npos)
        return sink.add(
            code, value_path,
            std::string(what) + " value contains " + describe_char(v[bad]) + " at byte " + std::to_string(bad));
    if (header) {
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto u = static_cast<unsigned char>(v[i]);
            if ((u < 0x20 && v[i] != '\t') || u == 0x7f)
                return sink.add(code, value_path,
                                "header value contains a control character (" + describe_char(v[i]) + ") at byte " +
                                    std::to_string(i));
        }
        const auto ws = [](char c) { return c == ' ' || c == '\t'; };
        if (ws(v.front()) || ws(v.back()))
            sink.add(code, value_path, "header value has leading or trailing whitespace, which receivers strip");
    }
}

// The bytes percent_encode(s) writes, without writing them.
KEYHOOK_INLINE std::size_t percent_encoded_length(std::string_view s) noexcept {
    std::size_t n = 0;
    for (char c : s) n += is_unreserved(static_cast<unsigned char>(c)) ? 1 : 3;
    return n;
}

// The separator before the first appended query parameter: '?' when the
// endpoint has no query, nothing when it ends in '?' or '&', else '&'.
KEYHOOK_INLINE std::string_view first_query_separator(std::string_view endpoint) noexcept {
    if (endpoint.find('?') == std::string_view::npos) return "?";
    if (endpoint.back() == '?' || endpoint.back() == '&') return "";
    return "&";
}

// The length of the final URL, computed before anything is built (H2).
KEYHOOK_INLINE std::size_t target_url_length(std::string_view endpoint,
                                             const std::vector<auth_parameter>& auth) noexcept {
    std::size_t n = endpoint.size();
    bool first = true;
    for (const auto& p : auth) {
        if (p.in != auth_location::query) continue;
        n += (first ? first_query_separator(endpoint).size() : 1) + percent_encoded_length(p.name) + 1 +
             percent_encoded_length(p.value.reveal());
        first = false;
    }
    return n;
}

// The endpoint (validated: no fragment) with the query parameters appended,
// percent-encoded, in one pass.
KEYHOOK_INLINE std::string build_target_url(std::string_view endpoint, const std::vector<auth_parameter>& auth,
                                            std::size_t length) {
    std::string url;
    url.reserve(length);
    url += endpoint;
    bool first = true;
    for (const auto& p : auth) {
        if (p.in != auth_location::query) continue;
        url += first ? first_query_separator(endpoint) : std::string_view("&");
        url += percent_encode(p.name);
        url += '=';
        url += percent_encode(p.value.reveal());
        first = false;
    }
    return url;
}

// H2 with H7: the API keys a delivery would carry must all be equal, or the
// receiver refuses every delivery. The endpoint's query is read by H7's own
// code (find_query_key: api_key percent-decoded, an empty value counts as
// absent); then each query parameter named api_key and each header named
// x-api-key of `auth` must equal the key found first. Refused with
// errc::conflicting_keys at the parameter's value (or the endpoint, when its
// own query disagrees with itself); no value is quoted.
KEYHOOK_INLINE void check_key_conflicts(std::string_view endpoint, const std::vector<auth_parameter>& auth,
                                        const std::string& base, problem_sink& sink) {
    auto found = find_query_key(endpoint);
    if (found.conflicting)
        return sink.add(errc::conflicting_keys, path_member(base, "endpoint"),
                        "has query parameter api_key more than once with different values; the receiver refuses "
                        "a request whose keys differ (H7)");
    std::string first_where = found.value ? "the endpoint's query parameter api_key" : "";
    for (std::size_t i = 0; i < auth.size(); ++i) {
        const auto& p = auth[i];
        const bool query = p.in == auth_location::query;
        if (!(query ? p.name == api_key_query_parameter : header_name_equal(p.name, api_key_header))) continue;
        const std::string where = query ? "query parameter api_key" : "header x-api-key";
        const std::string& value = p.value.reveal();
        if (!found.value) {
            found.value = value;
            first_where = "the " + where + " of " + path_index(path_member(base, "auth"), i);
        } else if (!constant_time_equal(*found.value, value)) {
            return sink.add(errc::conflicting_keys, path_member(path_index(path_member(base, "auth"), i), "value"),
                            "the " + where + " differs from the API key in " + first_where +
                                "; the receiver refuses a request whose keys differ (H7), so every delivery "
                                "would fail");
        }
    }
}

KEYHOOK_INLINE std::optional<validated_webhook> validate_webhook_at(const webhook& w, const endpoint_policy& policy,
                                                                    const std::string& base, problem_sink& sink) {
    const std::size_t before = sink.out.size();
    check_name(w.name, path_member(base, "name"), sink);
    if (sink.done()) return std::nullopt;
    auto ep = validate_endpoint_at(w.endpoint, policy, path_member(base, "endpoint"));
    if (!ep) sink.add(ep.error().code, ep.error().path, ep.error().message);
    if (sink.done()) return std::nullopt;
    // H3: only the 53 types; a value cast from an integer would otherwise
    // select a bit of the event mask that no type, or another type, uses.
    std::size_t event_index = 0;
    for (const auto e : w.events) {
        if (static_cast<std::size_t>(e) >= event_type_count) {
            auto bad = event_value_error(e, path_index(path_member(base, "events"), event_index));
            sink.add(bad->code, bad->path, bad->message);
        }
        ++event_index;
    }
    if (sink.done()) return std::nullopt;
    // The count first (H2): nothing of an oversized list is looked at.
    if (w.auth.size() > max_auth_parameters)
        sink.add(errc::limit_exceeded, path_member(base, "auth"),
                 "has " + std::to_string(w.auth.size()) + " authentication parameters; at most " +
                     std::to_string(max_auth_parameters) + " are allowed");
    else
        for (std::size_t i = 0; i < w.auth.size() && !sink.done(); ++i)
            check_auth_parameter(w.auth[i], i, w.auth, base, sink);
    if (sink.done()) return std::nullopt;
    // Checks of the parameters together, once each one is sound.
    std::size_t url_length = 0;
    if (ep && sink.out.size() == before) {
        check_key_conflicts(w.endpoint, w.auth, base, sink);
        url_length = target_url_length(w.endpoint, w.auth);
        if (url_length > max_target_url_length)
            sink.add(errc::limit_exceeded, path_member(base, "auth"),
                     "makes a final URL of " + std::to_string(url_length) +
                         " bytes (the endpoint with the query parameters appended); at most " +
                         std::to_string(max_target_url_length) + " are allowed");
    }
    if (sink.done()) return std::nullopt;
    std::vector<decoded_signing_key> signing_keys;  // kept, so that signing does not decode again
    if (w.signing_secret) {
        // B1, B3: whsec_ secrets and whsk_ keys, space-separated (kept for signing, wiped when released).
        if (const auto e =
                check_signing_keys(w.signing_secret->reveal(), path_member(base, "signingSecret"), &signing_keys))
            sink.add(e->code, e->path, e->message);
    }
    if (sink.out.size() != before) return std::nullopt;

    auto state = std::make_shared<detail::hooks::prepared_webhook>();
    state->config = w;
    state->endpoint = std::move(*ep);
    state->target_url = build_target_url(w.endpoint, w.auth, url_length);
    state->headers.reserve(1 + w.auth.size());
    state->headers.push_back(http_header{"Content-Type", "application/json", false});
    for (const auto& p : w.auth)
        if (p.in == auth_location::header) state->headers.push_back(http_header{p.name, p.value.reveal(), true});
    if (w.events.empty()) {
        state->event_mask = ~std::uint64_t{0};
    } else {
        for (auto e : w.events) state->event_mask |= std::uint64_t{1} << static_cast<unsigned>(e);
    }
    state->signing_keys = std::move(signing_keys);
    state->name_hash = std::hash<std::string_view>{}(state->config.name);
    return validated_webhook(std::move(state));
}

KEYHOOK_INLINE std::vector<validated_webhook> validate_webhook_list_at(const std::vector<webhook>& list,
                                                                       const endpoint_policy& policy,
                                                                       std::string_view base, problem_sink& sink) {
    name_index names(list.size());
    return validate_webhook_list_at(list, policy, base, names, sink);
}

struct list_validator::state {
    std::vector<error> problems;
    problem_sink sink{problems, true};
    name_index names;
    endpoint_policy policy;
    std::string base;
    std::vector<validated_webhook> out;

    state(std::size_t expected, const endpoint_policy& p, std::string_view b) : names(expected), policy(p), base(b) {
        out.reserve(expected);
    }
};

KEYHOOK_INLINE list_validator::list_validator(std::size_t expected, const endpoint_policy& policy,
                                              std::string_view base)
    : state_(std::make_unique<state>(expected, policy, base)) {}
KEYHOOK_INLINE list_validator::~list_validator() = default;

KEYHOOK_INLINE std::optional<error> list_validator::add(const webhook& w, std::size_t i) {
    auto& s = *state_;
    const std::string at = path_index(s.base, i);
    auto v = validate_webhook_at(w, s.policy, at, s.sink);
    if (!s.problems.empty()) return std::move(s.problems.front());
    // The name is looked up by a view of the validated copy, which stays in place.
    if (const auto earlier = s.names.add(v->name(), i); earlier != name_index::none)
        return error{errc::invalid_name, path_member(at, "name"), duplicate_name_message(v->name(), s.base, earlier)};
    s.out.push_back(std::move(*v));
    return std::nullopt;
}

KEYHOOK_INLINE std::vector<validated_webhook> list_validator::take() { return std::move(state_->out); }

}  // namespace detail::hooks

KEYHOOK_INLINE result<validated_webhook> try_validate_webhook(const webhook& w, const endpoint_policy& policy) {
    std::vector<error> problems;
    detail::hooks::problem_sink sink{problems, true};
    auto v = detail::hooks::validate_webhook_at(w, policy, std::string(), sink);
    if (!problems.empty()) return std::move(problems.front());
    return std::move(*v);
}
KEYHOOK_INLINE validated_webhook validate_webhook(const webhook& w, const endpoint_policy& policy) {
    return try_validate_webhook(w, policy).value();
}

KEYHOOK_INLINE result<std::vector<validated_webhook>> try_validate_webhooks(const std::vector<webhook>& list,
                                                                            const endpoint_policy& policy,
                                                                            std::string_view path) {
    std::vector<error> problems;
    detail::hooks::problem_sink sink{problems, true};
    auto out = detail::hooks::validate_webhook_list_at(list, policy, path, sink);
    if (!problems.empty()) return std::move(problems.front());
    return out;
}
KEYHOOK_INLINE std::vector<validated_webhook> validate_webhooks(const std::vector<webhook>& list,
                                                                const endpoint_policy& policy, std::string_view path) {
    return try_validate_webhooks(list, policy, path).value();
}

KEYHOOK_INLINE std::vector<error> webhook_problems(const webhook& w, const endpoint_policy& policy) {
    std::vector<error> problems;
    detail::hooks::problem_sink sink{problems, false};
    (void)detail::hooks::validate_webhook_at(w, policy, std::string(), sink);
    return problems;
}
KEYHOOK_INLINE std::vector<error> webhook_problems(const std::vector<webhook>& list, const endpoint_policy& policy,
                                                   std::string_view path) {
    std::vector<error> problems;
    detail::hooks::problem_sink sink{problems, false};
    (void)detail::hooks::validate_webhook_list_at(list, policy, path, sink);
    return problems;
}

}  // namespace keyhook
