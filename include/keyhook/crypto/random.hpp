// keyhook::crypto: the host's ready secure random source, OpenSSL's RAND_bytes.
// Anything in keyhook that needs randomness takes a callable
// `void(unsigned char* out, std::size_t n)`; this is one such callable.
#pragma once

#include <cstddef>

#include "keyhook/config.hpp"

namespace keyhook::crypto {

// Fills `n` bytes from OpenSSL's CSPRNG; throws keyhook::exception
// (errc::invalid_value, path "random") when OpenSSL cannot supply them, so a
// caller never goes on with bytes that are not random.
struct openssl_random {
    KEYHOOK_CRYPTO_INLINE void operator()(unsigned char* out, std::size_t n) const;
};

}  // namespace keyhook::crypto

#if KEYHOOK_CRYPTO_DEFINITIONS
#include "keyhook/crypto/impl/random.ipp"
#endif
