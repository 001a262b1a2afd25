// keyhook internal: J2's pre-scan for numbers no double holds ("1e400").
// nlohmann's parser stops at such a number, which in lenient mode would lose
// the page's valid records (J2: it is a wrong value like any other). Only when
// the parser stopped at one does the list decoder search the text for them,
// parse a copy in which each is a zero of the same length, and recognize each
// by its place among the text's number tokens (overflow_cursor). Needs no
// JSON library.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace keyhook::detail {

// A number token no double holds, by its place among the input's number
// tokens in document order.
struct overflowing_number {
    std::size_t ordinal;
    std::string_view text;
};

// Does this well-formed-looking number token exceed a double's range? Only
// tokens with an exponent or over 300 bytes can; underflow ("1e-400") reads
// as zero, as nlohmann reads it. This and the two below are templates only so
// that they are compiled where the list decoder is (deferred definitions,
// config.hpp).
template <class D = void>
bool number_overflows(std::string_view token) {
    if (token.size() <= 300 && token.find_first_of("eE") == std::string_view::npos) return false;
    double value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc::result_out_of_range) return false;
    (void)end;
    // Out of range both ways: overflow when the first significant digit sits at a positive power of ten.
    const std::size_t e = token.find_first_of("eE");
    const std::string_view mantissa = token.substr(0, e);
    long long exponent = 0;
    if (e != std::string_view::npos) {
        std::size_t i = e + 1;
        bool negative = false;
        if (i < token.size() && (token[i] == '+' || token[i] == '-')) negative = token[i++] == '-';
        for (; i < token.size(); ++i) exponent = std::min(exponent * 10 + (token[i] - '0'), 1000000000LL);
        if (negative) exponent = -exponent;
    }
    // The power of ten of the first significant digit.
    const std::size_t dot = mantissa.find('.');
    const std::string_view whole = mantissa.substr(0, dot);
    long long power = 0;
    if (const std::size_t first = whole.find_first_not_of("-0"); first != std::string_view::npos) {
        power = exponent + static_cast<long long>(whole.size() - first) - 1;
    } else {
        const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
        power = exponent - static_cast<long long>(std::min(fraction.find_first_not_of('0'), fraction.size())) - 1;
    }
    return power > 0;
}

// The number tokens outside strings that overflow a double; none for almost every input.
template <class D = void>
std::vector<overflowing_number> find_overflowing_numbers(std::string_view json) {
    std::vector<overflowing_number> found;
    std::size_t ordinal = 0;
    for (std::size_t i = 0; i < json.size();) {
        const char c = json[i];
        if (c == '"') {
            for (++i; i < json.size() && json[i] != '"'; ++i)
                if (json[i] == '\\') ++i;
            ++i;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            const std::size_t start = i;
            while (i < json.size() && std::strchr("0123456789+-.eE", json[i]) != nullptr && json[i] != '\0') ++i;
            const std::string_view token = json.substr(start, i - start);
            if (number_overflows<D>(token)) found.push_back({ordinal, token});
            ++ordinal;
        } else {
            ++i;
        }
    }
    return found;
}

// The copy nlohmann parses: each overflowing number becomes a zero followed
// by spaces, of its length (offsets stay those of the text, and nlohmann reads
// a one-digit token however long the number was: J3).
template <class D = void>
std::string with_overflows_zeroed(std::string_view json, const std::vector<overflowing_number>& found) {
    std::string copy(json);
    for (const auto& n : found) {
        const auto at = static_cast<std::size_t>(n.text.data() - json.data());
        const std::size_t sign = n.text.front() == '-' ? 1 : 0;
        copy[at + sign] = '0';
        copy.replace(at + sign + 1, n.text.size() - sign - 1, n.text.size() - sign - 1, ' ');
    }
    return copy;
}

// Walks the number tokens of the zeroed copy in document order: next() is
// called once per number the parser reports, and gives the original token
// when that number was one of the zeroed ones. A template for the same reason.
template <class D = void>
class overflow_cursor {
public:
    explicit overflow_cursor(const std::vector<overflowing_number>* found) noexcept : found_(found) {}

    const overflowing_number* next() noexcept {
        const std::size_t ordinal = numbers_seen_++;
        if (found_ == nullptr || next_ >= found_->size()) return nullptr;
        const auto& o = (*found_)[next_];
        if (o.ordinal != ordinal) return nullptr;
        ++next_;
        return &o;
    }

private:
    const std::vector<overflowing_number>* found_;
    std::size_t numbers_seen_ = 0;
    std::size_t next_ = 0;
};

}  // namespace keyhook::detail
