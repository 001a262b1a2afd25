// keyhook internal: nlohmann's SAX parser, for keyhook's readers of JSON text
// (with detail/json_position.hpp for paths and J1). Needs nlohmann/json.hpp,
// so only implementation files (and readers with their own SAX handler)
// include it, never a public header in compiled mode.
#pragma once

#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/detail/json_position.hpp"

namespace keyhook::detail {

// Runs nlohmann's JSON parser (text only, strict: nothing after the value)
// with `sax`, through its public sax_parse.
template <class Sax>
void run_json_parser(std::string_view text, Sax& sax) {
    (void)nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &sax, nlohmann::json::input_format_t::json,
                                    true);
}

}  // namespace keyhook::detail
