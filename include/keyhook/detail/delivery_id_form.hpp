// keyhook internal: the member-table form of a delivery id ("msg_" and 32
// lower-case hex digits), shared by the delivery state and the notices.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "keyhook/detail/members.hpp"
#include "keyhook/delivery_id.hpp"
#include "keyhook/error.hpp"

namespace keyhook::detail {

struct delivery_id_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "a string";
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, delivery_id& out) {
        if (!v.is_string()) return wrong_type(path, expected, v);
        auto id = try_parse_delivery_id(v.template get_ref<const std::string&>());
        if (!id) return error{id.error().code, path, id.error().message};
        out = *id;
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const delivery_id& id) {
        slot = to_string(id);
    }
};

}  // namespace keyhook::detail
