#pragma once
// keyhook::crypto: definitions of key_rotation.hpp.

#include <algorithm>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/json_input.hpp"

namespace keyhook::crypto {

namespace detail {

inline result<void> check_grace(timestamp::duration grace) {
    if (grace < timestamp::duration::zero() || grace > max_rotation_grace)
        return error{errc::out_of_range, "grace", "a rotation's grace is 0 to 7 days (168 h)"};
    return {};
}

// Keeps `old` (the key `next` replaces) until now + grace, or refuses.
inline result<void> retire(std::vector<rotated_key>& keys, rotated_key old, timestamp now, timestamp::duration grace) {
    if (grace == timestamp::duration::zero()) return {};
    if (keys.size() >= max_old_signing_keys)
        return error{errc::limit_exceeded, "oldKeys",
                     "10 unexpired old keys are kept already; wait until one expires or rotate with grace 0"};
    old.expires_at = keyhook::detail::add_saturating(now, grace);  // no overflow near the end of time
    const auto at = std::upper_bound(keys.begin(), keys.end(), old.expires_at,
                                     [](timestamp t, const rotated_key& k) { return t < k.expires_at; });
    keys.insert(at, std::move(old));
    return {};
}

// B1: the error for a secret keyhook may not sign with.
inline error unusable_secret(const signing_secret& s) {
    return error{errc::out_of_range, "signingSecret",
                 "the secret is " + std::to_string(s.key_size()) + " bytes; keyhook signs with 24 to 64"};
}

// A copy of `keys` without the expired ones nor the entry of `next` (B5: the
// set never holds a key twice; `next` is becoming current).
template <class Key>
std::vector<rotated_key> unexpired_without(const std::vector<rotated_key>& keys, timestamp now, const Key& next) {
    std::vector<rotated_key> out;
    out.reserve(keys.size() + 1);
    for (const auto& k : keys) {
        if (now >= k.expires_at) continue;
        if constexpr (std::is_same_v<Key, signing_secret>) {
            if (k.secret && *k.secret == next) continue;
        } else {
            if (k.asymmetric && *k.asymmetric == next) continue;
        }
        out.push_back(k);
    }
    return out;
}

}  // namespace detail

KEYHOOK_CRYPTO_INLINE result<signing_key_set> signing_key_set::try_make(const signing_secret& current) {
    if (!can_sign_with(current)) return detail::unusable_secret(current);
    signing_key_set s;
    s.secret_ = current;
    return s;
}

KEYHOOK_CRYPTO_INLINE signing_key_set signing_key_set::make(const signing_secret& current) {
    return try_make(current).value();
}

KEYHOOK_CRYPTO_INLINE signing_key_set signing_key_set::make(const asymmetric_signing_key& current) {
    signing_key_set s;
    s.asymmetric_ = current;
    return s;
}

KEYHOOK_CRYPTO_INLINE void signing_key_set::drop_expired(timestamp now) {
    old_.erase(std::remove_if(old_.begin(), old_.end(), [now](const rotated_key& k) { return now >= k.expires_at; }),
               old_.end());
}

KEYHOOK_CRYPTO_INLINE result<void> signing_key_set::try_rotate(const signing_secret& next, timestamp now,
                                                               timestamp::duration grace) {
    if (auto g = detail::check_grace(grace); !g) return g;
    if (!can_sign_with(next)) return detail::unusable_secret(next);
    if (secret_ && *secret_ == next) return {};  // already current: nothing to rotate
    auto old = detail::unexpired_without(old_, now, next);
    if (secret_) {
        rotated_key k;
        k.secret = *secret_;
        if (auto r = detail::retire(old, std::move(k), now, grace); !r) return r;
    }
    old_ = std::move(old);
    secret_ = next;
    return {};
}

KEYHOOK_CRYPTO_INLINE result<void> signing_key_set::try_rotate(const asymmetric_signing_key& next, timestamp now,
                                                               timestamp::duration grace) {
    if (auto g = detail::check_grace(grace); !g) return g;
    if (asymmetric_ && *asymmetric_ == next) return {};  // already current: nothing to rotate
    auto old = detail::unexpired_without(old_, now, next);
    if (asymmetric_) {
        rotated_key k;
        k.asymmetric = *asymmetric_;
        if (auto r = detail::retire(old, std::move(k), now, grace); !r) return r;
    }
    old_ = std::move(old);
    asymmetric_ = next;
    return {};
}

KEYHOOK_CRYPTO_INLINE signing_keys signing_key_set::keys_at(timestamp now) const {
    signing_keys keys;
    if (secret_) keys.secrets.push_back(*secret_);
    if (asymmetric_) keys.asymmetric.push_back(*asymmetric_);
    // Each key once, however the set was stored (at most 12 keys: pairwise is enough).
    const auto add = [](auto& list, const auto& key) {
        if (std::find(list.begin(), list.end(), key) == list.end()) list.push_back(key);
    };
    for (const auto& k : old_) {
        if (now >= k.expires_at) continue;
        if (k.secret) add(keys.secrets, *k.secret);
        if (k.asymmetric) add(keys.asymmetric, *k.asymmetric);
    }
    return keys;
}

KEYHOOK_CRYPTO_INLINE result<http_request> signing_key_set::try_sign_request(http_request request,
                                                                             std::string_view webhook_id,
                                                                             timestamp now) {
    drop_expired(now);
    return keyhook::crypto::try_sign_request(std::move(request), keys_at(now), webhook_id, now);
}

KEYHOOK_CRYPTO_INLINE result<http_request> signing_key_set::try_sign_outbound(const outbound_request& r,
                                                                              timestamp now) {
    return try_sign_request(r.request(), to_string(r.id()), now);
}

KEYHOOK_CRYPTO_INLINE bool operator==(const signing_key_set& a, const signing_key_set& b) noexcept {
    if (a.secret_ != b.secret_ || a.asymmetric_ != b.asymmetric_ || a.old_.size() != b.old_.size()) return false;
    for (std::size_t i = 0; i < a.old_.size(); ++i)
        if (a.old_[i].secret != b.old_[i].secret || a.old_[i].asymmetric != b.old_[i].asymmetric ||
            a.old_[i].expires_at != b.old_[i].expires_at)
            return false;
    return true;
}

KEYHOOK_CRYPTO_INLINE std::ostream& operator<<(std::ostream& os, const signing_key_set& s) {
    os << "signing keys: current";
    if (s.secret_) os << ' ' << s.secret_->masked();
    if (s.asymmetric_) os << ' ' << s.asymmetric_->masked();
    os << "; " << s.old_.size() << " old";
    for (const auto& k : s.old_)
        os << ", " << (k.secret ? k.secret->masked() : k.asymmetric->masked()) << " until "
           << format_timestamp(k.expires_at);
    return os;
}

KEYHOOK_CRYPTO_INLINE secret store_signing_key_set(const signing_key_set& s) {
    nlohmann::json j = nlohmann::json::object();
    nlohmann::json current = nlohmann::json::array();
    if (s.current_secret()) current.push_back(s.current_secret()->reveal());
    if (s.current_asymmetric()) current.push_back(s.current_asymmetric()->reveal());
    nlohmann::json old = nlohmann::json::array();
    for (const auto& k : s.old_keys())
        old.push_back({{"key", k.secret ? k.secret->reveal() : k.asymmetric->reveal()},
                       {"expiresAt", format_timestamp(k.expires_at)}});
    j["current"] = std::move(current);
    j["oldKeys"] = std::move(old);
    std::string text = j.dump();
    // The DOM's copies of the keys are released with it; wipe them first.
    for (auto& e : j["current"]) keyhook::detail::wipe_string(e.get_ref<std::string&>());
    for (auto& e : j["oldKeys"]) keyhook::detail::wipe_string(e["key"].get_ref<std::string&>());
    return secret(std::move(text), secret_kind::signing_key);
}

namespace detail {

// One stored key: whsk_ or whsec_ by its prefix; errors keep the reason only.
inline result<rotated_key> load_key(const nlohmann::json& j, const std::string& path) {
    if (!j.is_string()) return keyhook::detail::wrong_type(path, "a whsec_ or whsk_ key", j);
    const auto& text = j.get_ref<const std::string&>();
    rotated_key k;
    if (text.compare(0, asymmetric_signing_key_prefix.size(), asymmetric_signing_key_prefix) == 0) {
        auto a = try_parse_asymmetric_signing_key(text);
        if (!a) return error{a.error().code, path, a.error().message};
        k.asymmetric = std::move(*a);
    } else {
        auto s = try_parse_signing_secret(text, signing_key_use::sign);
        if (!s) return error{s.error().code, path, s.error().message};
        k.secret = std::move(*s);
    }
    return k;
}

}  // namespace detail

KEYHOOK_CRYPTO_INLINE result<signing_key_set> try_load_signing_key_set(std::string_view stored) {
    auto parsed = try_parse_json(stored);
    if (!parsed) return parsed.error();
    // The DOM holds key text: wipe it whatever happens below.
    struct wipe_dom {
        nlohmann::json& j;
        ~wipe_dom() {
            const auto wipe = [](nlohmann::json& v) {
                if (v.is_string()) keyhook::detail::wipe_string(v.get_ref<std::string&>());
            };
            if (!j.is_object()) return;
            if (auto c = j.find("current"); c != j.end() && c->is_array())
                for (auto& e : *c) wipe(e);
            if (auto o = j.find("oldKeys"); o != j.end() && o->is_array())
                for (auto& e : *o)
                    if (e.is_object())
                        if (auto k = e.find("key"); k != e.end()) wipe(*k);
        }
    } guard{*parsed};
    const nlohmann::json& j = *parsed;
    if (!j.is_object()) return keyhook::detail::wrong_type("", "an object", j);
    signing_key_set set;
    const auto* current = keyhook::detail::json_member(j, "current");
    if (!current) return keyhook::detail::missing_member_error("current");
    if (!current->is_array()) return keyhook::detail::wrong_type("current", "an array of keys", *current);
    for (std::size_t i = 0; i < current->size(); ++i) {
        const auto path = keyhook::detail::path_index("current", i);
        auto k = detail::load_key((*current)[i], path);
        if (!k) return k.error();
        if ((k->secret && set.secret_) || (k->asymmetric && set.asymmetric_))
            return error{errc::invalid_value, path, "a second current key of the same scheme (one each at most)"};
        if (k->secret) set.secret_ = std::move(k->secret);
        if (k->asymmetric) set.asymmetric_ = std::move(k->asymmetric);
    }
    if (!set.secret_ && !set.asymmetric_) return error{errc::missing_member, "current", "no current key"};
    if (const auto* old = keyhook::detail::json_member(j, "oldKeys")) {
        if (!old->is_array()) return keyhook::detail::wrong_type("oldKeys", "an array", *old);
        if (old->size() > max_old_signing_keys)
            return error{errc::limit_exceeded, "oldKeys",
                         std::to_string(old->size()) + " old keys; at most 10 are kept"};
        for (std::size_t i = 0; i < old->size(); ++i) {
            const auto path = keyhook::detail::path_index("oldKeys", i);
            const auto& e = (*old)[i];
            if (!e.is_object()) return keyhook::detail::wrong_type(path, "an object", e);
            const auto* key = keyhook::detail::json_member(e, "key");
            if (!key) return keyhook::detail::missing_member_error(keyhook::detail::path_member(path, "key"));
            auto k = detail::load_key(*key, keyhook::detail::path_member(path, "key"));
            if (!k) return k.error();
            std::string when;
            if (auto err = keyhook::detail::read_member_string(e, "expiresAt", path, true, when)) return *err;
            const auto t = try_parse_timestamp(when);
            if (!t) return keyhook::detail::timestamp_error(keyhook::detail::path_member(path, "expiresAt"), when);
            k->expires_at = *t;
            set.old_.push_back(std::move(*k));
        }
        std::stable_sort(set.old_.begin(), set.old_.end(),
                         [](const rotated_key& a, const rotated_key& b) { return a.expires_at < b.expires_at; });
    }
    return set;
}

}  // namespace keyhook::crypto
