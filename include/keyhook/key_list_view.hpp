// keyhook: the view of the keys (spec 4.1, rule L3): the default view (Active
// keys, earliest expireAt first) and filters by status, type, group and name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "keyhook/api_key.hpp"
#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// Which keys to select; an empty member selects all. `status` is the status
// derived at `now` (S1). `type` compares ASCII case-insensitively ("synthetic"
// matches "Synthetic"); `group` must equal one of the key's groups exactly;
// `name_contains` is an ASCII case-insensitive substring of the name.
struct key_filter {
    std::optional<key_status> status;
    std::optional<std::string> type;
    std::optional<std::string> group;
    std::optional<std::string> name_contains;

    [[nodiscard]] bool matches(const api_key& key, timestamp now) const;

    friend bool operator==(const key_filter& a, const key_filter& b) { return is_equal(a, b); }
    friend bool operator!=(const key_filter& a, const key_filter& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_filter& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const key_filter& a, const key_filter& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const key_filter& x);
};

namespace detail {

// One selected key: its sort key inline, so sorting touches the records only
// on a tie of expireAt.
template <class Ptr>
struct view_entry {
    std::int64_t expire;
    Ptr key;
};

// L3's order: earliest expireAt first, then name, then id; records equal in
// all three keep no particular order. Not a template, so that a compiled-mode
// translation unit does not parse <algorithm>'s sort.
KEYHOOK_INLINE void sort_view(std::vector<view_entry<const api_key*>>& v);

// Whether `last - first` counts a range's elements up front (a random-access
// iterator), so that the selection can reserve for all of them.
template <class It>
using iterator_distance = decltype(std::declval<const It&>() - std::declval<const It&>());
template <class It, class = void>
struct counts_ahead : std::false_type {};
template <class It>
struct counts_ahead<It, std::void_t<iterator_distance<It>>> : std::true_type {};

template <class Ptr, class It>
std::vector<view_entry<Ptr>> select_entries(It first, It last, const key_filter& filter, timestamp now) {
    std::vector<view_entry<Ptr>> v;
    if constexpr (counts_ahead<It>::value) v.reserve(static_cast<std::size_t>(last - first));
    for (; first != last; ++first) {
        auto& key = *first;
        if (filter.matches(key, now)) v.push_back({key.expire_at.time_since_epoch().count(), &key});
    }
    sort_view(v);
    return v;
}

// Copying a view reads records in expireAt order, which is random in memory:
// fetching a record a few steps ahead, and its strings a little later, hides
// most of the cache misses (about a third of the time on 100,000 records).
inline void prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

inline void prefetch_record(const api_key* k) noexcept {
    const auto* bytes = reinterpret_cast<const char*>(k);
    for (std::size_t offset = 0; offset < sizeof(api_key); offset += 64) prefetch(bytes + offset);
}

// The heap text of a member, if any (from the member table: a new member is covered).
template <class T>
void prefetch_value(const T&) noexcept {}  // timestamps, enumerations: no heap
inline void prefetch_value(const std::string& s) noexcept { prefetch(s.data()); }
inline void prefetch_value(const key_id& id) noexcept { prefetch(id.str().data()); }
inline void prefetch_value(const std::vector<std::string>& v) noexcept {
    if (!v.empty()) prefetch(v.data());
}
template <class T>
void prefetch_value(const std::optional<T>& v) noexcept {
    if (v) prefetch_value(*v);
}

// Every string member's heap text (from api_key's member table, so a new member is covered).
KEYHOOK_INLINE void prefetch_strings(const api_key& k) noexcept;

template <class Out, class Ptr, class Take>
void copy_view(const std::vector<view_entry<Ptr>>& entries, Out& out, Take take) {
    constexpr std::size_t record_ahead = 8, strings_ahead = 4;
    const std::size_t n = entries.size();
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (i + record_ahead < n) prefetch_record(entries[i + record_ahead].key);
        if (i + strings_ahead < n) prefetch_strings(*entries[i + strings_ahead].key);
        out.push_back(take(*entries[i].key));
    }
}

template <class Range>
using key_range_check =
    std::enable_if_t<std::is_convertible_v<decltype(*std::begin(std::declval<const Range&>())), const api_key&>, int>;

}  // namespace detail

// L3: the keys `filter` selects at `now`, earliest expireAt first, ties by name
// then id. The _refs forms return pointers into `records` (no copies: the
// fastest way to show a view); the others copy, or move from an rvalue vector.
template <class Range, detail::key_range_check<Range> = 0>
[[nodiscard]] std::vector<const api_key*> select_key_refs(const Range& records, const key_filter& filter,
                                                          timestamp now) {
    const auto entries = detail::select_entries<const api_key*>(std::begin(records), std::end(records), filter, now);
    std::vector<const api_key*> out;
    out.reserve(entries.size());
    for (const auto& e : entries) out.push_back(e.key);
    return out;
}
// Pointers into a temporary would dangle.
template <class Range, detail::key_range_check<Range> = 0>
void select_key_refs(const Range&& records, const key_filter& filter, timestamp now) = delete;

template <class Range, detail::key_range_check<Range> = 0>
[[nodiscard]] std::vector<api_key> select_keys(const Range& records, const key_filter& filter, timestamp now) {
    const auto entries = detail::select_entries<const api_key*>(std::begin(records), std::end(records), filter, now);
    std::vector<api_key> out;
    detail::copy_view(entries, out, [](const api_key& k) -> const api_key& { return k; });
    return out;
}

[[nodiscard]] KEYHOOK_INLINE std::vector<api_key> select_keys(std::vector<api_key>&& records, const key_filter& filter,
                                                              timestamp now);

// The filter of the default view: Active keys only.
[[nodiscard]] KEYHOOK_INLINE key_filter default_view_filter();

// L3: the default view, Active keys only (status derived at `now`), earliest
// expireAt first, ties by name then id.
template <class Range, detail::key_range_check<Range> = 0>
[[nodiscard]] std::vector<api_key> default_view(const Range& records, timestamp now) {
    return select_keys(records, default_view_filter(), now);
}

[[nodiscard]] KEYHOOK_INLINE std::vector<api_key> default_view(std::vector<api_key>&& records, timestamp now);

template <class Range, detail::key_range_check<Range> = 0>
[[nodiscard]] std::vector<const api_key*> default_view_refs(const Range& records, timestamp now) {
    return select_key_refs(records, default_view_filter(), now);
}
template <class Range, detail::key_range_check<Range> = 0>
void default_view_refs(const Range&& records, timestamp now) = delete;

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/key_list_view.ipp"
#endif
