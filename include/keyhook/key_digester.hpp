// keyhook: how a key index built from stored digests digests a presented key
// (rule K11). key_index.hpp holds such an index; keyhook::crypto's pepper
// sets (crypto/stored_key.hpp) implement the interface, and need only this.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace keyhook {

// K11: the 32-byte digest a key is kept as at rest (HMAC-SHA-256 under a
// pepper, or a legacy plain SHA-256), as raw bytes.
using key_fingerprint = std::array<unsigned char, 32>;

// K11: how an index built from stored digests digests a presented key, one
// scheme at a time (keyhook::crypto's pepper sets implement it: scheme 1 is
// the legacy SHA-256, the others their peppers). Shared, never changed once
// an index holds it, and called from concurrent checks: const and noexcept.
class key_digester {
public:
    key_digester() = default;
    key_digester(const key_digester&) = delete;
    key_digester& operator=(const key_digester&) = delete;
    virtual ~key_digester() = default;
    // The digest of `key` under `scheme` (1 to 255); false when it cannot be
    // computed (the caller then treats the key as not found).
    virtual bool digest(std::uint8_t scheme, std::string_view key, key_fingerprint& out) const noexcept = 0;
    // Whether a key found under `scheme` should be stored again under the
    // current one (legacy form, older pepper).
    [[nodiscard]] virtual bool outdated(std::uint8_t scheme) const noexcept = 0;
};

}  // namespace keyhook
