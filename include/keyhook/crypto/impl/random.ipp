// keyhook::crypto: definitions of random.hpp.
#pragma once

#include <climits>
#include <cstddef>
#include <string>

#include <openssl/err.h>
#include <openssl/rand.h>

#include "keyhook/crypto/random.hpp"
#include "keyhook/error.hpp"

namespace keyhook::crypto {

KEYHOOK_CRYPTO_INLINE void openssl_random::operator()(unsigned char* out, std::size_t n) const {
    // RAND_bytes takes an int count: feed it in chunks.
    constexpr std::size_t chunk = static_cast<std::size_t>(INT_MAX);
    while (n > 0) {
        const std::size_t take = n < chunk ? n : chunk;
        if (RAND_bytes(out, static_cast<int>(take)) != 1) {
            const unsigned long code = ERR_get_error();
            ERR_clear_error();
            throw exception(
                error{errc::invalid_value, "random", "OpenSSL RAND_bytes failed (error " + std::to_string(code) + ")"});
        }
        out += take;
        n -= take;
    }
}

}  // namespace keyhook::crypto
