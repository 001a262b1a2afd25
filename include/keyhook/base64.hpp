// keyhook: base64 (RFC 4648, standard alphabet), for signing secrets and
// signatures (B1). The decoder never quotes its input in an error: what it
// decodes is often a secret.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

// Padded base64 of `n` bytes.
[[nodiscard]] KEYHOOK_INLINE std::string base64_encode(const unsigned char* bytes, std::size_t n);

[[nodiscard]] inline std::string base64_encode(std::string_view bytes) {
    return base64_encode(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

// Decodes standard base64, padded or not ("QQ==" and "QQ" both give "A").
// Refused (errc::invalid_value, empty path: the caller knows where the text
// came from): a character outside the alphabet, padding anywhere but at the
// end, a length that no byte string encodes to (4k + 1 characters), and
// leftover bits that are not zero (so every byte string has one spelling).
[[nodiscard]] KEYHOOK_INLINE result<std::string> try_base64_decode(std::string_view text);

[[nodiscard]] KEYHOOK_INLINE std::string base64_decode(std::string_view text);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/base64.ipp"
#endif
