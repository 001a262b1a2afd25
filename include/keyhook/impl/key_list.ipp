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
    // J2: where nlohmann stops at a number no double holds, such numbers are
    // found and the text parsed again with each zeroed, so that one in a record
    // rejects that record (see overflowing_number); ordinary input pays nothing.
    std::vector<detail::overflowing_number> overflows;
    std::string zeroed;
    std::string_view text = json;
    bool stopped_at_overflow = false;
    const auto run = [&](std::optional<std::size_t> exact) {
        detail::key_list_sax sax(options, json.size(), exact);
        sax.expect_overflows(&overflows);
        // nlohmann's lexer takes a NUL byte for the end of input and would ignore
        // what follows; JSON text never holds a raw NUL, so refuse it here.
        if (const auto nul = json.find('\0'); nul != std::string_view::npos) {
            sax.refuse(detail::nul_byte_error(nul));
            return std::make_pair(sax.finish(), std::optional<std::size_t>());
        }
        try {
            detail::run_json_parser(text, sax);
        } catch (const nlohmann::json::exception& ex) {
            // sax_parse reports through parse_error; this is a second net only.
            sax.refuse(detail::json_syntax_error(0, ex.what()));
        }
        stopped_at_overflow = sax.stopped_at_overflow();
        const auto again = sax.needs_exact_capacity();
        return std::make_pair(again ? result<key_list_page>(error{}) : sax.finish(), again);
    };
    auto first = run(std::nullopt);
    if (stopped_at_overflow && overflows.empty()) {
        overflows = detail::find_overflowing_numbers(json);
        if (!overflows.empty()) {
            first = {result<key_list_page>(error{}), std::nullopt};
            zeroed = detail::with_overflows_zeroed(json, overflows);
            text = zeroed;
            first = run(std::nullopt);
        }
    }
    if (!first.second) return std::move(first.first);
    // The first pass's records are freed before the second pass allocates.
    const std::size_t exact = *first.second;
    first = {result<key_list_page>(error{}), std::nullopt};
    return run(exact).first;
}

KEYHOOK_INLINE key_list_page parse_key_list(std::string_view json, const key_list_options& options) {
    return try_parse_key_list(json, options).value();
}

}  // namespace keyhook
