// keyhook: the one reader of members of a parsed JSON object (nlohmann's DOM or
// any type with its interface). Templates on the JSON type, so a header that
// uses them needs only <nlohmann/json_fwd.hpp>. Every reader returns the
// error it found, or nothing; messages come from error.hpp's builders.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "keyhook/error.hpp"

namespace keyhook::detail {

// The member `name` of object j, or nullptr when missing (or null, if `null_is_missing`).
template <class Json>
const Json* json_member(const Json& j, const char* name, bool null_is_missing = true) {
    const auto it = j.find(name);
    if (it == j.end() || (null_is_missing && it->is_null())) return nullptr;
    return &*it;
}

// A string member: absent or null is an error when `required`, else leaves out alone.
template <class Json>
std::optional<error> read_member_string(const Json& obj, const char* name, const std::string& base, bool required,
                                        std::string& out) {
    const auto* m = json_member(obj, name);
    if (!m) {
        if (required) return missing_member_error(path_member(base, name));
        return std::nullopt;
    }
    if (!m->is_string()) return wrong_type(path_member(base, name), "a string", *m);
    out = m->template get_ref<const std::string&>();
    return std::nullopt;
}

// An optional string member moved out of a DOM the caller owns (J3: a large
// body is held once); absent or null leaves out alone.
template <class Json>
std::optional<error> take_member_string(Json& obj, const char* name, const std::string& base, std::string& out) {
    const auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) return wrong_type(path_member(base, name), "a string", *it);
    out = std::move(it->template get_ref<std::string&>());
    return std::nullopt;
}

// A required boolean member.
template <class Json>
std::optional<error> read_member_bool(const Json& obj, const char* name, const std::string& base, bool& out) {
    const auto* m = json_member(obj, name);
    if (!m) return missing_member_error(path_member(base, name));
    if (!m->is_boolean()) return wrong_type(path_member(base, name), "true or false", *m);
    out = m->template get<bool>();
    return std::nullopt;
}

}  // namespace keyhook::detail
