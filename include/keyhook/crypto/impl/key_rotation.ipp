#pragma once
// keyhook::crypto: definitions of key_rotation.hpp.

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/crypto/detail/key_rotation_table.hpp"
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

// B1: the stored form is all keys, so an error reading it says where and
// why but quotes nothing of the text. A path step that is neither one of the
// form's member names nor an index ends the path as "[...]"; a message's
// quotation of the input is cut.
inline error without_key_text(error e) {
    static constexpr std::string_view members[] = {"current", "oldKeys", "key", "expiresAt"};
    const std::string& p = e.path;
    std::string path;
    std::size_t at = 0;
    while (at < p.size()) {
        if (p[at] == '[' && at + 1 < p.size() && p[at + 1] >= '0' && p[at + 1] <= '9') {
            const auto close = p.find(']', at);
            if (close == std::string::npos) break;
            path.append(p, at, close + 1 - at);
            at = close + 1;
            continue;
        }
        const std::size_t begin = p[at] == '.' ? at + 1 : at;
        const auto end = p.find_first_of(".[", begin);
        const std::string_view name =
            std::string_view(p).substr(begin, end == std::string::npos ? p.npos : end - begin);
        if (p[at] == '[' || std::find(std::begin(members), std::end(members), name) == std::end(members)) {
            path += "[...]";
            break;
        }
        if (!path.empty()) path += '.';
        path.append(name);
        at = end == std::string::npos ? p.size() : end;
    }
    e.path = std::move(path);
    if (const auto quote = e.message.find('"'); quote != std::string::npos) {
        e.message.erase(quote);
        while (!e.message.empty() && (e.message.back() == ' ' || e.message.back() == ',')) e.message.pop_back();
        if (e.message.size() >= 4 && e.message.compare(e.message.size() - 4, 4, " got") == 0)
            e.message.resize(e.message.size() - 4);
        while (!e.message.empty() && (e.message.back() == ' ' || e.message.back() == ',')) e.message.pop_back();
        e.message += " (the text is not shown: a stored key set holds keys)";
    }
    return e;
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
    s.keys_.secret = current;
    return s;
}

KEYHOOK_CRYPTO_INLINE signing_key_set signing_key_set::make(const signing_secret& current) {
    return try_make(current).value();
}

KEYHOOK_CRYPTO_INLINE signing_key_set signing_key_set::make(const asymmetric_signing_key& current) {
    signing_key_set s;
    s.keys_.asymmetric = current;
    return s;
}

KEYHOOK_CRYPTO_INLINE void signing_key_set::drop_expired(timestamp now) {
    keys_.old.erase(
        std::remove_if(keys_.old.begin(), keys_.old.end(), [now](const rotated_key& k) { return now >= k.expires_at; }),
        keys_.old.end());
}

KEYHOOK_CRYPTO_INLINE result<void> signing_key_set::try_rotate(const signing_secret& next, timestamp now,
                                                               timestamp::duration grace) {
    if (auto g = detail::check_grace(grace); !g) return g;
    if (!can_sign_with(next)) return detail::unusable_secret(next);
    if (keys_.secret && *keys_.secret == next) return {};  // already current: nothing to rotate
    auto old = detail::unexpired_without(keys_.old, now, next);
    if (keys_.secret) {
        rotated_key k;
        k.secret = *keys_.secret;
        if (auto r = detail::retire(old, std::move(k), now, grace); !r) return r;
    }
    keys_.old = std::move(old);
    keys_.secret = next;
    return {};
}

KEYHOOK_CRYPTO_INLINE result<void> signing_key_set::try_rotate(const asymmetric_signing_key& next, timestamp now,
                                                               timestamp::duration grace) {
    if (auto g = detail::check_grace(grace); !g) return g;
    if (keys_.asymmetric && *keys_.asymmetric == next) return {};  // already current: nothing to rotate
    auto old = detail::unexpired_without(keys_.old, now, next);
    if (keys_.asymmetric) {
        rotated_key k;
        k.asymmetric = *keys_.asymmetric;
        if (auto r = detail::retire(old, std::move(k), now, grace); !r) return r;
    }
    keys_.old = std::move(old);
    keys_.asymmetric = next;
    return {};
}

KEYHOOK_CRYPTO_INLINE signing_keys signing_key_set::keys_at(timestamp now) const {
    signing_keys keys;
    if (keys_.secret) keys.secrets.push_back(*keys_.secret);
    if (keys_.asymmetric) keys.asymmetric.push_back(*keys_.asymmetric);
    // Each key once, however the set was stored (at most 12 keys: pairwise is enough).
    const auto add = [](auto& list, const auto& key) {
        if (std::find(list.begin(), list.end(), key) == list.end()) list.push_back(key);
    };
    for (const auto& k : keys_.old) {
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

template <class D>
KEYHOOK_CRYPTO_INLINE result<http_request> signing_key_set::try_sign_outbound(
    const keyhook::detail::deferred_t<outbound_request, D>& r, timestamp now) {
    return try_sign_request(r.request(), to_string(r.id()), now);
}

KEYHOOK_CRYPTO_INLINE bool signing_key_set::is_equal(const signing_key_set& a, const signing_key_set& b) noexcept {
    return keyhook::detail::members_equal(a.keys_, b.keys_);
}

KEYHOOK_CRYPTO_INLINE std::ostream& signing_key_set::print_to(std::ostream& os, const signing_key_set& s) {
    os << "signing keys: current";
    if (s.keys_.secret) os << ' ' << s.keys_.secret->masked();
    if (s.keys_.asymmetric) os << ' ' << s.keys_.asymmetric->masked();
    os << "; " << s.keys_.old.size() << " old";
    for (const auto& k : s.keys_.old)
        os << ", " << (k.secret ? k.secret->masked() : k.asymmetric->masked()) << " until "
           << format_timestamp(k.expires_at);
    return os;
}

template <class D>
KEYHOOK_CRYPTO_INLINE secret store_signing_key_set(const signing_key_set& s) {
    typename keyhook::detail::json_for<D>::type j;
    keyhook::detail::write_members(j, s.keys_);
    std::string text = j.dump();
    // The DOM's copies of the keys are released with it; wipe them first.
    for (auto& e : j["current"]) keyhook::detail::wipe_string(e.template get_ref<std::string&>());
    for (auto& e : j["oldKeys"]) keyhook::detail::wipe_string(e["key"].template get_ref<std::string&>());
    return secret(std::move(text), secret_kind::signing_key);
}

template <class D>
KEYHOOK_CRYPTO_INLINE result<signing_key_set> try_load_signing_key_set(std::string_view stored) {
    using json = typename keyhook::detail::json_for<D>::type;
    auto parsed = try_parse_json<D>(stored);
    if (!parsed) return detail::without_key_text(parsed.error());
    // The DOM holds key text: wipe it whatever happens below.
    struct wipe_dom {
        json& j;
        ~wipe_dom() {
            const auto wipe = [](json& v) {
                if (v.is_string()) keyhook::detail::wipe_string(v.template get_ref<std::string&>());
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
    signing_key_set set;
    if (auto e = keyhook::detail::read_members(*parsed, std::string(), set.keys_))
        return detail::without_key_text(std::move(*e));
    std::stable_sort(set.keys_.old.begin(), set.keys_.old.end(),
                     [](const rotated_key& a, const rotated_key& b) { return a.expires_at < b.expires_at; });
    return set;
}

}  // namespace keyhook::crypto

#if defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the one instantiation of each deferred definition (config.hpp).
#include "keyhook/dispatch.hpp"
namespace keyhook::crypto {
template result<http_request> signing_key_set::try_sign_outbound<void>(const outbound_request&, timestamp);
template secret store_signing_key_set<void>(const signing_key_set&);
template result<signing_key_set> try_load_signing_key_set<void>(std::string_view);
}  // namespace keyhook::crypto
#endif
