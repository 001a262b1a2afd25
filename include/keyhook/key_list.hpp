// keyhook: the list call's response (spec 4.1, rule L2): one page of api_key
// records, decoded straight from the JSON text (no DOM), and the query for the
// next page. The request is in key_list_request.hpp, the view of the keys in
// key_list_view.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string_view>
#include <vector>

#include "keyhook/api_key.hpp"
#include "keyhook/config.hpp"
#include "keyhook/detail/deferred.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

namespace detail {
// J3: the fewest bytes a record that decodes can take in the input:
// {"id":"","name":"","status":"Active","activeFrom":"YYYY-MM-DDTHH:MM:SSZ","expireAt":"..."}
inline constexpr std::size_t key_list_min_record_bytes = 107;
}  // namespace detail

// At most this many errors of rejected records are kept (J3); the others are counted.
inline constexpr std::size_t key_list_max_rejected = 100;

// One page of the list call. `count` is the total number of matching keys
// across all pages. In lenient mode, `rejected_count` counts the records that
// could not be read and `rejected` holds the errors of the first 100 of them
// (key_list_max_rejected), with their paths (e.g. "data.result[3].expireAt").
struct key_list_page {
    std::int64_t count = 0;
    std::int64_t page = 0;
    std::int64_t page_size = 0;
    std::vector<api_key> records;
    std::vector<error> rejected;
    std::size_t rejected_count = 0;

    // Elements of data.result this response held: records read plus rejected.
    [[nodiscard]] std::size_t elements() const noexcept { return records.size() + rejected_count; }

    // ceil(count / page_size); 0 when either is not positive.
    [[nodiscard]] std::int64_t total_pages() const noexcept {
        if (count <= 0 || page_size <= 0) return 0;
        return count / page_size + (count % page_size != 0 ? 1 : 0);
    }
    [[nodiscard]] bool has_next_page() const noexcept { return page >= 0 && page < total_pages(); }

    friend bool operator==(const key_list_page& a, const key_list_page& b) { return is_equal(a, b); }
    friend bool operator!=(const key_list_page& a, const key_list_page& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_list_page& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const key_list_page& a, const key_list_page& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const key_list_page& x);
};

// What to do with a record that cannot be read: `lenient` (the default) keeps
// the valid records, counts the bad ones and keeps the first 100 in
// `rejected`; `strict` fails the whole parse at the first bad record.
enum class key_list_mode { lenient, strict };

template <>
struct detail::enum_names<key_list_mode> {
    static constexpr std::string_view values[] = {"lenient", "strict"};
};

struct key_list_options {
    key_list_mode mode = key_list_mode::lenient;
    // Containers nested deeper than this fail the parse (errc::limit_exceeded).
    std::size_t max_depth = 64;
    // A string kept in a record longer than this (bytes) makes the record bad.
    std::size_t max_string_bytes = 64 * 1024;

    friend bool operator==(const key_list_options& a, const key_list_options& b) {
        return a.mode == b.mode && a.max_depth == b.max_depth && a.max_string_bytes == b.max_string_bytes;
    }
    friend bool operator!=(const key_list_options& a, const key_list_options& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_list_options& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const key_list_options& x);
};

// L2: decodes a list-call response. The envelope's `status` must be "success"
// (any case), else errc::not_success with the status and any `errorCode` and
// `message` of the body. data.count, data.page, data.pageSize (non-negative
// integers) and data.result are required. Records follow try_api_key_from_json
// (same messages; paths such as "data.result[3].expireAt"); a bad record fails
// the parse in strict mode and is counted in lenient mode (the default), the
// first 100 kept in `rejected`. Malformed JSON gives errc::syntax_error with
// the byte offset; a member name repeated in any object errc::duplicate_member
// (J1) and a number no double holds errc::out_of_range (J2), both with the path.
// J3: memory at most 4 times the input plus a constant, time linear.
// Both are deferred definitions (config.hpp).
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE result<key_list_page> try_parse_key_list(std::string_view json,
                                                                      const key_list_options& options = {});
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE key_list_page parse_key_list(std::string_view json, const key_list_options& options = {});

struct key_list_query;  // key_list_request.hpp

// The query for the page after `received`, asked with `current`; none on the
// last page. It asks for the page size the service reported, so page numbers
// stay consistent when the service capped the size asked for. A deferred
// definition (config.hpp): this header needs key_list_query declared only, so
// a program that reads a response without asking for one does not compile
// the request's header; a caller, holding a query, has included it.
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE std::optional<detail::deferred_t<key_list_query, D>> next_page_query(
    const detail::deferred_t<key_list_query, D>& current, const key_list_page& received);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/key_list.ipp"
#endif
