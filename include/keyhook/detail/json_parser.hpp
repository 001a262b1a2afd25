// keyhook internal: nlohmann's SAX parser, for keyhook's readers of JSON text
// (with detail/json_position.hpp for paths and J1). Needs nlohmann/json.hpp,
// so only implementation files (and readers with their own SAX handler)
// include it, never a public header in compiled mode.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// nlohmann's input with the long strings left out: the text, except that it
// jumps over what is between the quotes of each long string, so that nlohmann
// reads "" in its place and never copies it. `next` counts the strings jumped
// over, `skipped` their bytes (nlohmann's offset + skipped = the text's).
struct json_skips {
    const char* base;
    const std::vector<json_long_string>* strings;
    std::size_t next = 0;
    std::size_t skipped = 0;
};

class json_skipping_iterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    json_skipping_iterator(const char* at, json_skips* skips) noexcept : at_(at), skips_(skips) {}

    const char& operator*() const noexcept { return *at_; }
    json_skipping_iterator& operator++() noexcept {
        ++at_;
        if (skips_->next < skips_->strings->size()) {
            const json_long_string& s = (*skips_->strings)[skips_->next];
            if (at_ == skips_->base + s.begin) {
                at_ = skips_->base + s.end;
                skips_->skipped += s.end - s.begin;
                ++skips_->next;
            }
        }
        return *this;
    }
    json_skipping_iterator operator++(int) noexcept {
        json_skipping_iterator before = *this;
        ++*this;
        return before;
    }
    friend bool operator==(const json_skipping_iterator& a, const json_skipping_iterator& b) noexcept {
        return a.at_ == b.at_;
    }
    friend bool operator!=(const json_skipping_iterator& a, const json_skipping_iterator& b) noexcept {
        return a.at_ != b.at_;
    }

private:
    const char* at_;
    json_skips* skips_;
};

// Hands every event to `inner`, with the value of each long string nlohmann
// read as "" (decoded from the text) and each error at its offset in the
// text. nlohmann meeting the end of a text cut before a faulty token
// (position past `end`) is not an error of the text: it is noted, not handed on.
// `Skipping`: nlohmann reads through json_skipping_iterator; without it the
// strings go straight through (the common case pays no check per string).
template <class Sax, bool Skipping>
struct json_checked_reader {
    Sax& inner;
    std::string_view text;
    std::size_t end;
    json_skips* skips = nullptr;
    std::size_t strings_handed = 0;
    bool reached_end = false;

    // Whether the string just read stands for a long string left out.
    bool stands_for_long_string() const noexcept {
        if constexpr (Skipping) {
            return strings_handed < skips->next;
        } else {
            return false;
        }
    }
    std::string long_string() {
        const json_long_string& s = (*skips->strings)[strings_handed++];
        return decode_json_string(text.substr(s.begin, s.end - s.begin));
    }

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
    bool number_float(T v, const S& token) {
        return inner.number_float(v, token);
    }
    template <class S>
    bool string(S& v) {
        if (!stands_for_long_string()) return inner.string(v);
        S value = long_string();
        return inner.string(value);
    }
    template <class B>
    bool binary(B& v) {
        return inner.binary(v);
    }
    bool start_object(std::size_t n) { return inner.start_object(n); }
    template <class S>
    bool key(S& v) {
        if (!stands_for_long_string()) return inner.key(v);
        S value = long_string();
        return inner.key(value);
    }
    bool end_object() { return inner.end_object(); }
    bool start_array(std::size_t n) { return inner.start_array(n); }
    bool end_array() { return inner.end_array(); }
    template <class E>
    bool parse_error(std::size_t position, const std::string& token, const E& ex) {
        if constexpr (Skipping) position += skips->skipped;
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

// run_json_parser within J3 on every path (detail/json_token_fault.hpp).
// nlohmann keeps two copies of the token it reads, each up to twice its size
// as it grows, and builds an error text from it. So nlohmann never reads a
// long token: it reads "" in place of each long string it would take (the
// reader gets the string decoded from the text), and when the first token it
// would stop at is long, it reads only the text before it, and its error for
// the token is made from the token's short equivalent. The same events and
// the same error (offset, reason) reach `sax` as from run_json_parser. The
// scan runs only when a cheap look finds a stretch of text that may be inside
// one long token (may_hold_long_token), which text of ordinary tokens never has.
template <class Sax>
void run_json_parser_checked(std::string_view text, Sax& sax, std::size_t min_token_bytes = long_token_bytes) {
    json_long_tokens found;
    if (text.size() >= min_token_bytes && may_hold_long_token(text, min_token_bytes))
        found = find_long_tokens(text, min_token_bytes);
    auto& fault = found.fault;
    // Should the scan and nlohmann ever disagree on a token (nlohmann accepts
    // its equivalent), nlohmann reads on past it as run_json_parser does.
    if (fault && !json_fault_replay<Sax>{nullptr, *fault}.read()) fault.reset();
    const std::size_t read_end = fault ? fault->token_start : text.size();
    const std::size_t cut = fault ? fault->token_start : std::string_view::npos;
    bool done = false, reached_end = false;
    if (found.strings.empty()) {
        json_checked_reader<Sax, false> reader{sax, text, cut};
        done = nlohmann::json::sax_parse(text.data(), text.data() + read_end, &reader,
                                         nlohmann::json::input_format_t::json, true);
        reached_end = reader.reached_end;
    } else {
        json_skips skips{text.data(), &found.strings};
        json_checked_reader<Sax, true> reader{sax, text, cut, &skips};
        done = nlohmann::json::sax_parse(json_skipping_iterator(text.data(), &skips),
                                         json_skipping_iterator(text.data() + read_end, &skips), &reader,
                                         nlohmann::json::input_format_t::json, true);
        reached_end = reader.reached_end;
    }
    if (fault && (done || reached_end)) (void)json_fault_replay<Sax>{&sax, *fault}.read();
}

}  // namespace keyhook::detail
