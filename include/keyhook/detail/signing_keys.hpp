// keyhook: the signing keys a webhook carries (B1, B3), checked in the core
// so that a validated webhook always signs. The configured text is one key or
// several separated by spaces: "whsec_..." HMAC secrets (v1) and "whsk_..."
// Ed25519 signing keys (v1a), at once while a webhook moves between schemes.
// The core checks the written form (prefix, base64, size); keyhook::crypto
// also checks that a whsk_ key's public half belongs to its seed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/base64.hpp"
#include "keyhook/config.hpp"
#include "keyhook/detail/signing_secret.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/error.hpp"
#include "keyhook/secret.hpp"

namespace keyhook::detail {

inline constexpr std::string_view asymmetric_signing_key_prefix = "whsk_";
inline constexpr std::string_view public_key_prefix = "whpk_";
inline constexpr std::size_t asymmetric_signing_key_bytes = 64;  // seed || public key

// Calls f(entry, index) for each space-separated entry of `text`.
template <class F>
void for_each_signing_key(std::string_view text, F&& f) {
    std::size_t index = 0;
    while (!text.empty()) {
        const auto space = text.find(' ');
        const auto entry = text.substr(0, space);
        text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
        if (!entry.empty()) f(entry, index++);
    }
}

// One entry of a webhook's signing key text as validation decoded it, so that
// signing need not decode again: the HMAC key bytes (whsec_) or seed || public
// key (whsk_). A secret, so the bytes are wiped when released.
struct decoded_signing_key {
    bool asymmetric = false;
    secret bytes;
};

// Checks a webhook's signing key text for keyhook's own sending; the first
// error, with `where` as its path (the entry's position in the message when
// there are several). Decoded bytes go to `keep` when given, else are wiped.
// Nothing of a key is quoted.
[[nodiscard]] KEYHOOK_INLINE std::optional<error> check_signing_keys(std::string_view text, std::string_view where,
                                                                     std::vector<decoded_signing_key>* keep = nullptr);

}  // namespace keyhook::detail

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/signing_keys.ipp"
#endif
