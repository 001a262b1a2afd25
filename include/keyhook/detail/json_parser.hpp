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

// Runs nlohmann's JSON parser (text only, no binary formats) with `sax`.
template <class Sax>
void run_json_parser(std::string_view text, Sax& sax) {
    auto input = nlohmann::detail::input_adapter(text.data(), text.data() + text.size());
    (void)nlohmann::detail::parser<nlohmann::json, decltype(input)>(std::move(input)).sax_parse(&sax, true);
}

}  // namespace keyhook::detail
