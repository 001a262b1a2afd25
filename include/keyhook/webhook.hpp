// keyhook: a webhook as configured (spec 2.2): its endpoint, authentication
// parameters, event filter and signing secret, and the tenant's switch.
// Validation (webhook_validation.hpp) turns it into a validated_webhook.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/error.hpp"
#include "keyhook/event_filter.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"

namespace keyhook {

// Where an authentication parameter goes in the outgoing request (H2).
enum class auth_location { header, query };

namespace detail {
template <>
struct enum_names<auth_location> {
    static constexpr std::string_view values[] = {"header", "query"};
};
}  // namespace detail

// H2 policy limits on authentication parameters. They are checked before
// anything is built, so an oversized input costs no more than its own bytes
// (the JSON reader counts the parameters before it reads one).
inline constexpr std::size_t max_auth_parameters = 32;      // per webhook
inline constexpr std::size_t max_auth_name_length = 128;    // bytes
inline constexpr std::size_t max_auth_value_length = 4096;  // bytes
inline constexpr std::size_t max_target_url_length = 8192;  // the endpoint with the query parameters appended

// One authentication parameter: a request header or a query parameter whose
// value is a secret (the receiver's key, usually header x-api-key or query
// api_key, spec 4.4).
struct auth_parameter {
    auth_location in = auth_location::header;
    std::string name;
    secret value;

    friend bool operator==(const auth_parameter& a, const auth_parameter& b) { return is_equal(a, b); }
    friend bool operator!=(const auth_parameter& a, const auth_parameter& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const auth_parameter& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const auth_parameter& a, const auth_parameter& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const auth_parameter& x);
};

// A webhook as configured (spec 2.2). Not yet validated: see validate_webhook.
struct webhook {
    std::string name;
    std::string endpoint;                  // the URL that receives the POST
    std::vector<auth_parameter> auth;      // sent as headers or query parameters
    event_filter events;                   // empty: every event type
    bool saved = false;                    // false: a draft, which never fires (H4)
    std::optional<secret> signing_secret;  // carried for signing (B1); core does not use it

    friend bool operator==(const webhook& a, const webhook& b) { return is_equal(a, b); }
    friend bool operator!=(const webhook& a, const webhook& b) { return !(a == b); }

    // Secrets print masked; the endpoint through redact_url (P2: no user-info, no
    // query values), names quoted (P1).
    friend std::ostream& operator<<(std::ostream& os, const webhook& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const webhook& a, const webhook& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const webhook& x);
};

// The tenant's side of spec 2.2: its name and the "Enable webhooks" switch.
struct tenant_settings {
    std::string name;
    bool webhooks_enabled = false;

    friend bool operator==(const tenant_settings& a, const tenant_settings& b) { return is_equal(a, b); }
    friend bool operator!=(const tenant_settings& a, const tenant_settings& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const tenant_settings& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const tenant_settings& a, const tenant_settings& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const tenant_settings& x);
};

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/webhook.ipp"
#endif
