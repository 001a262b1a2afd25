// keyhook internal: nlohmann's SAX parser, for keyhook's readers of JSON text
// (with detail/json_position.hpp for paths and J1). Needs nlohmann/json.hpp,
// so only implementation files (and readers with their own SAX handler)
// include it, never a public header in compiled mode.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/detail/json_position.hpp"
#include "keyhook/detail/json_token_fault.hpp"

namespace keyhook::detail {

// Runs nlohmann's JSON parser (text only, strict: nothing after the value)
// with `sax`, through its public sax_parse. The readers run it through
// run_json_parser_checked (below); the tests compare the two.
template <class Sax>
void run_json_parser(std::string_view text, Sax& sax) {
    (void)nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &sax, nlohmann::json::input_format_t::json,
                                    true);
}

// Hands every event to `inner`. nlohmann meeting the end of a text cut before
// a faulty token (position past `end`) is not an error of the text: it is
// noted, not handed on.
template <class Sax>
struct json_prefix_reader {
    Sax& inner;
    std::size_t end;
    bool reached_end = false;

    bool null() { return inner.null(); }
    bool boolean(bool v) { return inner.boolean(v); }
    template <class T>
    bool number_integer(T v) {
        return inner.number_integer(v);
    }
    template <class T>
    bool number_unsigned(T v) {
        return inner.number_unsigned(v);
    }
    template <class T, class S>
    bool number_float(T v, const S& text) {
        return inner.number_float(v, text);
    }
    template <class S>
    bool string(S& v) {
        return inner.string(v);
    }
    template <class B>
    bool binary(B& v) {
        return inner.binary(v);
    }
    bool start_object(std::size_t n) { return inner.start_object(n); }
    template <class S>
    bool key(S& v) {
        return inner.key(v);
    }
    bool end_object() { return inner.end_object(); }
    bool start_array(std::size_t n) { return inner.start_array(n); }
    bool end_array() { return inner.end_array(); }
    template <class E>
    bool parse_error(std::size_t position, const std::string& token, const E& ex) {
        if (position > end) {
            reached_end = true;
            return false;
        }
        return inner.parse_error(position, token, ex);
    }
};

// Reads a fault's short equivalent and hands nlohmann's error for it to the
// reader, at the fault's place in the text (and, for a number no double
// holds, with the number's own text).
template <class Sax>
struct json_fault_replay {
    Sax* inner;  // null for a dry run, which only sees whether nlohmann refuses the equivalent
    const json_token_fault& fault;
    bool handed = false;

    using json = nlohmann::json;
    bool null() { return true; }
    bool boolean(bool) { return true; }
    bool number_integer(json::number_integer_t) { return true; }
    bool number_unsigned(json::number_unsigned_t) { return true; }
    bool number_float(json::number_float_t, const json::string_t&) { return true; }
    bool string(json::string_t&) { return true; }
    bool binary(json::binary_t&) { return true; }
    bool start_object(std::size_t) { return true; }
    bool key(json::string_t&) { return true; }
    bool end_object() { return true; }
    bool start_array(std::size_t) { return true; }
    bool end_array() { return true; }
    bool parse_error(std::size_t position, const std::string& token, const json::exception& ex) {
        handed = true;
        if (inner == nullptr) return false;
        return fault.overflow.empty() ? inner->parse_error(position + fault.shift, token, ex)
                                      : inner->parse_error(position + fault.shift, std::string(fault.overflow), ex);
    }
    bool read() {
        (void)nlohmann::json::sax_parse(fault.equivalent.data(), fault.equivalent.data() + fault.equivalent.size(),
                                        this, nlohmann::json::input_format_t::json, true);
        return handed;
    }
};

// run_json_parser within J3 on every path: when the first token nlohmann
// would stop at is long (detail/json_token_fault.hpp), nlohmann reads only the
// text before it, and then, if it got that far, its error for the token is
// made from the token's short equivalent. The same events and the same error
// (position, reason) reach `sax` as from run_json_parser. The token scan runs
// only when a cheap look finds a stretch of text that may be inside one long
// token (may_hold_long_token), which text of ordinary tokens never has.
template <class Sax>
void run_json_parser_checked(std::string_view text, Sax& sax, std::size_t min_token_bytes = long_token_bytes) {
    std::optional<json_token_fault> fault;
    if (text.size() >= min_token_bytes && may_hold_long_token(text, min_token_bytes))
        fault = find_long_token_fault(text, min_token_bytes);
    // Should the scan and nlohmann ever disagree on a token (nlohmann accepts
    // its equivalent), nlohmann reads the whole text as run_json_parser does.
    if (fault && !json_fault_replay<Sax>{nullptr, *fault}.read()) fault.reset();
    json_prefix_reader<Sax> prefix{sax, fault ? fault->token_start : std::string_view::npos};
    const std::string_view read = fault ? text.substr(0, fault->token_start) : text;
    const bool done = nlohmann::json::sax_parse(read.data(), read.data() + read.size(), &prefix,
                                                nlohmann::json::input_format_t::json, true);
    if (fault && (done || prefix.reached_end)) (void)json_fault_replay<Sax>{&sax, *fault}.read();
}

}  // namespace keyhook::detail
