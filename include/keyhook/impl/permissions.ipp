#pragma once
// keyhook: definitions of permissions.hpp.

#include "keyhook/permissions.hpp"

namespace keyhook {

KEYHOOK_INLINE api_family_set default_api_families() {
    return {api_family::batch(), api_family::execute(), api_family::metadata(), api_family::transforms(),
            api_family::validation()};
}

KEYHOOK_INLINE key_permissions merge_permissions(std::initializer_list<std::string_view> groups,
                                                 const permission_policy& policy) {
    return merge_permissions<std::initializer_list<std::string_view>>(groups, policy);
}

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const key_permissions& p) {
    os << "permissions{";
    const char* sep = "";
    for (const auto& [r, level] : p.access_) {
        os << sep << r << ": " << level;
        sep = ", ";
    }
    os << "; families:";
    for (const auto& f : p.families_) os << ' ' << f;
    return os << '}';
}

}  // namespace keyhook
