// A SAX handler for nlohmann's parser that writes down every event and the
// error, by which two ways of running the parser over one text are compared
// (detail/json_token_fault.hpp: the J3 check against nlohmann reading the
// whole text). Shared by the core tests and the fuzz target json_token_fault.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "keyhook/detail/json_parser.hpp"

namespace keyhook_test {

struct recording_sax {
    using json = nlohmann::json;
    std::string log;

    bool note(const std::string& s) {
        log += s;
        log += '|';
        return true;
    }
    bool null() { return note("null"); }
    bool boolean(bool v) { return note(v ? "true" : "false"); }
    bool number_integer(json::number_integer_t v) { return note("i" + std::to_string(v)); }
    bool number_unsigned(json::number_unsigned_t v) { return note("u" + std::to_string(v)); }
    bool number_float(json::number_float_t, const json::string_t& text) { return note("f" + text); }
    bool string(json::string_t& v) { return note("s" + v); }
    bool binary(json::binary_t&) { return note("binary"); }
    bool start_object(std::size_t) { return note("{"); }
    bool key(json::string_t& v) { return note("k" + v); }
    bool end_object() { return note("}"); }
    bool start_array(std::size_t) { return note("["); }
    bool end_array() { return note("]"); }
    // The offset and the reason, as keyhook's readers keep them; a number no
    // double holds with its text (J2).
    bool parse_error(std::size_t position, const std::string& token, const json::exception& ex) {
        note("error " + std::to_string(ex.id) + " at " + std::to_string(position) + ": " +
             std::string(keyhook::detail::json_error_reason(ex.what())));
        if (ex.id == 406) note("token " + token);
        return false;
    }
};

// What nlohmann reports reading the whole text.
inline std::string read_whole(std::string_view text) {
    recording_sax sax;
    keyhook::detail::run_json_parser(text, sax);
    return sax.log;
}

// What the same reader sees through the J3 check, with tokens of `threshold`
// bytes or more counted as long.
inline std::string read_checked(std::string_view text, std::size_t threshold) {
    recording_sax sax;
    keyhook::detail::run_json_parser_checked(text, sax, threshold);
    return sax.log;
}

}  // namespace keyhook_test
