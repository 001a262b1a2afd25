// keyhook: webhook validation (rules H1 to H3). Turns a `webhook` as entered
// into a `validated_webhook`, which has everything dispatch and signing need
// computed once: the endpoint parsed and checked, the query authentication
// appended to the URL, the headers built, the event filter as a bit mask and
// the signing keys decoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/detail/signing_keys.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/events.hpp"
#include "keyhook/http.hpp"
#include "keyhook/webhook.hpp"

namespace keyhook {

// Limits keyhook sets where the spec shows none (spec 2.2: "not shown").
inline constexpr std::size_t max_webhook_name_length = 128;  // characters (code points)

// H2's limits on authentication parameters (max_auth_parameters and the
// others) are in webhook.hpp, beside the parameters; the reader counts them.

// Headers an authentication parameter may not set (H2): HTTP framing,
// hop-by-hop and connection-control headers, and the signing headers of B1,
// including the older svix-* names that receivers also accept.
inline constexpr std::string_view reserved_header_names[] = {
    "Host",
    "Content-Length",
    "Content-Type",
    "Transfer-Encoding",
    "Connection",
    "Keep-Alive",
    "Upgrade",
    "TE",
    "Trailer",
    "Expect",
    "Proxy-Connection",
    "Proxy-Authorization",
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "svix-id",
    "svix-timestamp",
    "svix-signature",
};

// RFC 9110 tchar: the characters of a header name.
[[nodiscard]] constexpr bool is_token_char(char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
        case '!':
        case '#':
        case '$':
        case '%':
        case '&':
        case '\'':
        case '*':
        case '+':
        case '-':
        case '.':
        case '^':
        case '_':
        case '`':
        case '|':
        case '~': return true;
        default: return false;
    }
}

[[nodiscard]] constexpr bool is_http_token(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (char c : s)
        if (!is_token_char(c)) return false;
    return true;
}

class validated_webhook;

namespace detail::hooks {

struct webhook_access;

// Collects problems into `out`; `first_only` tells the checks to give up
// after the first.
struct problem_sink {
    std::vector<error>& out;
    bool first_only;

    [[nodiscard]] bool done() const noexcept { return first_only && !out.empty(); }
    KEYHOOK_INLINE void add(errc code, std::string path, std::string message);
};

// Checks w (paths under `base`: "" for a lone webhook, "webhooks[1]" in a
// list); returns the validated form when no problem was found. The one maker
// of validated_webhook values.
KEYHOOK_INLINE std::optional<validated_webhook> validate_webhook_at(const webhook& w, const endpoint_policy& policy,
                                                                    const std::string& base, problem_sink& sink);

// What validation prepares once for dispatch and signing; shared, never changed.
struct prepared_webhook {
    webhook config;
    endpoint_url endpoint;
    std::string target_url;
    http_headers headers;
    std::uint64_t event_mask = 0;
    std::vector<decoded_signing_key> signing_keys;  // in the order configured; empty without a signing secret
    std::size_t name_hash = 0;                      // std::hash of config.name, for dispatch's check of repeated names
};

}  // namespace detail::hooks

// A webhook that passed validation, with what dispatch needs prepared once:
// the parsed endpoint, the URL with query authentication appended, the headers
// (Content-Type and the authentication headers, marked sensitive) and the
// event filter as a bit mask. Made only by the validate functions below.
// Immutable, and cheap to copy (copies share one prepared state; a moved-from
// value stays valid, since moving copies the handle).
class validated_webhook {
public:
    validated_webhook(const validated_webhook&) noexcept = default;
    validated_webhook(validated_webhook&& other) noexcept : state_(other.state_) {}
    validated_webhook& operator=(const validated_webhook&) noexcept = default;
    validated_webhook& operator=(validated_webhook&& other) noexcept {
        state_ = other.state_;
        return *this;
    }
    ~validated_webhook() = default;

    [[nodiscard]] const webhook& config() const noexcept { return state_->config; }
    [[nodiscard]] const std::string& name() const noexcept { return state_->config.name; }
    [[nodiscard]] bool saved() const noexcept { return state_->config.saved; }
    [[nodiscard]] const endpoint_url& endpoint() const noexcept { return state_->endpoint; }
    [[nodiscard]] const std::optional<secret>& signing_secret() const noexcept { return state_->config.signing_secret; }

    // The URL requests go to: the endpoint with the query parameters of H2
    // appended (percent-encoded). Holds secrets when there are any.
    [[nodiscard]] const std::string& target_url() const noexcept { return state_->target_url; }
    // Content-Type: application/json first, then the authentication headers in
    // the order configured, each marked sensitive.
    [[nodiscard]] const http_headers& headers() const noexcept { return state_->headers; }

    // H3: the filter admits e (an empty filter admits every type).
    [[nodiscard]] bool admits(event_type e) const noexcept {
        const auto bit = static_cast<std::size_t>(e);
        return bit < event_type_count && (state_->event_mask >> bit & 1u) != 0;
    }

    friend bool operator==(const validated_webhook& a, const validated_webhook& b) { return is_equal(a, b); }
    friend bool operator!=(const validated_webhook& a, const validated_webhook& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const validated_webhook& x) { return print_to(os, x); }

private:
    friend std::optional<validated_webhook> detail::hooks::validate_webhook_at(const webhook& w,
                                                                               const endpoint_policy& policy,
                                                                               const std::string& base,
                                                                               detail::hooks::problem_sink& sink);
    friend struct detail::hooks::webhook_access;
    explicit validated_webhook(std::shared_ptr<const detail::hooks::prepared_webhook> state) noexcept
        : state_(std::move(state)) {}

    std::shared_ptr<const detail::hooks::prepared_webhook> state_;  // never null

    static KEYHOOK_INLINE bool is_equal(const validated_webhook& a, const validated_webhook& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const validated_webhook& x);
};

static_assert(event_type_count <= 64, "the event mask of validated_webhook holds one bit per type");

namespace detail::hooks {

// The prepared state behind a validated webhook, for dispatch and signing.
struct webhook_access {
    static const prepared_webhook& state(const validated_webhook& w) noexcept { return *w.state_; }
};

// The message of a name used twice in a list (`earlier` is the index of its first use).
KEYHOOK_INLINE std::string duplicate_name_message(std::string_view name, std::string_view base, std::size_t earlier);

// A list, each element i under base[i]: as validate_webhook_at, and its name
// must differ from those of the elements before it. `names` records the names
// seen (a basic_name_index of detail/name_index.hpp, empty, holding views of
// the list's names); a template so that a test can count the index's work (J3).
template <class Names>
std::vector<validated_webhook> validate_webhook_list_at(const std::vector<webhook>& list, const endpoint_policy& policy,
                                                        std::string_view base, Names& names, problem_sink& sink) {
    std::vector<validated_webhook> out;
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size() && !sink.done(); ++i) {
        const std::string at = path_index(base, i);
        auto v = validate_webhook_at(list[i], policy, at, sink);
        if (sink.done()) break;
        if (const auto earlier = names.add(list[i].name, i); earlier != Names::none) {
            sink.add(errc::invalid_name, path_member(at, "name"), duplicate_name_message(list[i].name, base, earlier));
            continue;
        }
        if (v) out.push_back(std::move(*v));
    }
    return out;
}
// The same with the library's index.
KEYHOOK_INLINE std::vector<validated_webhook> validate_webhook_list_at(const std::vector<webhook>& list,
                                                                       const endpoint_policy& policy,
                                                                       std::string_view base, problem_sink& sink);

// Validates a list whose elements arrive one at a time (webhook_json.hpp reads
// them from JSON): each element as validate_webhook_at does, then its name
// against the earlier ones. Stops at the first problem.
class list_validator {
public:
    // `base` is the list's path ("webhooks"); `expected` the element count.
    KEYHOOK_INLINE list_validator(std::size_t expected, const endpoint_policy& policy, std::string_view base);
    KEYHOOK_INLINE ~list_validator();
    list_validator(const list_validator&) = delete;
    list_validator& operator=(const list_validator&) = delete;

    // Validates w as element i and keeps the validated form; the problem, if any.
    [[nodiscard]] KEYHOOK_INLINE std::optional<error> add(const webhook& w, std::size_t i);
    // The validated elements, in order.
    [[nodiscard]] KEYHOOK_INLINE std::vector<validated_webhook> take();

private:
    struct state;
    std::unique_ptr<state> state_;  // never null
};

}  // namespace detail::hooks

// H1, H2: validates one webhook. The first problem found is the error, in the
// order name, endpoint, auth[0], auth[1], ..., signingSecret; paths are field
// names ("endpoint", "auth[2].name"). Drafts are validated like saved webhooks.
[[nodiscard]] KEYHOOK_INLINE result<validated_webhook> try_validate_webhook(const webhook& w,
                                                                            const endpoint_policy& policy = {});
[[nodiscard]] KEYHOOK_INLINE validated_webhook validate_webhook(const webhook& w, const endpoint_policy& policy = {});

// A list: paths under `path` ("webhooks[1].endpoint"); names must also be
// unique within the list (they identify a webhook in delivery ids and output).
[[nodiscard]] KEYHOOK_INLINE result<std::vector<validated_webhook>> try_validate_webhooks(
    const std::vector<webhook>& list, const endpoint_policy& policy = {}, std::string_view path = "webhooks");
[[nodiscard]] KEYHOOK_INLINE std::vector<validated_webhook> validate_webhooks(const std::vector<webhook>& list,
                                                                              const endpoint_policy& policy = {},
                                                                              std::string_view path = "webhooks");

// Every problem rather than the first (for a form that marks all fields at
// once); empty when the webhook is valid. At most one problem per field.
[[nodiscard]] KEYHOOK_INLINE std::vector<error> webhook_problems(const webhook& w, const endpoint_policy& policy = {});
[[nodiscard]] KEYHOOK_INLINE std::vector<error> webhook_problems(const std::vector<webhook>& list,
                                                                 const endpoint_policy& policy = {},
                                                                 std::string_view path = "webhooks");

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/webhook_validation.ipp"
#endif
