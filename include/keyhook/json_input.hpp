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

#include <nlohmann/json_fwd.hpp>

#include "keyhook/config.hpp"
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
[[nodiscard]] KEYHOOK_INLINE result<nlohmann::json> try_parse_json(std::string_view text,
                                                                   const json_limits& limits = {});

[[nodiscard]] KEYHOOK_INLINE nlohmann::json parse_json(std::string_view text, const json_limits& limits = {});

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/json_input.ipp"
#endif
