// keyhook internal: the JSON type of a value a SAX reader met where another
// was expected, and its name in wrong_type messages ("got array").
#pragma once

#include <string_view>

namespace keyhook::detail {

// `other` is nlohmann's binary value, which JSON text never yields.
enum class json_kind : unsigned char { null, boolean, number, string, object, array, other };

constexpr std::string_view json_kind_name(json_kind k) noexcept {
    switch (k) {
        case json_kind::null: return "null";
        case json_kind::boolean: return "boolean";
        case json_kind::number: return "number";
        case json_kind::string: return "string";
        case json_kind::object: return "object";
        case json_kind::array: return "array";
        case json_kind::other: return "binary";
    }
    return "binary";
}

}  // namespace keyhook::detail
