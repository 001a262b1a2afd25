// keyhook: definitions of secret.hpp (see config.hpp for when they are compiled).
#pragma once

#include <ostream>

#include "keyhook/detail/utf8.hpp"
#include "keyhook/secret.hpp"

namespace keyhook {

KEYHOOK_INLINE std::size_t code_point_count(std::string_view s) {
    std::size_t n = 0;
    detail::for_each_utf8_unit(s, [&](const detail::utf8_unit&) { ++n; });
    return n;
}

KEYHOOK_INLINE std::string mask_key(std::string_view key) {
    std::string out;
    out.reserve(key.size());
    if (const auto prefix = detail::signing_key_prefix_of(key); !prefix.empty()) {
        out += prefix;
        out.append(code_point_count(key.substr(prefix.size())), '*');
        return out;
    }
    const std::size_t count = code_point_count(key);
    const bool partly = count >= min_partly_masked_length;
    std::size_t index = 0;
    detail::for_each_utf8_unit(key, [&](const detail::utf8_unit& u) {
        if (partly && u.valid && (index < mask_visible_head || index >= count - mask_visible_tail))
            out.append(key.data() + u.offset, u.length);
        else
            out += '*';
        ++index;
    });
    return out;
}

KEYHOOK_INLINE std::string secret::masked() const {
    if (kind_ == secret_kind::signing_key && detail::signing_key_prefix_of(value_).empty())
        return std::string(code_point_count(value_), '*');
    return mask_key(value_);
}

KEYHOOK_INLINE std::ostream& secret::print_to(std::ostream& os, const secret& s) {
    return os << "secret(" << escaped(s.masked()) << ')';
}

}  // namespace keyhook
