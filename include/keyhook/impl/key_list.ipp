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

#include "keyhook/detail/json_for.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/impl/key_list_sax.ipp"

namespace keyhook {

KEYHOOK_INLINE bool key_list_page::is_equal(const key_list_page& a, const key_list_page& b) {
    return a.count == b.count && a.page == b.page && a.page_size == b.page_size && a.records == b.records &&
           a.rejected == b.rejected && a.rejected_count == b.rejected_count;
}

KEYHOOK_INLINE std::ostream& key_list_page::print_to(std::ostream& os, const key_list_page& p) {
    os << "key_list_page{count=" << p.count << ", page=" << p.page << ", page_size=" << p.page_size
       << ", records=" << p.records.size() << ", rejected=" << p.rejected_count << '}';
    return os;
}

KEYHOOK_INLINE std::ostream& key_list_options::print_to(std::ostream& os, const key_list_options& o) {
    return os << "key_list_options{mode=" << o.mode << ", max_depth=" << o.max_depth
              << ", max_string_bytes=" << o.max_string_bytes << '}';
}

template <class D>
KEYHOOK_INLINE std::optional<detail::deferred_t<key_list_query, D>> next_page_query(
    const detail::deferred_t<key_list_query, D>& current, const key_list_page& received) {
    if (!received.has_next_page()) return std::nullopt;
    auto next = current;
    next.page = received.page + 1;
    if (received.page_size > 0) next.size = received.page_size;
    return next;
}

template <class D>
KEYHOOK_INLINE result<key_list_page> try_parse_key_list(std::string_view json, const key_list_options& options) {
    using json_type = typename detail::json_for<D>::type;
    // nlohmann's lexer takes a NUL byte for the end of input and would ignore
    // what follows; JSON text never holds a raw NUL, so refuse it here (one
    // memchr over the text, not a parse).
    if (const auto nul = json.find('\0'); nul != std::string_view::npos) return detail::nul_byte_error(nul);

    std::vector<detail::overflowing_number> overflows;
    std::string zeroed;
    std::string_view text = json;
    detail::key_list_plan plan;
    plan.overflows = &overflows;
    // One pass reads nearly every page. Each `continue` below reads the text
    // again, for a reason that arises at most once (so four passes at most),
    // and the pass's records are freed before the next one allocates.
    for (;;) {
        detail::key_list_sax<D> sax(options, json.size(), plan);
        try {
            detail::run_json_parser_checked(text, sax);
        } catch (const typename json_type::exception& ex) {
            // sax_parse reports through parse_error; this is a second net only.
            sax.refuse(detail::json_syntax_error(0, ex.what()));
        }
        // J2: nlohmann stops at a number no double holds. Only then are such
        // numbers searched for, and a copy with each zeroed is read, so that
        // one inside a record rejects only that record (detail/number_overflow.hpp).
        // J3: the copy counts against the records' budget.
        if (sax.stopped_at_overflow() && overflows.empty()) {
            overflows = detail::find_overflowing_numbers<D>(json);
            if (!overflows.empty()) {
                zeroed = detail::with_overflows_zeroed<D>(json, overflows);
                text = zeroed;
                plan.held_bytes = zeroed.capacity();
                continue;
            }
        }
        // J3: the budget refused the page while a first block sized from
        // pageSize had room to spare; room reserved on pageSize's word must
        // not refuse a page, so it is read again with small blocks.
        if (sax.refused_for_planned_room() && plan.plan_from_page_size) {
            plan.plan_from_page_size = false;
            continue;
        }
        // J3: the records did not all fit within the budget in blocks (records
        // of nearly the smallest size): they were counted, and a pass that
        // reserves exactly their number keeps them.
        if (const auto n = sax.needs_exact_capacity(); n && !plan.exact_capacity) {
            plan.exact_capacity = n;
            continue;
        }
        return sax.finish();
    }
}

template <class D>
KEYHOOK_INLINE key_list_page parse_key_list(std::string_view json, const key_list_options& options) {
    return try_parse_key_list<D>(json, options).value();
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the one instantiation of each deferred definition (config.hpp).
#include "keyhook/key_list_request.hpp"
namespace keyhook {
template std::optional<key_list_query> next_page_query<void>(const key_list_query&, const key_list_page&);
template result<key_list_page> try_parse_key_list<void>(std::string_view, const key_list_options&);
template key_list_page parse_key_list<void>(std::string_view, const key_list_options&);
}  // namespace keyhook
#endif
