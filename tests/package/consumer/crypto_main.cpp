// Uses keyhook::crypto: 32 bytes from the secure random source.
#include <keyhook/crypto/random.hpp>

#include <iostream>

int main() {
    unsigned char bytes[32] = {};
    keyhook::crypto::openssl_random{}(bytes, sizeof bytes);
    unsigned any = 0;
    for (unsigned char b : bytes) any |= b;
    // All 32 bytes zero has probability 2^-256: treat it as a failure.
    std::cout << (any != 0 ? "keyhook::crypto: random bytes as expected\n" : "keyhook::crypto: all zero\n");
    return any != 0 ? 0 : 1;
}
