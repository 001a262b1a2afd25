#pragma once
// keyhook: definitions of delivery_state.hpp (the parts that need the JSON library).

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "keyhook/delivery_state.hpp"

namespace keyhook {

KEYHOOK_INLINE result<delivery_state> try_parse_delivery_state(std::string_view text) {
    auto document = try_parse_json(text);
    if (!document) return document.error();
    return try_delivery_state_from_json(*document);
}

KEYHOOK_INLINE delivery_state parse_delivery_state(std::string_view text) {
    return try_parse_delivery_state(text).value();
}

KEYHOOK_INLINE std::string write_delivery_state(const delivery_state& s) { return nlohmann::json(s).dump(); }

}  // namespace keyhook
