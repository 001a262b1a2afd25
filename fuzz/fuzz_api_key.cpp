// One record through try_api_key_from_json, and masking (M1 to M3) on
// arbitrary bytes. Properties:
//  - a record that reads writes back (to_json) to JSON that reads to an equal
//    record, and writing that is stable; errors name a path under the given one;
//  - mask_key keeps the number of characters, shows at most 6 of them, and
//    none for keys under 12 characters; a secret prints and serializes only
//    its masked form.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "keyhook/api_key.hpp"
#include "keyhook/secret.hpp"

namespace {

void check_mask(std::string_view key) {
    const std::string masked = keyhook::mask_key(key);
    const std::size_t count = keyhook::code_point_count(key);
    fuzz::check(keyhook::code_point_count(masked) == count, "mask_key changed the number of characters");
    fuzz::check(fuzz::first_invalid_utf8(masked) == std::string_view::npos, "mask_key wrote ill-formed UTF-8");
    fuzz::check(keyhook::mask_key(masked) == masked, "masking a masked value changed it");
    // B1: a signing key keeps its prefix only.
    for (const std::string_view prefix : {"whsec_", "whsk_", "whpk_"}) {
        if (fuzz::starts_with(key, prefix)) {
            fuzz::check(masked == std::string(prefix) + std::string(count - prefix.size(), '*'),
                        "mask_key shows part of a signing key");
            return;
        }
    }
    std::size_t visible = 0;
    keyhook::detail::for_each_code_point(masked, [&](std::size_t offset, std::size_t length) {
        if (!(length == 1 && masked[offset] == '*')) ++visible;
    });
    fuzz::check(visible <= 6, "mask_key shows more than 6 characters");
    if (count < 12) fuzz::check(visible == 0, "mask_key shows part of a key shorter than 12 characters");
    // Each shown character is one of the original's first or last three, at
    // its place; a byte of an ill-formed sequence is never shown (M1, M2).
    if (count >= 12) {
        std::size_t index = 0, out = 0;
        keyhook::detail::for_each_code_point(key, [&](std::size_t offset, std::size_t length) {
            const bool end = index < 3 || index >= count - 3;
            const auto unit = key.substr(offset, length);
            const bool valid = fuzz::first_invalid_utf8(unit) == std::string_view::npos;
            if (end && valid) {
                fuzz::check(masked.compare(out, length, unit) == 0, "mask_key's head or tail differs");
                out += length;
            } else {
                fuzz::check(out < masked.size() && masked[out] == '*', "mask_key shows a hidden character");
                ++out;
            }
            ++index;
        });
    }

    const keyhook::secret s{std::string(key)};
    std::ostringstream os;
    os << s;
    fuzz::check(os.str() == "secret(" + keyhook::escape_text(masked) + ")",
                "a secret prints more than its masked form");
    nlohmann::json j = s;
    fuzz::check(j.is_string() && j.get_ref<const std::string&>() == masked,
                "a secret serializes more than its masked form");
}

}  // namespace

KEYHOOK_FUZZ_TARGET(api_key) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_mask(text);

    nlohmann::json j;
    if (!fuzz::parse_json(text, j)) return 0;
    const auto key = keyhook::try_api_key_from_json(j, "r");
    if (!key) {
        const auto& e = key.error();
        fuzz::check(e.path == "r" || fuzz::starts_with(e.path, "r.") || fuzz::starts_with(e.path, "r["),
                    "an error path is not under the record's", e.path);
        std::vector<std::string> strings;
        fuzz::collect_strings(j, strings);
        fuzz::check_no_long_quote(e, strings);
        return 0;
    }
    const nlohmann::json written = *key;
    const auto again = keyhook::try_api_key_from_json(written);
    fuzz::check(again.has_value(), "a written record does not read", again ? "" : again.error().what());
    // P2: to_json writes `masked` masked again (a no-op on a properly masked value).
    auto expected = *key;
    if (expected.masked) expected.masked = keyhook::mask_key(*expected.masked);
    fuzz::check(*again == expected, "read, write, read changed the record");
    const nlohmann::json rewritten = *again;
    fuzz::check(rewritten == written, "writing a record is not stable");
    // nlohmann's customization point agrees with the non-throwing reader.
    fuzz::check(j.get<keyhook::api_key>() == *key, "from_json differs from try_api_key_from_json");
    return 0;
}
