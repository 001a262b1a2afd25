// keyhook: the strict JSON reader every keyhook parser of JSON text uses
// (rules J1 to J3). try_parse_json builds an nlohmann::json DOM from one SAX
// pass that refuses what nlohmann alone accepts or misreports: a member name
// repeated in one object (J1), a number a double cannot hold (J2, reported
// with its JSON path), a raw NUL byte, nesting deeper than a limit (checked
// before each container is opened, so nothing recursive ever sees deep input)
// and a document whose DOM would take more memory than J3 allows. The SAX
// machinery is in detail/json_parser.hpp, for implementation files only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json_fwd.hpp>

#include "keyhook/config.hpp"
#include "keyhook/detail/json_for.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

// Bounds on what try_parse_json reads. A larger, deeper or (as a DOM) bigger
// document is refused with errc::limit_exceeded before or while it is parsed.
struct json_limits {
    std::size_t max_bytes = std::size_t{64} << 20;  // 64 MiB of text
    std::size_t max_depth = 64;                     // the root container is depth 1
    // J3: the DOM's heap bytes may reach memory_factor x the text's bytes plus
    // memory_allowance; a document that needs more is refused while it is read.
    std::size_t memory_factor = 4;
    std::size_t memory_allowance = std::size_t{1} << 20;
};

// Reads one JSON document strictly. Errors, each with the JSON path where one
// applies: errc::limit_exceeded (more than max_bytes, nesting deeper than
// max_depth, a DOM larger than J3 allows), errc::syntax_error (malformed text
// or a raw NUL byte, with the 0-based byte offset; nothing of the input is
// quoted), errc::invalid_utf8, errc::duplicate_member (J1: the path of the
// member named a second time, e.g. "webhooks[2].name"), errc::out_of_range
// (J2: a number a double cannot hold, e.g. "x[0]: number \"-1e400\" ...").
//
// A deferred definition (config.hpp): header-only, the parser is compiled
// only in the translation units that call it.
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE result<typename detail::json_for<D>::type> try_parse_json(std::string_view text,
                                                                                       const json_limits& limits = {});

template <class D = void>
[[nodiscard]] KEYHOOK_INLINE typename detail::json_for<D>::type parse_json(std::string_view text,
                                                                           const json_limits& limits = {});

namespace detail {
using json_element_call = result<std::size_t> (*)(void* each, nlohmann::json& element, std::size_t index);
// The callable's address through a template (dependent).
template <class F>
void* callable_address(F& f) noexcept {
    return const_cast<void*>(static_cast<const void*>(&f));
}
template <class D = void>
[[nodiscard]] KEYHOOK_INLINE result<typename json_for<D>::type> parse_json_each(std::string_view text,
                                                                                std::string_view array_member,
                                                                                void* each, json_element_call call,
                                                                                const json_limits& limits);
}  // namespace detail

// Reads one JSON document as try_parse_json does, except for one array: the
// member `array_member` of the top-level object. Each of its elements is
// handed to each(element, index) (element a nlohmann::json&, which `each` may
// move from) as soon as it is read, and then dropped; the DOM returned holds
// that member as an empty array. `each` returns the bytes it keeps for the
// element (0 when it keeps nothing), or an error, which ends the reading and
// is returned as it is. J3 then bounds what is held at each moment: the DOM
// read so far, the element being read, and what `each` said it keeps, against
// memory_factor x the text's bytes plus memory_allowance. J1, J2, the depth
// limit and the errors' paths are try_parse_json's ("events[3696].event.x").
// A document whose top level is not an object, or has no such array (absent,
// or another type), is read as try_parse_json reads it; `each` is not called.
template <class Each>
[[nodiscard]] result<typename detail::json_for<Each>::type> try_parse_json_each(std::string_view text,
                                                                                std::string_view array_member,
                                                                                Each&& each,
                                                                                const json_limits& limits = {}) {
    using function = std::remove_reference_t<Each>;
    const detail::json_element_call call = [](void* f, nlohmann::json& element,
                                              std::size_t index) -> result<std::size_t> {
        return (*static_cast<function*>(f))(element, index);
    };
    return detail::parse_json_each(text, array_member, detail::callable_address(each), call, limits);
}

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/json_input.ipp"
#endif
