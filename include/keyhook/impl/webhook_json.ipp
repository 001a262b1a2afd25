#pragma once
// keyhook: definitions of webhook_json.hpp. The readers and writers are
// derived from the records' member tables, in detail/webhook_table.hpp and
// detail/webhook_settings_table.hpp.

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/detail/webhook_settings_table.hpp"
#include "keyhook/webhook_json.hpp"

namespace keyhook {

KEYHOOK_INLINE bool webhook_settings::is_equal(const webhook_settings& a, const webhook_settings& b) {
    return detail::members_equal(a, b);
}
KEYHOOK_INLINE std::ostream& webhook_settings::print_to(std::ostream& os, const webhook_settings& s) {
    os << s.tenant;
    for (const auto& w : s.webhooks) os << '\n' << w;
    return os;
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the JSON forms a program's translation units only declare.
#include <nlohmann/json.hpp>
namespace keyhook {
#define KEYHOOK_WEBHOOK_JSON(Json)                                                                               \
    template result<tenant_settings> try_tenant_settings_from_json<Json>(const Json&, std::string_view);         \
    template result<webhook> try_webhook_from_json<Json>(const Json&, std::string_view);                         \
    template result<std::vector<validated_webhook>> try_validated_webhooks_from_json<Json>(                      \
        const Json&, const endpoint_policy&, std::string_view);                                                  \
    template result<webhook_settings> try_webhook_settings_from_json<Json>(const Json&, const endpoint_policy&); \
    template void to_json<Json>(Json&, const tenant_settings&);                                                  \
    template void to_json<Json>(Json&, const webhook&);                                                          \
    template void to_json<Json>(Json&, const webhook_settings&);                                                 \
    template void to_store_json<Json>(Json&, const webhook&);                                                    \
    template void to_store_json<Json>(Json&, const webhook_settings&);
KEYHOOK_WEBHOOK_JSON(nlohmann::json)
KEYHOOK_WEBHOOK_JSON(nlohmann::ordered_json)
#undef KEYHOOK_WEBHOOK_JSON
}  // namespace keyhook
#endif
