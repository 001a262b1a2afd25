#pragma once
// keyhook: definitions of authorization.hpp.

#include <ostream>

#include "keyhook/authorization.hpp"

namespace keyhook {

KEYHOOK_INLINE std::optional<key_id> authorization::key() const {
    if (!entry_) return std::nullopt;
    return key_id(std::string(index_->id_of(*entry_)));
}

KEYHOOK_INLINE bool authorization::is_equal(const authorization& a, const authorization& b) noexcept {
    const bool same_key =
        a.entry_ == b.entry_ || (a.entry_ && b.entry_ && a.index_->id_of(*a.entry_) == b.index_->id_of(*b.entry_));
    return a.reason_ == b.reason_ && same_key && a.status_ == b.status_ && a.granted_ == b.granted_ &&
           a.required_ == b.required_ && a.retry_at_ == b.retry_at_ && a.usage_ == b.usage_ &&
           a.credits_remaining_ == b.credits_remaining_ && a.has_rate_ == b.has_rate_ &&
           (!a.has_rate_ || (a.rate_remaining_ == b.rate_remaining_ && a.rate_reset_ == b.rate_reset_));
}

KEYHOOK_INLINE std::ostream& authorization::print_to(std::ostream& os, const authorization& a) { return os << a.message(); }

KEYHOOK_INLINE bool detail::authorizer::headers_agree(authorization& a, const http_headers& headers,
                                                      std::string_view& key, std::string_view& tenant) noexcept {
    const auto k = detail::single_header_value(headers, synthetic_key_header);
    const auto t = detail::single_header_value(headers, tenant_name_header);
    key = k.value;
    tenant = t.value;
    if (!k.consistent) {
        a.reason_ = denial_reason::conflicting_key;
        return false;
    }
    a.reason_ = denial_reason::missing_key;
    if (key.empty()) return false;
    if (!t.consistent) {
        a.reason_ = denial_reason::conflicting_tenant;
        return false;
    }
    return true;
}

KEYHOOK_INLINE const key_index::entry* detail::authorizer::find_active(authorization& a, const key_index& index,
                                                                       std::string_view key, std::string_view tenant,
                                                                       timestamp now) noexcept {
    a.reason_ = denial_reason::missing_key;
    if (key.empty()) return nullptr;
    a.reason_ = denial_reason::missing_tenant;
    if (tenant.empty()) return nullptr;
    a.reason_ = denial_reason::unknown_key;
    const auto* e = index.find(key);
    if (!e) return nullptr;
    a.index_ = &index;
    a.entry_ = e;
    a.status_ = e->status_at(now);
    a.reason_ = denial_reason::wrong_tenant;
    if (!index.tenant_is(*e, tenant)) return nullptr;
    a.reason_ = denial_reason::not_active;
    if (a.status_ != key_status::active) return nullptr;
    return e;
}

KEYHOOK_INLINE bool detail::authorizer::permitted(authorization& a, const key_index& index, const key_index::entry& e,
                                                  const api_family& family, resource_ref resource) noexcept {
    a.reason_ = denial_reason::family_not_allowed;
    if (!index.allows(e, family.name())) return false;
    a.granted_ = index.permissions_of(e).access_to(resource);
    a.reason_ = denial_reason::insufficient_access;
    return a.granted_ >= a.required_;
}

KEYHOOK_INLINE authorization authorize(const key_index& index, std::string_view key, std::string_view tenant,
                                       const api_family& family, resource_ref resource, access_level needed,
                                       timestamp now) noexcept {
    authorization a;
    a.required_ = needed;
    const auto* e = detail::authorizer::find_active(a, index, key, tenant, now);
    if (e && detail::authorizer::permitted(a, index, *e, family, resource)) a.reason_.reset();
    return a;
}

KEYHOOK_INLINE authorization authorize(const key_index& index, const http_headers& headers, const api_family& family,
                                       resource_ref resource, access_level needed, timestamp now) noexcept {
    authorization a;
    a.required_ = needed;
    std::string_view key, tenant;
    if (!detail::authorizer::headers_agree(a, headers, key, tenant)) return a;
    return authorize(index, key, tenant, family, resource, needed, now);
}

KEYHOOK_INLINE authorization detail::authorizer::check(const key_index& index, const http_headers& headers,
                                                       const api_family& family, resource_ref resource,
                                                       access_level needed, timestamp now, const call_context& call,
                                                       limits_lookup limits) {
    authorization a;
    a.required_ = needed;
    std::string_view key, tenant;
    if (!headers_agree(a, headers, key, tenant)) return a;
    const auto* e = find_active(a, index, key, tenant, now);
    if (!e) return a;
    const key_limits* lim = limits.call ? limits.call(limits.object, index.id_of(*e)) : nullptr;
    a.reason_ = denial_reason::address_not_allowed;
    if (lim && !address_allowed(lim->policy.addresses, call.caller)) return a;
    if (!permitted(a, index, *e, family, resource)) return a;
    if (!lim) {
        a.reason_.reset();
        return a;
    }
    const auto d = check_limits(*lim, call.cost, now);
    a.has_rate_ = d.rate_remaining.has_value();
    a.rate_remaining_ = d.rate_remaining.value_or(0);
    a.rate_reset_ = d.rate_reset.value_or(timestamp{});
    a.credits_remaining_ = d.credits_remaining;
    a.retry_at_ = d.retry_at;
    a.reason_ = d.reason;
    if (d.allowed()) a.usage_ = d.usage;
    return a;
}

KEYHOOK_INLINE limits_decision check_limits(const key_limits& limits, std::uint64_t cost, timestamp now) noexcept {
    limits_decision out;
    out.usage = limits.usage;
    key_usage next = limits.usage;
    const auto& policy = limits.policy;
    if (policy.rate) {
        const auto d = check_rate(*policy.rate, next.rate, cost, now);
        out.rate_remaining = d.remaining;
        out.rate_reset = d.reset;
        if (!d.allowed) {
            out.reason = denial_reason::rate_limited;
            out.retry_at = d.retry_at;
            return out;
        }
        next.rate = d.state;
    }
    if (policy.limited_credits) {
        const auto c = spend_credits(policy.refill, next.credits, cost, now);
        if (!c.allowed) {
            out.reason = denial_reason::usage_exceeded;
            out.retry_at = c.retry_at;
            // The figures as they stand with nothing spent: credits after a refill due now, the rate state unmoved.
            out.credits_remaining = spend_credits(policy.refill, next.credits, 0, now).state.remaining;
            if (policy.rate) {
                const auto unspent = check_rate(*policy.rate, limits.usage.rate, 0, now);
                out.rate_remaining = unspent.remaining;
                out.rate_reset = unspent.reset;
            }
            return out;
        }
        next.credits = c.state;
        out.credits_remaining = c.state.remaining;
    }
    next.last_used_at = now;
    out.usage = next;
    return out;
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
        case denial_reason::address_not_allowed: return "denied: " + who + " may not be used from the caller's address";
        case denial_reason::family_not_allowed: return "denied: " + who + " may not call the requested API family";
        case denial_reason::insufficient_access:
            return "denied: " + who + " has " + std::string(to_string(granted_)) +
                   " access to the resource, the call needs " + std::string(to_string(required_));
        case denial_reason::rate_limited:
            return "denied: " + who + " is over its rate limit" +
                   (retry_at_ ? "; retry at " + format_timestamp(*retry_at_)
                              : std::string("; this cost never fits its burst"));
        case denial_reason::usage_exceeded:
            return "denied: " + who + " has not enough usage credits left" +
                   (retry_at_ ? "; they are refilled at " + format_timestamp(*retry_at_) : std::string());
    }
    return "denied";
}

}  // namespace keyhook
