// keyhook: definitions of detail/signing_secret.hpp (see config.hpp for when they are compiled).
#pragma once

#include <string>
#include <utility>

#include "keyhook/detail/signing_secret.hpp"

namespace keyhook::detail {

KEYHOOK_INLINE result<std::string> try_decode_signing_secret(std::string_view text, std::string_view where,
                                                             signing_key_use use) {
    if (text.substr(0, signing_secret_prefix.size()) == signing_secret_prefix)
        text.remove_prefix(signing_secret_prefix.size());
    if (text.empty()) return error{errc::invalid_value, std::string(where), "the secret is empty"};
    auto decoded = try_base64_decode(text);
    if (!decoded)
        return error{errc::invalid_value, std::string(where), "not whsec_ + base64: " + decoded.error().message};
    // Wiped on every path: a refused key is still key material (wiping).
    wiped_string key(std::move(*decoded));
    const std::size_t n = key.get().size();
    // Non-empty text decodes to at least one byte; checked anyway, an empty HMAC key is no key.
    if (n == 0) return error{errc::out_of_range, std::string(where), "the key is 0 bytes"};
    if (use == signing_key_use::sign && (n < min_signing_key_bytes || n > max_signing_key_bytes))
        return error{errc::out_of_range, std::string(where),
                     "the key is " + std::to_string(n) + " bytes; expected " + std::to_string(min_signing_key_bytes) +
                         " to " + std::to_string(max_signing_key_bytes) + " to sign with"};
    return std::move(key.get());
}

}  // namespace keyhook::detail
