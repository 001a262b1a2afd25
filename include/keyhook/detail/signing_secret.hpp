// keyhook: the written form of a webhook signing secret (B1), "whsec_" +
// base64 of the key bytes. Core, so that webhook validation can refuse a
// malformed secret when it is configured, not when the first delivery is signed.
// B1 sizes: a key keyhook signs with (generated, or configured on a webhook)
// has 24 to 64 bytes; a key it only verifies with may have any non-empty
// length, because other senders issue shorter ones (Svix's documentation shows
// an 18-byte key) and the Standard Webhooks libraries accept them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "keyhook/base64.hpp"
#include "keyhook/config.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook::detail {

inline constexpr std::string_view signing_secret_prefix = "whsec_";
inline constexpr std::size_t min_signing_key_bytes = 24;
inline constexpr std::size_t max_signing_key_bytes = 64;

// What a key is read for; only signing bounds its size.
enum class signing_key_use {
    sign,    // keyhook's own sending: 24 to 64 bytes
    verify,  // checking what another sender signed: any non-empty length
};

// The key bytes of "whsec_<base64>" or of the bare base64 part. Errors carry
// `where` as their path and never quote the text; the bytes of a key refused
// for its size are wiped.
[[nodiscard]] KEYHOOK_INLINE result<std::string> try_decode_signing_secret(std::string_view text,
                                                                           std::string_view where,
                                                                           signing_key_use use = signing_key_use::sign);

}  // namespace keyhook::detail

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/signing_secret.ipp"
#endif
