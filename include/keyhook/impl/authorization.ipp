#pragma once
// keyhook: definitions of authorization.hpp.

#include <ostream>

#include "keyhook/authorization.hpp"

namespace keyhook {

KEYHOOK_INLINE std::optional<key_id> authorization::key() const {
    if (!entry_) return std::nullopt;
    return key_id(std::string(index_->id_of(*entry_)));
}

KEYHOOK_INLINE bool operator==(const authorization& a, const authorization& b) noexcept {
    const bool same_key =
        a.entry_ == b.entry_ || (a.entry_ && b.entry_ && a.index_->id_of(*a.entry_) == b.index_->id_of(*b.entry_));
    return a.reason_ == b.reason_ && same_key && a.status_ == b.status_ && a.granted_ == b.granted_ &&
           a.required_ == b.required_;
}

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const authorization& a) { return os << a.message(); }

KEYHOOK_INLINE authorization authorize(const key_index& index, std::string_view key, std::string_view tenant,
                                       const api_family& family, resource_ref resource, access_level needed,
                                       timestamp now) noexcept {
    authorization a;
    a.required_ = needed;
    if (key.empty()) return a;
    a.reason_ = denial_reason::missing_tenant;
    if (tenant.empty()) return a;
    a.reason_ = denial_reason::unknown_key;
    const auto* e = index.find(key);
    if (!e) return a;
    a.index_ = &index;
    a.entry_ = e;
    a.status_ = e->status_at(now);
    a.reason_ = denial_reason::wrong_tenant;
    if (!index.tenant_is(*e, tenant)) return a;
    a.reason_ = denial_reason::not_active;
    if (a.status_ != key_status::active) return a;
    a.reason_ = denial_reason::family_not_allowed;
    if (!index.allows(*e, family.name())) return a;
    a.granted_ = index.permissions_of(*e).access_to(resource);
    a.reason_ = denial_reason::insufficient_access;
    if (a.granted_ < needed) return a;
    a.reason_.reset();
    return a;
}

KEYHOOK_INLINE authorization authorize(const key_index& index, const http_headers& headers, const api_family& family,
                                       resource_ref resource, access_level needed, timestamp now) noexcept {
    const auto key = detail::single_header_value(headers, synthetic_key_header);
    const auto tenant = detail::single_header_value(headers, tenant_name_header);
    authorization a;
    a.required_ = needed;
    if (!key.consistent) {
        a.reason_ = denial_reason::conflicting_key;
        return a;
    }
    if (key.value.empty()) return a;
    if (!tenant.consistent) {
        a.reason_ = denial_reason::conflicting_tenant;
        return a;
    }
    return authorize(index, key.value, tenant.value, family, resource, needed, now);
}

KEYHOOK_INLINE std::string authorization::message() const {
    const std::string who = entry_ ? "key " + detail::quote_input(index_->id_of(*entry_)) : std::string("the key");
    if (!reason_) return "allowed: " + who + " has " + std::string(to_string(granted_)) + " access";
    switch (*reason_) {
        case denial_reason::missing_key:
            return "denied: header " + std::string(synthetic_key_header) + " is missing or empty";
        case denial_reason::conflicting_key:
            return "denied: header " + std::string(synthetic_key_header) +
                   " is given more than once, with different values";
        case denial_reason::missing_tenant:
            return "denied: header " + std::string(tenant_name_header) + " is missing or empty";
        case denial_reason::conflicting_tenant:
            return "denied: header " + std::string(tenant_name_header) +
                   " is given more than once, with different values";
        case denial_reason::unknown_key:
            return "denied: the key in header " + std::string(synthetic_key_header) + " is not known";
        case denial_reason::wrong_tenant:
            return "denied: " + who + " does not belong to the tenant named in header " +
                   std::string(tenant_name_header);
        case denial_reason::not_active:
            return "denied: " + who + " is " + std::string(to_string(status_)) + "; only an Active key may be used";
        case denial_reason::family_not_allowed: return "denied: " + who + " may not call the requested API family";
        case denial_reason::insufficient_access:
            return "denied: " + who + " has " + std::string(to_string(granted_)) +
                   " access to the resource, the call needs " + std::string(to_string(required_));
    }
    return "denied";
}

}  // namespace keyhook
