#pragma once
// keyhook: definitions of key_policy_json.hpp, derived from the member tables.

#include <string>
#include <string_view>
#include <utility>

#include "keyhook/detail/key_policy_table.hpp"
#include "keyhook/key_policy_json.hpp"

namespace keyhook {

template <class Json>
result<key_policy> try_key_policy_from_json(const detail::non_deduced_t<Json>& j, std::string_view path) {
    key_policy p;
    if (auto e = detail::read_members(j, std::string(path), p)) return std::move(*e);
    return p;
}

template <class Json>
result<key_usage> try_key_usage_from_json(const detail::non_deduced_t<Json>& j, std::string_view path) {
    key_usage u;
    if (auto e = detail::read_members(j, std::string(path), u)) return std::move(*e);
    return u;
}

template <class Json>
void to_json(Json& j, const key_policy& p) {
    detail::write_members(j, p);
}

template <class Json>
void to_json(Json& j, const key_usage& u) {
    detail::write_members(j, u);
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the JSON forms a program's translation units only declare.
#include <nlohmann/json.hpp>
namespace keyhook {
#define KEYHOOK_POLICY_JSON(Json)                                                                 \
    template result<key_policy> try_key_policy_from_json<Json>(const Json&, std::string_view); \
    template result<key_usage> try_key_usage_from_json<Json>(const Json&, std::string_view);   \
    template void to_json<Json>(Json&, const key_policy&);                                     \
    template void to_json<Json>(Json&, const key_usage&);
KEYHOOK_POLICY_JSON(nlohmann::json)
KEYHOOK_POLICY_JSON(nlohmann::ordered_json)
#undef KEYHOOK_POLICY_JSON
}  // namespace keyhook
#endif
