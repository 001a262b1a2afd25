// The input of webhook_dispatch and webhook_deliver: one JSON document holding
// a tenant, its webhooks and one event (see examples/webhook_dispatch/main.cpp).
// Shared so both programs read exactly the same input the same way.
#pragma once

#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "keyhook/dispatch.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/timestamps.hpp"

namespace examples {

// The text of FILE, of standard input for "-", or `bundled` when no file is
// given; nullopt when the file cannot be read.
inline std::optional<std::string> read_input_text(const std::optional<std::string>& file, std::string_view bundled) {
    if (!file) return std::string(bundled);
    if (*file == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    std::ifstream in(*file, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return text.str();
}

// How error messages name the input.
inline std::string input_name(const std::optional<std::string>& file) {
    // P1: a file name is input too, printed escaped.
    return !file ? "<bundled sample>" : (*file == "-" ? "<stdin>" : keyhook::escape_text(*file));
}

// The dispatch input of `text`, the event stamped `now`. Errors: a syntax
// error with the byte offset, or the library's error with its JSON path.
inline keyhook::result<keyhook::dispatch_input> parse_dispatch_input(const std::string& text, keyhook::timestamp now,
                                                                     const keyhook::endpoint_policy& policy = {}) {
    // The strict reader (J1-J3): repeated names and numbers out of range are
    // refused with their path; the depth limit bounds the DOM readers' recursion.
    auto document = keyhook::try_parse_json(text);
    if (!document) {
        keyhook::error e = document.error();
        if (e.code == keyhook::errc::syntax_error) e.message = "expected one JSON object, " + e.message;
        return e;
    }
    return keyhook::try_dispatch_input_from_json(*document, now, policy);
}

}  // namespace examples
