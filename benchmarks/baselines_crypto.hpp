// The OpenSSL baselines of signing (see baselines.hpp), shared by
// bench_signing.cpp and icount.cpp.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "keyhook/base64.hpp"

namespace keyhook_bench {

// A bare OpenSSL HMAC-SHA256: one fetched MAC and one context, made once.
struct bare_hmac {
    EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
    char digest[7] = "SHA256";
    const OSSL_PARAM params[2] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                  OSSL_PARAM_construct_end()};
    const std::string& key;

    explicit bare_hmac(const std::string& k) : key(k) {}
    bare_hmac(const bare_hmac&) = delete;
    bare_hmac& operator=(const bare_hmac&) = delete;
    ~bare_hmac() {
        EVP_MAC_CTX_free(ctx);
        EVP_MAC_free(mac);
    }
    // Keys the context and sets the digest (the floor does this per call).
    void set_key() { EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params); }
    // Re-starts a context keyed before, without key or parameters.
    void restart() { EVP_MAC_init(ctx, nullptr, 0, nullptr); }
    // `init` (re-)starts the context; then the five parts of id.ts.body, final, base64.
    template <class Init>
    std::string sign(Init init, std::string_view id, std::string_view ts, std::string_view body) {
        init();
        for (const std::string_view part : {id, std::string_view("."), ts, std::string_view("."), body})
            EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(part.data()), part.size());
        std::array<unsigned char, 32> out{};
        std::size_t n = 0;
        EVP_MAC_final(ctx, out.data(), &n, out.size());
        return keyhook::base64_encode(out.data(), n);
    }
};

}  // namespace keyhook_bench
