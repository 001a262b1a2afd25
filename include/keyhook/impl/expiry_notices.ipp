#pragma once
// keyhook: definitions of expiry_notices.hpp.

#include <algorithm>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "keyhook/expiry_notices.hpp"

namespace keyhook {

KEYHOOK_INLINE std::ostream& key_transition::print_to(std::ostream& os, const key_transition& t) {
    return os << t.kind << '@' << format_timestamp(t.at);
}

KEYHOOK_INLINE bool expiry_notice::is_equal(const expiry_notice& a, const expiry_notice& b) {
    return a.id == b.id && a.name == b.name && a.masked == b.masked && a.kind == b.kind && a.at == b.at &&
           a.expire_at == b.expire_at;
}

KEYHOOK_INLINE std::ostream& expiry_notice::print_to(std::ostream& os, const expiry_notice& n) {
    return os << "expiry_notice{" << n.kind << " at " << format_timestamp(n.at) << ", id=" << n.id
              << ", name=" << detail::quote_input(n.name, 128)
              << ", masked=" << (n.masked ? escape_text(mask_key(*n.masked)) : std::string("null"))
              << ", expireAt=" << format_timestamp(n.expire_at) << '}';
}

KEYHOOK_INLINE bool notice_digest::is_equal(const notice_digest& a, const notice_digest& b) {
    return a.since == b.since && a.now == b.now && a.notices == b.notices;
}

KEYHOOK_INLINE std::ostream& notice_digest::print_to(std::ostream& os, const notice_digest& d) {
    os << "notice_digest{(" << format_timestamp(d.since) << ", " << format_timestamp(d.now) << "], " << d.notices.size()
       << " notices";
    for (const auto& n : d.notices) os << "\n  " << n;
    return os << '}';
}

KEYHOOK_INLINE std::vector<key_transition> key_transitions(const api_key& key) {
    std::vector<key_transition> out;
    if (key.status == key_status::revoked) return out;
    if (key.active_from < key.expire_at) {
        // warning_start exists for every non-empty period.
        const timestamp warn = std::max(key.active_from, warning_start(key).value_or(key.active_from));
        out.reserve(3);
        out.push_back({notice_kind::activated, key.active_from});
        out.push_back({notice_kind::warning, warn});
        out.push_back({notice_kind::expired, key.expire_at});
    } else {
        out.push_back({notice_kind::expired, std::max(key.active_from, key.expire_at)});
    }
    return out;
}

KEYHOOK_INLINE std::vector<key_transition> transitions_between(const api_key& key, timestamp since, timestamp now) {
    auto all = key_transitions(key);
    all.erase(
        std::remove_if(all.begin(), all.end(), [&](const key_transition& t) { return !(since < t.at && t.at <= now); }),
        all.end());
    return all;
}

KEYHOOK_INLINE bool notice_order(const expiry_notice& a, const expiry_notice& b) {
    return std::tie(a.at, a.name, a.id, a.kind, a.expire_at, a.masked) <
           std::tie(b.at, b.name, b.id, b.kind, b.expire_at, b.masked);
}

KEYHOOK_INLINE expiry_notice make_notice(const api_key& key, const key_transition& change) {
    expiry_notice n;
    n.id = key.id;
    n.name = key.name;
    if (key.masked) n.masked = mask_key(*key.masked);
    n.kind = change.kind;
    n.at = change.at;
    n.expire_at = key.expire_at;
    return n;
}

KEYHOOK_INLINE std::vector<expiry_notice> notices_between(const api_key& key, timestamp since, timestamp now) {
    std::vector<expiry_notice> out;
    for (const auto& t : transitions_between(key, since, now)) out.push_back(make_notice(key, t));
    return out;
}

KEYHOOK_INLINE notice_digest digest_between(const std::vector<api_key>& keys, timestamp since, timestamp now) {
    notice_digest d;
    d.since = since;
    d.now = now;
    for (const auto& key : keys)
        for (const auto& t : transitions_between(key, since, now)) d.notices.push_back(make_notice(key, t));
    std::sort(d.notices.begin(), d.notices.end(), notice_order);
    d.notices.erase(std::unique(d.notices.begin(), d.notices.end()), d.notices.end());
    return d;
}

}  // namespace keyhook
