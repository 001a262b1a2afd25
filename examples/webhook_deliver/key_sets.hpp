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
#include <string_view>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/error.hpp"
#include "keyhook/http.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/members.hpp"
#include "keyhook/result.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

namespace deliver {

using key_sets = std::map<std::string, keyhook::crypto::signing_key_set>;

// A key set as a member of a record (the webhook's "signingKeys"). Read by
// keyhook's loader of the stored form; errors name the path
// ("webhooks[2].signingKeys.oldKeys[0].expiresAt") and the reason, never a
// key's text. Written in the stored form for a store's copy
// (keyhook::reveal_secrets), else masked (keyhook::crypto::to_json).
struct key_set_form {
    static constexpr keyhook::form_kind kind = keyhook::form_kind::value;
    static constexpr std::string_view expected = "a key set object";
    template <class Json>
    static std::optional<keyhook::error> read(const Json& v, const std::string& path,
                                              std::optional<keyhook::crypto::signing_key_set>& out) {
        if (!v.is_object()) return keyhook::wrong_type(path, expected, v);
        // The loader reads the stored text; held as a secret so it is wiped after.
        const keyhook::secret text(v.dump(), keyhook::secret_kind::signing_key);
        auto set = keyhook::crypto::try_load_signing_key_set(text.reveal());
        if (!set) {
            const auto& e = set.error();
            return keyhook::error{e.code, e.path.empty() ? path : path + "." + e.path, e.message};
        }
        out.emplace(std::move(*set));
        return std::nullopt;
    }
    template <class Json, class Ctx>
    static void write(Json& slot, const keyhook::crypto::signing_key_set& in, const Ctx&) {
        if constexpr (std::is_same_v<Ctx, keyhook::reveal_secrets>)
            slot = keyhook::parse_json(keyhook::crypto::store_signing_key_set(in).reveal());
        else
            keyhook::crypto::to_json(slot, in);
    }
};

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
