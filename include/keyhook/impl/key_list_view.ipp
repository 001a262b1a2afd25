#pragma once
// keyhook: definitions of key_list_view.hpp.

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ostream>

#include "keyhook/detail/api_key_table.hpp"
#include "keyhook/detail/ascii.hpp"
#include "keyhook/key_list_view.hpp"
#include "keyhook/status.hpp"

namespace keyhook {

namespace detail {

KEYHOOK_INLINE void sort_view(std::vector<view_entry<const api_key*>>& v) {
    std::sort(v.begin(), v.end(), [](const view_entry<const api_key*>& a, const view_entry<const api_key*>& b) {
        if (a.expire != b.expire) return a.expire < b.expire;
        if (const int c = a.key->name.compare(b.key->name); c != 0) return c < 0;
        return a.key->id < b.key->id;
    });
}

}  // namespace detail

KEYHOOK_INLINE void detail::prefetch_strings(const api_key& k) noexcept {
    visit_members(k, [](const auto&, const auto& value) noexcept { prefetch_value(value); });
}

KEYHOOK_INLINE bool key_filter::is_equal(const key_filter& a, const key_filter& b) {
    return a.status == b.status && a.type == b.type && a.group == b.group && a.name_contains == b.name_contains;
}

KEYHOOK_INLINE std::ostream& key_filter::print_to(std::ostream& os, const key_filter& f) {
    os << "key_filter{";
    const char* sep = "";
    if (f.status) {
        os << "status=" << *f.status;
        sep = ", ";
    }
    if (f.type) {
        os << sep << "type=" << detail::quote_input(*f.type);
        sep = ", ";
    }
    if (f.group) {
        os << sep << "group=" << detail::quote_input(*f.group);
        sep = ", ";
    }
    if (f.name_contains) os << sep << "name_contains=" << detail::quote_input(*f.name_contains);
    return os << '}';
}

namespace detail {

// O(n + m) whatever the text (L3; the naive scan was quadratic,
// 1.1 s for a 64 KiB name and a 32 KiB needle): Knuth-Morris-Pratt over
// ASCII-folded bytes. std::boyer_moore_searcher was used before and is not
// linear: libstdc++ builds its good-suffix table in time quadratic in a
// periodic needle (0.4 s at -O2 for 32 KiB of 'a' and a 'b').
inline bool ascii_icontains(std::string_view haystack, std::string_view needle) {
    if (needle.empty()) return true;
    if (needle.size() > haystack.size()) return false;
    // border[i]: the length of the longest proper prefix of needle[0..i] that
    // is also its suffix, where a mismatch resumes.
    std::vector<std::size_t> border(needle.size(), 0);
    for (std::size_t i = 1, k = 0; i < needle.size(); ++i) {
        while (k > 0 && ascii_lower(needle[i]) != ascii_lower(needle[k])) k = border[k - 1];
        if (ascii_lower(needle[i]) == ascii_lower(needle[k])) ++k;
        border[i] = k;
    }
    for (std::size_t i = 0, k = 0; i < haystack.size(); ++i) {
        while (k > 0 && ascii_lower(haystack[i]) != ascii_lower(needle[k])) k = border[k - 1];
        if (ascii_lower(haystack[i]) == ascii_lower(needle[k]) && ++k == needle.size()) return true;
    }
    return false;
}

}  // namespace detail

KEYHOOK_INLINE bool key_filter::matches(const api_key& key, timestamp now) const {
    if (status && status_at(key, now) != *status) return false;
    if (type && !(key.type && detail::ascii_iequal(*key.type, *type))) return false;
    if (group && std::find(key.groups.begin(), key.groups.end(), *group) == key.groups.end()) return false;
    if (name_contains && !detail::ascii_icontains(key.name, *name_contains)) return false;
    return true;
}

KEYHOOK_INLINE std::vector<api_key> select_keys(std::vector<api_key>&& records, const key_filter& filter,
                                                timestamp now) {
    const auto entries = detail::select_entries<const api_key*>(records.cbegin(), records.cend(), filter, now);
    std::vector<api_key> out;
    // The records are this function's own: each selected one is moved out of its place.
    detail::copy_view(entries, out, [&records](const api_key& k) -> api_key&& {
        return std::move(records[static_cast<std::size_t>(&k - records.data())]);
    });
    return out;
}

KEYHOOK_INLINE key_filter default_view_filter() {
    key_filter f;
    f.status = key_status::active;
    return f;
}

KEYHOOK_INLINE std::vector<api_key> default_view(std::vector<api_key>&& records, timestamp now) {
    return select_keys(std::move(records), default_view_filter(), now);
}

}  // namespace keyhook
