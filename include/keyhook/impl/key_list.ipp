#pragma once
// keyhook: definitions of key_list.hpp.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <ostream>

#include "keyhook/key_list.hpp"
#include "keyhook/impl/key_list_sax.ipp"

namespace keyhook {

KEYHOOK_INLINE bool operator==(const key_list_page& a, const key_list_page& b) {
    return a.count == b.count && a.page == b.page && a.page_size == b.page_size && a.records == b.records &&
           a.rejected == b.rejected && a.rejected_count == b.rejected_count;
}

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const key_list_page& p) {
    os << "key_list_page{count=" << p.count << ", page=" << p.page << ", page_size=" << p.page_size
       << ", records=" << p.records.size() << ", rejected=" << p.rejected_count << '}';
    return os;
}

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const key_list_options& o) {
    return os << "key_list_options{mode=" << o.mode << ", max_depth=" << o.max_depth
              << ", max_string_bytes=" << o.max_string_bytes << '}';
}

KEYHOOK_INLINE std::optional<key_list_query> next_page_query(const key_list_query& current,
                                                             const key_list_page& received) {
    if (!received.has_next_page()) return std::nullopt;
    key_list_query next = current;
    next.page = received.page + 1;
    if (received.page_size > 0) next.size = received.page_size;
    return next;
}

KEYHOOK_INLINE result<key_list_page> try_parse_key_list(std::string_view json, const key_list_options& options) {
    // nlohmann's lexer takes a NUL byte for the end of input and would ignore
    // what follows; JSON text never holds a raw NUL, so refuse it here.
    if (const auto nul = json.find('\0'); nul != std::string_view::npos) return detail::nul_byte_error(nul);

    // J2: nlohmann stops at a number no double holds. Only then are such
    // numbers searched for, and the text read again with each zeroed, so that
    // one inside a record rejects that record (see overflowing_number).
    std::vector<detail::overflowing_number> overflows;
    std::string zeroed;
    std::string_view text = json;
    // J3: set when the records did not fit the budget in blocks; the next
    // pass reserves exactly this many (see needs_exact_capacity).
    std::optional<std::size_t> exact;
    bool plan_from_page_size = true;
    for (;;) {
        detail::key_list_sax sax(options, json.size(), exact, plan_from_page_size);
        sax.expect_overflows(&overflows);
        try {
            detail::run_json_parser(text, sax);
        } catch (const nlohmann::json::exception& ex) {
            // sax_parse reports through parse_error; this is a second net only.
            sax.refuse(detail::json_syntax_error(0, ex.what()));
        }
        if (sax.stopped_at_overflow() && overflows.empty()) {
            overflows = detail::find_overflowing_numbers(json);
            if (!overflows.empty()) {
                zeroed = detail::with_overflows_zeroed(json, overflows);
                text = zeroed;
                continue;
            }
        }
        if (sax.refused_for_planned_room() && plan_from_page_size) {
            plan_from_page_size = false;
            continue;  // the room reserved on pageSize's word must not refuse the page
        }
        if (const auto n = sax.needs_exact_capacity(); n && !exact) {
            exact = n;
            continue;  // this pass's records are freed before the next allocates
        }
        return sax.finish();
    }
}

KEYHOOK_INLINE key_list_page parse_key_list(std::string_view json, const key_list_options& options) {
    return try_parse_key_list(json, options).value();
}

}  // namespace keyhook
