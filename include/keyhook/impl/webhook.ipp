#pragma once
// keyhook: definitions of webhook.hpp. Equality comes from the records'
// member tables (detail/webhook_table.hpp).

#include <ostream>

#include "keyhook/detail/webhook_table.hpp"
#include "keyhook/webhook.hpp"

namespace keyhook {

KEYHOOK_INLINE bool auth_parameter::is_equal(const auth_parameter& a, const auth_parameter& b) { return detail::members_equal(a, b); }
KEYHOOK_INLINE std::ostream& auth_parameter::print_to(std::ostream& os, const auth_parameter& p) {
    return os << p.in << ' ' << escaped(p.name) << '=' << p.value;
}

KEYHOOK_INLINE bool webhook::is_equal(const webhook& a, const webhook& b) { return detail::members_equal(a, b); }

KEYHOOK_INLINE std::ostream& webhook::print_to(std::ostream& os, const webhook& w) {
    os << "webhook{name=" << detail::quote_input(w.name)
       << ", endpoint=" << detail::quote_input(redact_url(w.endpoint), 256) << ", " << (w.saved ? "saved" : "draft")
       << ", events=";
    if (w.events.empty()) os << "all";
    const char* sep = "";
    for (auto e : w.events) {
        os << sep << e;
        sep = "|";
    }
    os << ", auth=[";
    sep = "";
    for (const auto& p : w.auth) {
        os << sep << p;
        sep = ", ";
    }
    os << ']';
    if (w.signing_secret) os << ", signing secret set";  // not even its masked form: it is a key
    return os << '}';
}

KEYHOOK_INLINE bool tenant_settings::is_equal(const tenant_settings& a, const tenant_settings& b) {
    return detail::members_equal(a, b);
}
KEYHOOK_INLINE std::ostream& tenant_settings::print_to(std::ostream& os, const tenant_settings& t) {
    return os << "tenant{name=" << detail::quote_input(t.name)
              << ", webhooks=" << (t.webhooks_enabled ? "enabled" : "disabled") << '}';
}

}  // namespace keyhook
