// keyhook: the list call's SAX decoder (impl/key_list_sax.ipp), its numbers:
// an envelope's figures go to the envelope, any other number is a value of
// the wrong type where it stands, and a number no double holds (J2, found by
// detail/number_overflow.hpp's pre-scan) rejects the record it is in or, out
// of records, refuses the page. Included by impl/key_list_sax.ipp only, after
// the class; `inline`, as definitions in the class body are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "keyhook/detail/json_kind.hpp"
#include "keyhook/detail/json_position.hpp"
#include "keyhook/escape.hpp"
#include "keyhook/error.hpp"
#include "keyhook/impl/key_list_sax.ipp"

namespace keyhook::detail {

template <class D>
inline bool key_list_sax<D>::number(std::int64_t v, numeric n, std::string_view text) {
    if (skip_ == 0 && (where_ == place::envelope || where_ == place::data)) {
        pos_.value_done();
        envelope_.number(member_, v, n, text);
        return true;
    }
    return scalar(json_kind::number);
}

// J2 for a number no double holds: in a record (or as an element of
// data.result) it rejects that record like any wrong value; elsewhere it
// refuses the page.
template <class D>
inline bool key_list_sax<D>::overflowed(std::string_view token) {
    const bool in_record = where_ == place::record || where_ == place::groups;
    const bool as_element = where_ == place::result && skip_ == 0;
    if (!in_record && !as_element) return refuse_overflow(token);
    auto e = number_overflow_error(path_here(), token);
    value_done();
    if (as_element) {
        index_ = next_index_++;
        blocks_.reject(std::move(e));
    } else {
        record_.overflowed(std::move(e), where_ == place::groups, skip_ > 0);
    }
    return true;
}

// The page's refusal of a number no double holds, with its path and the reason.
template <class D>
inline bool key_list_sax<D>::refuse_overflow(std::string_view token) {
    if (skip_ == 0 && where_ == place::data && envelope::integral(member_))
        return fail(error{errc::out_of_range, std::string(envelope::path(member_)),
                          "expected a non-negative 64-bit integer, got " + quote_input(token)});
    return fail(number_overflow_error(path_here(), token));
}

}  // namespace keyhook::detail
