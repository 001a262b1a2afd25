// keyhook internal: the member tables of a stored signing key set (B5) and
// their forms (detail/members.hpp). Included by the implementation files only,
// so that a program does not instantiate them in every translation unit.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/detail/members.hpp"
#include "keyhook/error.hpp"

namespace keyhook::crypto {

namespace detail {
using keyhook::detail::form_kind;
using keyhook::detail::presence;

// A stored key, a whsec_ secret or a whsk_ key by its prefix, written in full
// (the store form only). A parse error keeps its reason, never the key's text.
struct stored_key_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "a whsec_ or whsk_ key";
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, std::optional<signing_secret>& s,
                                     std::optional<asymmetric_signing_key>& a) {
        if (!v.is_string()) return keyhook::detail::wrong_type(path, expected, v);
        const auto& text = v.template get_ref<const std::string&>();
        if (text.compare(0, asymmetric_signing_key_prefix.size(), asymmetric_signing_key_prefix) == 0) {
            auto k = try_parse_asymmetric_signing_key(text);
            if (!k) return error{k.error().code, path, k.error().message};
            a = std::move(*k);
        } else {
            auto k = try_parse_signing_secret(text, signing_key_use::sign);
            if (!k) return error{k.error().code, path, k.error().message};
            s = std::move(*k);
        }
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const std::optional<signing_secret>& s,
                      const std::optional<asymmetric_signing_key>& a) {
        slot = s ? s->reveal() : a->reveal();
    }
};

// The current keys: an array of at most one key per scheme, at least one.
struct current_keys_form {
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, std::optional<signing_secret>& s,
                                     std::optional<asymmetric_signing_key>& a) {
        if (!v.is_array()) return keyhook::detail::wrong_type(path, "an array of keys", v);
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto at = keyhook::detail::path_index(path, i);
            std::optional<signing_secret> one_s;
            std::optional<asymmetric_signing_key> one_a;
            if (auto e = stored_key_form::read(v[i], at, one_s, one_a)) return e;
            if ((one_s && s) || (one_a && a))
                return error{errc::invalid_value, at, "a second current key of the same scheme (one each at most)"};
            if (one_s) s = std::move(one_s);
            if (one_a) a = std::move(one_a);
        }
        if (!s && !a) return error{errc::missing_member, path, "no current key"};
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const std::optional<signing_secret>& s,
                      const std::optional<asymmetric_signing_key>& a) {
        slot = Json::array();
        if (s) slot.push_back(s->reveal());
        if (a) slot.push_back(a->reveal());
    }
};
}  // namespace detail

}  // namespace keyhook::crypto

namespace keyhook::detail {
template <>
struct members_of<crypto::rotated_key> {
    using k = crypto::rotated_key;
    static constexpr auto rows =
        make_rows(tie<crypto::detail::stored_key_form>("key", presence::required, &k::secret, &k::asymmetric),
                  row<time_form>("expiresAt", &k::expires_at, presence::required));
};
static_assert(members_complete<crypto::rotated_key>());

template <>
struct members_of<crypto::detail::key_set_members> {
    using m = crypto::detail::key_set_members;
    static constexpr auto rows =
        make_rows(tie<crypto::detail::current_keys_form>("current", presence::required, &m::secret, &m::asymmetric),
                  row<list_form<record_form<crypto::rotated_key>, crypto::max_old_signing_keys>>("oldKeys", &m::old,
                                                                                                 presence::optional));
};
static_assert(members_complete<crypto::detail::key_set_members>());
}  // namespace keyhook::detail

// Header-only mode (and the compiled library): the record's definitions, which
// use the table. Included from here, after the table, so that this header can
// be included first as well as through key_rotation.hpp.
#if KEYHOOK_CRYPTO_DEFINITIONS
#include "keyhook/crypto/impl/key_rotation.ipp"
#endif
