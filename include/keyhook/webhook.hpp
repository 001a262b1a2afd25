// keyhook: a webhook as configured (spec 2.2): its endpoint, authentication
// parameters, event filter and signing secret, and the tenant's switch.
// Validation (webhook_validation.hpp) turns it into a validated_webhook.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/event_filter.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"

namespace keyhook {

// Where an authentication parameter goes in the outgoing request (H2).
enum class auth_location { header, query };

[[nodiscard]] constexpr std::string_view to_string(auth_location l) noexcept {
    return l == auth_location::header ? "header" : "query";
}
inline std::ostream& operator<<(std::ostream& os, auth_location l) { return os << to_string(l); }

// One authentication parameter: a request header or a query parameter whose
// value is a secret (the receiver's key, usually header x-api-key or query
// api_key, spec 4.4).
struct auth_parameter {
    auth_location in = auth_location::header;
    std::string name;
    secret value;

    friend bool operator==(const auth_parameter& a, const auth_parameter& b) {
        return a.in == b.in && a.name == b.name && a.value == b.value;
    }
    friend bool operator!=(const auth_parameter& a, const auth_parameter& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const auth_parameter& p) {
        return os << p.in << ' ' << escaped(p.name) << '=' << p.value;
    }
};

// A webhook as configured (spec 2.2). Not yet validated: see validate_webhook.
struct webhook {
    std::string name;
    std::string endpoint;                  // the URL that receives the POST
    std::vector<auth_parameter> auth;      // sent as headers or query parameters
    event_filter events;                   // empty: every event type
    bool saved = false;                    // false: a draft, which never fires (H4)
    std::optional<secret> signing_secret;  // carried for signing (B1); core does not use it

    friend bool operator==(const webhook& a, const webhook& b) {
        return a.name == b.name && a.endpoint == b.endpoint && a.auth == b.auth && a.events == b.events &&
               a.saved == b.saved && a.signing_secret == b.signing_secret;
    }
    friend bool operator!=(const webhook& a, const webhook& b) { return !(a == b); }
};

// Secrets print masked; the endpoint through redact_url (P2: no user-info, no
// query values), names quoted (P1).
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const webhook& w);

// The tenant's side of spec 2.2: its name and the "Enable webhooks" switch.
struct tenant_settings {
    std::string name;
    bool webhooks_enabled = false;

    friend bool operator==(const tenant_settings& a, const tenant_settings& b) {
        return a.name == b.name && a.webhooks_enabled == b.webhooks_enabled;
    }
    friend bool operator!=(const tenant_settings& a, const tenant_settings& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const tenant_settings& t) {
        return os << "tenant{name=" << detail::quote_input(t.name)
                  << ", webhooks=" << (t.webhooks_enabled ? "enabled" : "disabled") << '}';
    }
};

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/webhook.ipp"
#endif
