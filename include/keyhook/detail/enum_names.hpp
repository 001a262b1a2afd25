// keyhook internal: the one spelling table per enum, and one operator<< for
// every keyhook enum. An enum names its values by specializing enum_names
// with `values`, an array in enumerator order starting at enumerator `first`
// (0 unless specialized); to_string and printing read that table, so no enum
// carries a switch of its own. Needs only <iosfwd>: the operator's body is
// resolved where it is used, where the caller has <ostream>.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string_view>
#include <type_traits>

namespace keyhook::detail {

template <class E>
struct enum_names;  // specialized next to each enum: static constexpr std::string_view values[] (or a
                    // std::array); optional first

template <class E, class = void>
struct is_named_enum : std::false_type {};
template <class E>
struct is_named_enum<E, std::void_t<decltype(enum_names<E>::values)>> : std::is_enum<E> {};

template <class E, class = void>
struct enum_first : std::integral_constant<long long, 0> {};
template <class E>
struct enum_first<E, std::void_t<decltype(enum_names<E>::first)>>
    : std::integral_constant<long long, static_cast<long long>(enum_names<E>::first)> {};

// The spelling of e, or "unknown" for a value outside the enumerators (a cast
// from an integer).
template <class E>
[[nodiscard]] constexpr std::string_view enum_name(E e) noexcept {
    const auto i = static_cast<long long>(e) - enum_first<E>::value;
    constexpr auto n = static_cast<long long>(std::size(enum_names<E>::values));  // a C array or std::array
    return i >= 0 && i < n ? enum_names<E>::values[static_cast<std::size_t>(i)] : std::string_view("unknown");
}

}  // namespace keyhook::detail

namespace keyhook {

// The spelling of a keyhook enum's value, from its table (each table says what
// its spellings follow: spec 6.1's event names, S3's statuses, ...). One
// template for every keyhook enum, found by argument-dependent lookup.
template <class E, std::enable_if_t<detail::is_named_enum<E>::value, int> = 0>
[[nodiscard]] constexpr std::string_view to_string(E e) noexcept {
    return detail::enum_name(e);
}

// Prints the enum's spelling (to_string). One template for every keyhook enum,
// found by argument-dependent lookup (namespaces nested in keyhook bring it in
// with a using-declaration).
template <class E, std::enable_if_t<detail::is_named_enum<E>::value, int> = 0>
std::ostream& operator<<(std::ostream& os, E e) {
    return os << to_string(e);
}

}  // namespace keyhook
