#pragma once
// keyhook: definitions of permissions.hpp.

#include <ostream>
#include <tuple>

#include "keyhook/permissions.hpp"

namespace keyhook {

KEYHOOK_INLINE std::ostream& api_family::print_to(std::ostream& os, const api_family& f) { return os << escaped(f.name()); }

KEYHOOK_INLINE std::ostream& resource_ref::print_to(std::ostream& os, resource_ref r) {
    switch (r.kind) {
        case resource_kind::all: return os << "all folders and services";
        case resource_kind::folder: return os << "folder " << escaped(r.folder);
        case resource_kind::service: return os << "service " << escaped(r.folder) << '/' << escaped(r.service);
    }
    return os;
}

KEYHOOK_INLINE std::ostream& resource::print_to(std::ostream& os, const resource& r) { return os << r.ref(); }

KEYHOOK_INLINE bool group_grant::is_equal(const group_grant& a, const group_grant& b) {
    return a.access == b.access && a.families == b.families && a.features == b.features;
}

KEYHOOK_INLINE bool permission_policy::is_equal(const permission_policy& a, const permission_policy& b) {
    return a.groups == b.groups && a.features == b.features && a.default_families == b.default_families;
}

KEYHOOK_INLINE key_permissions::key_permissions(access_map access, api_family_set families)
    : access_(std::move(access)), families_(std::move(families)) {
    for (const auto& [r, level] : access_) note(r.ref(), level);
}

KEYHOOK_INLINE access_level key_permissions::granted_on(resource_ref r) const noexcept {
    const auto it = access_.find(r);
    return it == access_.end() ? access_level::none : it->second;
}

KEYHOOK_INLINE bool key_permissions::allows(std::string_view family) const noexcept {
    return families_.find(family) != families_.end();
}

KEYHOOK_INLINE void key_permissions::grant(const resource& r, access_level level) {
    auto [it, inserted] = access_.emplace(r, level);
    if (!inserted) it->second = greater_access(it->second, level);
    note(r.ref(), it->second);
}

KEYHOOK_INLINE void key_permissions::add_families(const api_family_set& more) {
    families_.insert(more.begin(), more.end());
}

KEYHOOK_INLINE bool key_permissions::is_equal(const key_permissions& a, const key_permissions& b) {
    return a.access_ == b.access_ && a.families_ == b.families_;
}

KEYHOOK_INLINE bool operator<(const key_permissions& a, const key_permissions& b) {
    return std::tie(a.access_, a.families_) < std::tie(b.access_, b.families_);
}

KEYHOOK_INLINE api_family_set default_api_families() {
    return {api_family::batch(), api_family::execute(), api_family::metadata(), api_family::transforms(),
            api_family::validation()};
}

KEYHOOK_INLINE void detail::merge_group(key_permissions& merged, std::string_view group,
                                        const permission_policy& policy) {
    const auto g = policy.groups.find(group);
    if (g == policy.groups.end()) return;
    for (const auto& [r, level] : g->second.access) merged.grant(r, level);
    merged.add_families(g->second.families);
    for (const auto& feature : g->second.features) {
        const auto f = policy.features.find(std::string_view(feature));
        if (f != policy.features.end()) merged.add_families(f->second);
    }
}

KEYHOOK_INLINE key_permissions merge_permissions(std::initializer_list<std::string_view> groups,
                                                 const permission_policy& policy) {
    return merge_permissions<std::initializer_list<std::string_view>>(groups, policy);
}

KEYHOOK_INLINE std::ostream& key_permissions::print_to(std::ostream& os, const key_permissions& p) {
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
