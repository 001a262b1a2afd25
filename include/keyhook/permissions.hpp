// keyhook: what a key may do (rule K9). Access levels per resource, API
// families, a tenant's mapping of groups to grants (supplied by the host), and
// the merge of a key's groups into one set of effective permissions.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/error.hpp"

namespace keyhook {

// K9: ordered none < read < execute < write < admin; compare with < and >=.
enum class access_level : unsigned char { none, read, execute, write, admin };

template <>
struct detail::enum_names<access_level> {
    static constexpr std::string_view values[] = {"none", "read", "execute", "write", "admin"};
};

[[nodiscard]] constexpr access_level greater_access(access_level a, access_level b) noexcept { return a < b ? b : a; }

// The name of a family of APIs a key may call ("Batch", "Execute", ...). Its own
// type so that a family is never confused with a group or a feature name.
// Names compare exactly (case-sensitive).
class api_family {
public:
    api_family() = default;
    explicit api_family(std::string name) noexcept : name_(std::move(name)) {}

    // The five families every key gets by default (spec 1).
    [[nodiscard]] static api_family batch() { return api_family("Batch"); }
    [[nodiscard]] static api_family execute() { return api_family("Execute"); }
    [[nodiscard]] static api_family metadata() { return api_family("Metadata"); }
    [[nodiscard]] static api_family transforms() { return api_family("Transforms"); }
    [[nodiscard]] static api_family validation() { return api_family("Validation"); }

    [[nodiscard]] const std::string& name() const noexcept { return name_; }

    friend bool operator==(const api_family& a, const api_family& b) noexcept { return a.name_ == b.name_; }
    friend bool operator!=(const api_family& a, const api_family& b) noexcept { return a.name_ != b.name_; }
    friend bool operator<(const api_family& a, const api_family& b) noexcept { return a.name_ < b.name_; }
    // Transparent comparison with a bare name, so sets can be searched without allocating.
    friend bool operator<(const api_family& a, std::string_view b) noexcept { return std::string_view(a.name_) < b; }
    friend bool operator<(std::string_view a, const api_family& b) noexcept { return a < std::string_view(b.name_); }
    // Escaped (P1): feature names come from the host's configuration.
    friend std::ostream& operator<<(std::ostream& os, const api_family& x) { return print_to(os, x); }

private:
    std::string name_;

    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const api_family& x);
};

using api_family_set = std::set<api_family, std::less<>>;

// Batch, Execute, Metadata, Transforms, Validation.
[[nodiscard]] KEYHOOK_INLINE api_family_set default_api_families();

// Where an access level applies: every folder and service of the tenant, one
// folder (and the services in it), or one service of a folder.
enum class resource_kind : unsigned char { all, folder, service };

template <>
struct detail::enum_names<resource_kind> {
    static constexpr std::string_view values[] = {"all", "folder", "service"};
};

class resource;

// A non-owning view of a resource: what an authorization check takes, so that a
// host can describe the called resource from the request without allocating.
struct resource_ref {
    resource_kind kind = resource_kind::all;
    std::string_view folder;   // empty for `all`
    std::string_view service;  // set only for `service`

    [[nodiscard]] static constexpr resource_ref all() noexcept { return {}; }
    [[nodiscard]] static constexpr resource_ref in_folder(std::string_view f) noexcept {
        return {resource_kind::folder, f, {}};
    }
    [[nodiscard]] static constexpr resource_ref of_service(std::string_view f, std::string_view s) noexcept {
        return {resource_kind::service, f, s};
    }

    resource_ref() = default;
    constexpr resource_ref(resource_kind k, std::string_view f, std::string_view s) noexcept
        : kind(k), folder(f), service(s) {}
    resource_ref(const resource& r) noexcept;  // NOLINT: a view, like string_view from string

    [[nodiscard]] constexpr std::tuple<resource_kind, std::string_view, std::string_view> tie() const noexcept {
        return {kind, folder, service};
    }
    // tie()'s equality, without instantiating the tuple's comparison in every user.
    friend constexpr bool operator==(resource_ref a, resource_ref b) noexcept {
        return a.kind == b.kind && a.folder == b.folder && a.service == b.service;
    }
    friend constexpr bool operator!=(resource_ref a, resource_ref b) noexcept { return !(a == b); }
    // The tuple's order, each string compared once (a policy's map is searched with it).
    friend constexpr bool operator<(resource_ref a, resource_ref b) noexcept {
        if (a.kind != b.kind) return a.kind < b.kind;
        if (const int c = a.folder.compare(b.folder); c != 0) return c < 0;
        return a.service.compare(b.service) < 0;
    }
    friend std::ostream& operator<<(std::ostream& os, resource_ref x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, resource_ref x);
};

// An owning resource, for grants stored in a policy.
class resource {
public:
    resource() = default;  // all folders and services

    [[nodiscard]] static resource all() { return {}; }
    [[nodiscard]] static resource folder(std::string name) {
        return resource(resource_kind::folder, std::move(name), {});
    }
    [[nodiscard]] static resource service(std::string folder, std::string name) {
        return resource(resource_kind::service, std::move(folder), std::move(name));
    }
    explicit resource(resource_ref r) : kind_(r.kind), folder_(r.folder), service_(r.service) {}

    [[nodiscard]] resource_kind kind() const noexcept { return kind_; }
    [[nodiscard]] const std::string& folder_name() const noexcept { return folder_; }
    [[nodiscard]] const std::string& service_name() const noexcept { return service_; }
    [[nodiscard]] resource_ref ref() const noexcept { return {kind_, folder_, service_}; }

    friend bool operator==(const resource& a, const resource& b) noexcept { return a.ref() == b.ref(); }
    friend bool operator!=(const resource& a, const resource& b) noexcept { return !(a == b); }
    friend bool operator<(const resource& a, const resource& b) noexcept { return a.ref() < b.ref(); }
    friend bool operator<(const resource& a, resource_ref b) noexcept { return a.ref() < b; }
    friend bool operator<(resource_ref a, const resource& b) noexcept { return a < b.ref(); }
    friend std::ostream& operator<<(std::ostream& os, const resource& x) { return print_to(os, x); }

private:
    resource(resource_kind k, std::string f, std::string s) : kind_(k), folder_(std::move(f)), service_(std::move(s)) {}
    resource_kind kind_ = resource_kind::all;
    std::string folder_;
    std::string service_;

    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const resource& x);
};

inline resource_ref::resource_ref(const resource& r) noexcept : resource_ref(r.ref()) {}

using access_map = std::map<resource, access_level, std::less<>>;

// What one group of the tenant grants: access levels, API families beyond the
// defaults, and names of feature permissions (each of which adds families).
struct group_grant {
    access_map access;
    api_family_set families;
    std::vector<std::string> features;

    friend bool operator==(const group_grant& a, const group_grant& b) { return is_equal(a, b); }
    friend bool operator!=(const group_grant& a, const group_grant& b) { return !(a == b); }

private:
    static KEYHOOK_INLINE bool is_equal(const group_grant& a, const group_grant& b);
};

// A tenant's permission model, supplied by the host: group name -> grant,
// feature permission name -> the families it adds, and the families every key
// has (policy: the five of spec 1). A group or feature the policy does not know
// grants nothing.
struct permission_policy {
    std::map<std::string, group_grant, std::less<>> groups;
    std::map<std::string, api_family_set, std::less<>> features;
    api_family_set default_families = default_api_families();

    friend bool operator==(const permission_policy& a, const permission_policy& b) { return is_equal(a, b); }
    friend bool operator!=(const permission_policy& a, const permission_policy& b) { return !(a == b); }

private:
    static KEYHOOK_INLINE bool is_equal(const permission_policy& a, const permission_policy& b);
};

// The effective permissions of one key: its groups merged (K9).
class key_permissions {
public:
    key_permissions() = default;
    KEYHOOK_INLINE key_permissions(access_map access, api_family_set families);

    [[nodiscard]] const access_map& access() const noexcept { return access_; }
    [[nodiscard]] const api_family_set& families() const noexcept { return families_; }

    // The level granted directly on r (no inheritance), none if not listed.
    [[nodiscard]] KEYHOOK_INLINE access_level granted_on(resource_ref r) const noexcept;

    // The level a call on r gets: a grant on all folders and services also
    // covers each folder, and a folder's grant covers its services; where
    // several apply, the greatest wins (a narrower grant never lowers a wider one).
    [[nodiscard]] access_level access_to(resource_ref r) const noexcept {
        auto level = all_level_;
        // A map is searched only when a grant of that kind could raise the level.
        if (r.kind == resource_kind::all) return level;
        if (max_folder_ > level) level = greater_access(level, granted_on(resource_ref::in_folder(r.folder)));
        if (r.kind == resource_kind::service && max_service_ > level) level = greater_access(level, granted_on(r));
        return level;
    }

    [[nodiscard]] KEYHOOK_INLINE bool allows(std::string_view family) const noexcept;
    [[nodiscard]] bool allows(const api_family& family) const noexcept {
        return allows(std::string_view(family.name()));
    }

    // Raises the level on r to at least `level`, and adds families (the merge's steps).
    KEYHOOK_INLINE void grant(const resource& r, access_level level);
    KEYHOOK_INLINE void add_families(const api_family_set& more);

    friend bool operator==(const key_permissions& a, const key_permissions& b) { return is_equal(a, b); }
    friend bool operator!=(const key_permissions& a, const key_permissions& b) { return !(a == b); }
    friend KEYHOOK_INLINE bool operator<(const key_permissions& a, const key_permissions& b);
    friend std::ostream& operator<<(std::ostream& os, const key_permissions& x) { return print_to(os, x); }

private:
    // Kept with every grant, so that most checks need no map lookup.
    void note(resource_ref r, access_level level) noexcept {
        switch (r.kind) {
            case resource_kind::all: all_level_ = greater_access(all_level_, level); break;
            case resource_kind::folder: max_folder_ = greater_access(max_folder_, level); break;
            case resource_kind::service: max_service_ = greater_access(max_service_, level); break;
        }
    }

    access_map access_;
    api_family_set families_;
    access_level all_level_ = access_level::none;    // the grant on all folders and services
    access_level max_folder_ = access_level::none;   // the greatest folder grant
    access_level max_service_ = access_level::none;  // the greatest service grant

    static KEYHOOK_INLINE bool is_equal(const key_permissions& a, const key_permissions& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const key_permissions& x);
};

// K9: merges the grants of a key's groups under a tenant's policy: per resource
// the greatest level, and the union of the default families, each group's
// families and the families of each feature permission a group holds.
namespace detail {

// The merge's step for one group, compiled once.
KEYHOOK_INLINE void merge_group(key_permissions& merged, std::string_view group, const permission_policy& policy);

// Result is a parameter so that the merge's containers are compiled only where
// a merge is used, not where this header is read.
template <class GroupRange, class Result = key_permissions>
Result merge_groups(const GroupRange& groups, const permission_policy& policy) {
    Result merged({}, policy.default_families);
    for (const auto& name : groups) merge_group(merged, std::string_view(name), policy);
    return merged;
}

}  // namespace detail

template <class GroupRange>
[[nodiscard]] key_permissions merge_permissions(const GroupRange& groups, const permission_policy& policy) {
    return detail::merge_groups(groups, policy);
}

[[nodiscard]] KEYHOOK_INLINE key_permissions merge_permissions(std::initializer_list<std::string_view> groups,
                                                               const permission_policy& policy);

}  // namespace keyhook

template <>
struct std::hash<keyhook::api_family> {
    std::size_t operator()(const keyhook::api_family& f) const noexcept { return std::hash<std::string>{}(f.name()); }
};

template <>
struct std::hash<keyhook::resource> {
    std::size_t operator()(const keyhook::resource& r) const noexcept {
        const std::size_t a = std::hash<std::string>{}(r.folder_name());
        const std::size_t b = std::hash<std::string>{}(r.service_name());
        return (a * 31 + b) * 4 + static_cast<std::size_t>(r.kind());
    }
};

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/permissions.ipp"
#endif
