// keyhook: definitions of detail/signing_keys.hpp (see config.hpp for when they are compiled).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "keyhook/detail/signing_keys.hpp"

namespace keyhook::detail {

KEYHOOK_INLINE std::optional<error> check_signing_keys(std::string_view text, std::string_view where,
                                                       std::vector<decoded_signing_key>* keep) {
    std::optional<error> first;
    std::size_t count = 0;
    for_each_signing_key(text, [&](std::string_view, std::size_t) { ++count; });
    for_each_signing_key(text, [&](std::string_view entry, std::size_t index) {
        if (first) return;
        // Which entry, when there are several.
        const std::string which = count > 1 ? "key " + std::to_string(index + 1) + ": " : std::string();
        if (entry.substr(0, public_key_prefix.size()) == public_key_prefix) {
            first = error{errc::invalid_value, std::string(where),
                          which + "a whpk_ public key only verifies; signing needs the whsk_ key"};
        } else if (entry.substr(0, asymmetric_signing_key_prefix.size()) == asymmetric_signing_key_prefix) {
            auto bytes = try_base64_decode(entry.substr(asymmetric_signing_key_prefix.size()));
            if (!bytes) {
                first = error{errc::invalid_value, std::string(where), which + "not whsk_ + base64"};
            } else {
                const std::size_t n = bytes->size();
                if (n != asymmetric_signing_key_bytes)
                    first = error{errc::out_of_range, std::string(where),
                                  which + "the key is " + std::to_string(n) + " bytes; whsk_ keys are 64"};
                if (keep && !first)
                    keep->push_back({true, secret(std::move(*bytes), secret_kind::signing_key)});
                else
                    wipe_string(*bytes);
            }
        } else {
            auto key = try_decode_signing_secret(entry, where, signing_key_use::sign);
            if (!key) {
                error e = key.error();
                e.message = which + e.message;
                first = std::move(e);
            } else if (keep) {
                keep->push_back({false, secret(std::move(*key), secret_kind::signing_key)});
            } else {
                wipe_string(*key);
            }
        }
    });
    if (!first && count == 0) first = error{errc::invalid_value, std::string(where), "the secret is empty"};
    return first;
}

}  // namespace keyhook::detail
