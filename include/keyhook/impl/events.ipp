// keyhook: definitions of events.hpp (see config.hpp for when they are compiled).
#pragma once

#include <array>
#include <string>
#include <utility>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/events.hpp"

namespace keyhook {
namespace detail {

// Levenshtein distance between a (at most suggestion_input_limit bytes) and b
// (a known name), optionally ignoring ASCII case. One row on the stack.
KEYHOOK_INLINE std::size_t edit_distance(std::string_view a, std::string_view b, bool fold) noexcept {
    std::array<std::size_t, suggestion_input_limit + 1> row{};
    for (std::size_t i = 0; i <= a.size(); ++i) row[i] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t diagonal = row[0];
        row[0] = j;
        const char cb = fold ? ascii_lower(b[j - 1]) : b[j - 1];
        for (std::size_t i = 1; i <= a.size(); ++i) {
            const char ca = fold ? ascii_lower(a[i - 1]) : a[i - 1];
            const std::size_t substitute = diagonal + (ca == cb ? 0 : 1);
            const std::size_t insert_or_delete = (row[i] < row[i - 1] ? row[i] : row[i - 1]) + 1;
            diagonal = row[i];
            row[i] = substitute < insert_or_delete ? substitute : insert_or_delete;
        }
    }
    return row[a.size()];
}

}  // namespace detail

KEYHOOK_INLINE event_type closest_event_type(std::string_view name) noexcept {
    if (name.size() > detail::suggestion_input_limit) name = name.substr(0, detail::suggestion_input_limit);
    std::size_t best = 0;
    std::size_t best_folded = static_cast<std::size_t>(-1);
    std::size_t best_exact = static_cast<std::size_t>(-1);
    for (std::size_t i = 0; i < event_type_count; ++i) {
        const auto candidate = detail::event_names[i];
        const std::size_t folded = detail::edit_distance(name, candidate, true);
        if (folded > best_folded) continue;
        const std::size_t exact = detail::edit_distance(name, candidate, false);
        if (folded < best_folded || exact < best_exact) {
            best = i;
            best_folded = folded;
            best_exact = exact;
        }
    }
    return static_cast<event_type>(best);
}

KEYHOOK_INLINE result<event_type> try_parse_event_type(std::string_view name) {
    if (const auto e = find_event_type(name)) return *e;
    std::string message = "unknown event type ";
    message += detail::quote_input(name);
    message += "; did you mean \"";
    message += to_string(closest_event_type(name));
    message += "\"?";
    return error{errc::unknown_event, {}, std::move(message)};
}

KEYHOOK_INLINE event_type parse_event_type(std::string_view name) { return try_parse_event_type(name).value(); }

KEYHOOK_INLINE std::optional<error> detail::event_value_error(event_type e, std::string path) {
    const auto value = static_cast<std::size_t>(e);
    if (value < event_type_count) return std::nullopt;
    return error{errc::unknown_event, std::move(path),
                 "event type value " + std::to_string(value) + " is not one of the 53 types of spec 6.1"};
}

}  // namespace keyhook
