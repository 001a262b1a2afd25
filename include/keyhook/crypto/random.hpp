// keyhook::crypto: the host's ready secure random source, OpenSSL's RAND_bytes.
// Anything in keyhook that needs randomness takes a callable
// `void(unsigned char* out, std::size_t n)`; this is one such callable.
#pragma once

#include <climits>
#include <cstddef>
#include <string>

#include <openssl/err.h>
#include <openssl/rand.h>

#include "keyhook/error.hpp"

namespace keyhook::crypto {

// Fills `n` bytes from OpenSSL's CSPRNG; throws keyhook::exception
// (errc::invalid_value, path "random") when OpenSSL cannot supply them, so a
// caller never goes on with bytes that are not random.
struct openssl_random {
    void operator()(unsigned char* out, std::size_t n) const {
        // RAND_bytes takes an int count: feed it in chunks.
        constexpr std::size_t chunk = static_cast<std::size_t>(INT_MAX);
        while (n > 0) {
            const std::size_t take = n < chunk ? n : chunk;
            if (RAND_bytes(out, static_cast<int>(take)) != 1) {
                const unsigned long code = ERR_get_error();
                ERR_clear_error();
                throw exception(error{errc::invalid_value, "random",
                                      "OpenSSL RAND_bytes failed (error " + std::to_string(code) + ")"});
            }
            out += take;
            n -= take;
        }
    }
};

}  // namespace keyhook::crypto
