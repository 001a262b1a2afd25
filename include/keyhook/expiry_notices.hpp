// keyhook: expiry notices. The changes of a key's derived state (S1, W2, W3)
// that happen between two polls, and the notice values a host sends for them.
// Pure functions of the records and the interval (since, now]: a host that
// passes each poll's `now` as the next poll's `since` learns of every change
// exactly once, whatever its polling interval.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/api_key.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// What changed. The values are also the order of changes that happen at the
// same instant: a key of at most 1 day (or of 7 to 8 days) becomes Active and
// starts warning at once, and the activation comes first.
enum class notice_kind {
    activated,  // became Active (at activeFrom)
    warning,    // the expiry warning started to show (W2, W3)
    expired,    // became Expired
};

template <>
struct detail::enum_names<notice_kind> {
    static constexpr std::string_view values[] = {"activated", "warning", "expired"};
};

template <class Json>
void to_json(Json& j, notice_kind k) {
    j = std::string(to_string(k));
}

// One change of a key's derived state and the instant it happened.
struct key_transition {
    notice_kind kind = notice_kind::activated;
    timestamp at{};

    friend bool operator==(const key_transition& a, const key_transition& b) noexcept {
        return a.kind == b.kind && a.at == b.at;
    }
    friend bool operator!=(const key_transition& a, const key_transition& b) noexcept { return !(a == b); }
    // Time order, simultaneous changes in the order of notice_kind.
    friend bool operator<(const key_transition& a, const key_transition& b) noexcept {
        return a.at != b.at ? a.at < b.at : a.kind < b.kind;
    }
    friend std::ostream& operator<<(std::ostream& os, const key_transition& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const key_transition& x);
};

// Every change of the key's derived state over all time, in order: the instants
// at which status_at or expiry_warning_at change their answer.
// - A revoked key has none: revocation is a user action, not the clock's.
// - A key with a non-empty period: activated at activeFrom; warning at its W2
//   start, or at activeFrom when that start comes earlier (W3: a 1-day key, and
//   a key of more than 7 and at most 8 days, warn from activation on);
//   expired at expireAt.
// - An empty or inverted period is never Active (S1), so it never activates
//   or warns; it still expires, at the instant status_at first says Expired:
//   expireAt for an empty period, activeFrom for an inverted one (before
//   activeFrom, S1 calls it Active in the future).
[[nodiscard]] KEYHOOK_INLINE std::vector<key_transition> key_transitions(const api_key& key);

// The changes inside the half-open interval (since, now], in order. A change
// exactly at `since` belonged to the previous poll; one exactly at `now` is
// reported now. An interval with since >= now holds no instant: empty.
[[nodiscard]] KEYHOOK_INLINE std::vector<key_transition> transitions_between(const api_key& key, timestamp since,
                                                                             timestamp now);

// What a host sends on its notification channel for one change.
struct expiry_notice {
    key_id id;
    std::string name;
    std::optional<std::string> masked;  // the record's masked key; absent when the record has none
    notice_kind kind = notice_kind::activated;
    timestamp at{};         // when the change happened
    timestamp expire_at{};  // the key's expireAt

    friend bool operator==(const expiry_notice& a, const expiry_notice& b) { return is_equal(a, b); }
    friend bool operator!=(const expiry_notice& a, const expiry_notice& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const expiry_notice& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const expiry_notice& a, const expiry_notice& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const expiry_notice& x);
};

// Digest order: instant, then name, then id, then kind; the remaining members
// only make the order total, so that equal notices sit side by side.
[[nodiscard]] KEYHOOK_INLINE bool notice_order(const expiry_notice& a, const expiry_notice& b);

// {"id","name","masked","kind","at","expireAt"}, timestamps as T4, masked null
// when absent and masked again when present (P2). With nlohmann::ordered_json
// the members keep this order.
template <class Json>
void to_json(Json& j, const expiry_notice& n) {
    j = Json::object();
    j["id"] = n.id.str();
    j["name"] = n.name;
    if (n.masked)
        j["masked"] = mask_key(*n.masked);
    else
        j["masked"] = nullptr;
    j["kind"] = std::string(to_string(n.kind));
    j["at"] = format_timestamp(n.at);
    j["expireAt"] = format_timestamp(n.expire_at);
}

// The notice for one change of `key`. The masked member goes through mask_key
// once more: a well-formed mask (M1, M2) comes out unchanged, and a record
// that wrongly carries a full key there still never puts it in a notice (M3).
[[nodiscard]] KEYHOOK_INLINE expiry_notice make_notice(const api_key& key, const key_transition& change);

// The notices for the changes of one key inside (since, now], in order.
[[nodiscard]] KEYHOOK_INLINE std::vector<expiry_notice> notices_between(const api_key& key, timestamp since,
                                                                        timestamp now);

// Every notice of a key list page for one poll.
struct notice_digest {
    timestamp since{};
    timestamp now{};
    std::vector<expiry_notice> notices;  // in notice_order

    friend bool operator==(const notice_digest& a, const notice_digest& b) { return is_equal(a, b); }
    friend bool operator!=(const notice_digest& a, const notice_digest& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const notice_digest& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const notice_digest& a, const notice_digest& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const notice_digest& x);
};

// {"since","now","notices":[...]}, timestamps as T4.
template <class Json>
void to_json(Json& j, const notice_digest& d) {
    j = Json::object();
    j["since"] = format_timestamp(d.since);
    j["now"] = format_timestamp(d.now);
    Json list = Json::array();
    for (const auto& n : d.notices) {
        Json item;
        to_json(item, n);
        list.push_back(std::move(item));
    }
    j["notices"] = std::move(list);
}

// All changes of the keys inside (since, now], ordered by instant, then name,
// then id (simultaneous changes of one key in notice_kind order). A record
// listed twice, as overlapping pages can do, gives its notices once.
[[nodiscard]] KEYHOOK_INLINE notice_digest digest_between(const std::vector<api_key>& keys, timestamp since,
                                                          timestamp now);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/expiry_notices.ipp"
#endif
