// webhook_deliver's rotating signing keys (rule B5): a webhook of the input
// may carry "signingKeys", its key set in the form keyhook's store-only
// serializer writes (keyhook::crypto::store_signing_key_set):
//   {"current": ["whsec_..." and/or "whsk_..."],
//    "oldKeys": [{"key": "whsec_..." or "whsk_...", "expiresAt": T4}, ...]}
// instead of "signingSecret". Each attempt is signed with the keys valid at
// its time on the run's timeline (the current ones and the old ones whose
// expiresAt is later), one webhook-signature entry each.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

namespace deliver {

using key_sets = std::map<std::string, keyhook::crypto::signing_key_set>;

// The key set of one webhook object at `path` ("webhooks[2]"), if it has one.
// Errors name the path ("webhooks[2].signingKeys.oldKeys[0].expiresAt") and
// the reason, never a key's text.
inline keyhook::result<std::optional<keyhook::crypto::signing_key_set>> key_set_of(const nlohmann::json& webhook,
                                                                                   const std::string& path) {
    namespace kd = keyhook::detail;
    const auto* keys = kd::json_member(webhook, "signingKeys");
    if (!keys) return std::optional<keyhook::crypto::signing_key_set>{};
    const auto base = kd::path_member(path, "signingKeys");
    if (kd::json_member(webhook, "signingSecret"))
        return keyhook::error{keyhook::errc::invalid_value, base, "give signingSecret or signingKeys, not both"};
    if (!keys->is_object()) return kd::wrong_type(base, "a key set object", *keys);
    // The loader reads the stored text; held as a secret so it is wiped after.
    const keyhook::secret text(keys->dump(), keyhook::secret_kind::signing_key);
    auto set = keyhook::crypto::try_load_signing_key_set(text.reveal());
    if (!set) {
        const auto& e = set.error();
        return keyhook::error{e.code, e.path.empty() ? base : base + "." + e.path, e.message};
    }
    return std::optional<keyhook::crypto::signing_key_set>(std::move(*set));
}

// Every key set of the input's "webhooks" array, by webhook name.
inline keyhook::result<key_sets> key_sets_of(const nlohmann::json& webhooks) {
    key_sets out;
    if (!webhooks.is_array()) return out;  // the dispatch reader reported it
    for (std::size_t i = 0; i < webhooks.size(); ++i) {
        auto set = key_set_of(webhooks[i], keyhook::detail::path_index("webhooks", i));
        if (!set) return set.error();
        if (*set) out.emplace(webhooks[i].at("name").get<std::string>(), std::move(**set));
    }
    return out;
}

// `request` (unsigned when its webhook has a key set) signed with `set`'s keys
// valid at `keys_at` (expired old keys dropped), with `signed_at` as the
// webhook-timestamp (real time: the receiver checks it against its clock).
inline keyhook::result<keyhook::http_request> sign_with_set(keyhook::crypto::signing_key_set& set,
                                                            keyhook::http_request request,
                                                            const keyhook::delivery_id& id, keyhook::timestamp keys_at,
                                                            keyhook::timestamp signed_at) {
    set.drop_expired(keys_at);
    return keyhook::crypto::try_sign_request(std::move(request), set.keys_at(keys_at), keyhook::to_string(id),
                                             signed_at);
}

}  // namespace deliver
