// keyhook internal: J3 on nlohmann's error paths. nlohmann's lexer keeps a
// copy of the token it is reading beside the value it decodes, and when the
// token turns out malformed it builds its error text from that copy, escaped,
// twice, while both are alive: a bad token of t bytes takes about 8t bytes at
// once, where J3 allows 4 times the input. This scan finds the first token
// nlohmann would stop at (a malformed one, or a number no double holds) and,
// when that token is long, where it starts and a short text nlohmann refuses
// with the same reason, so that nlohmann reads only what precedes the token
// (run_json_parser_checked, detail/json_parser.hpp). Needs no JSON library.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/detail/utf8.hpp"

namespace keyhook::detail {

// A bad token shorter than this fails in nlohmann's own way: what its error
// path takes for it stays within J3's constant.
inline constexpr std::size_t long_token_bytes = std::size_t{1} << 16;

// The first token nlohmann would stop at, when it is long.
struct json_token_fault {
    std::size_t token_start = 0;  // offset of its first byte
    std::string equivalent;       // a short text nlohmann refuses with the same reason
    std::size_t shift = 0;        // nlohmann's position in `equivalent` + shift = its position in the text
    std::string_view overflow;    // the token, when it is a well-formed number no double holds (J2)
};

// The text between the quotes of a long, well-formed string nlohmann takes
// where it stands (a value or a member name): [begin, end) of the text.
struct json_long_string {
    std::size_t begin = 0;
    std::size_t end = 0;
};

// The scan's parts. Templates only so that they are compiled where a reader
// is (deferred definitions, config.hpp).
template <class D = void>
struct json_token_scan {
    std::string_view s;
    std::size_t min_bytes;
    std::vector<json_long_string>* long_strings;  // where the long strings nlohmann takes go

    static bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
    static bool is_hex(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

    // The code unit of the four hex digits at s[at], or -1 when they are not there.
    long hex4(std::size_t at) const noexcept {
        if (at + 4 > s.size()) return -1;
        long v = 0;
        for (std::size_t k = at; k < at + 4; ++k) {
            const char c = s[k];
            if (!is_hex(c)) return -1;
            v = v * 16 + (is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        return v;
    }

    // The end of the escape sequence at s[at] ('\\'), or npos when nlohmann
    // refuses it (an unknown escape, short hex, a surrogate out of its pair).
    std::size_t escape_end(std::size_t at) const noexcept {
        if (at + 1 >= s.size()) return std::string_view::npos;
        switch (s[at + 1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't': return at + 2;
            case 'u': break;
            default: return std::string_view::npos;
        }
        const long unit = hex4(at + 2);
        if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return std::string_view::npos;
        if (unit < 0xD800 || unit > 0xDBFF) return at + 6;
        if (at + 8 > s.size() || s[at + 6] != '\\' || s[at + 7] != 'u') return std::string_view::npos;
        const long low = hex4(at + 8);
        return low >= 0xDC00 && low <= 0xDFFF ? at + 12 : std::string_view::npos;
    }

    // Scans the string starting at s[i] ('"'). Sets `end` past its closing
    // quote, or `unit` to the start of the character, escape or byte nlohmann
    // refuses (s.size() when the text ends inside the string).
    void string_at(std::size_t i, std::size_t& end, std::size_t& unit) const noexcept {
        std::size_t j = i + 1;
        while (j < s.size()) {
            const auto c = static_cast<unsigned char>(s[j]);
            if (c == '"') {
                end = j + 1;
                return;
            }
            std::size_t next = j + 1;
            if (c < 0x20) {
                next = std::string_view::npos;
            } else if (c == '\\') {
                next = escape_end(j);
            } else if (c >= 0x80) {
                const std::size_t n = utf8_sequence_length(s, j);
                next = n == 0 ? std::string_view::npos : j + n;
            }
            if (next == std::string_view::npos) {
                unit = j;
                return;
            }
            j = next;
        }
        unit = s.size();
    }

    // Whether the well-formed number `token` is out of a double's range, as
    // nlohmann reads it (strtod, correctly rounded): its magnitude is at least
    // 2^1024 - 2^970, halfway between the largest double and 2^1024, where
    // rounding to even goes up. Exact for any length, without <charconv>.
    static bool out_of_double_range(std::string_view token) noexcept {
        static constexpr std::string_view least_overflow =
            "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797758720709633"
            "02864166928879109465555478519404026306574886715058206819089020007083836762738548458177115317644757302"
            "700698555713669596228429148198608349364752927190741684443655107043427115596995080930428801779041744977"
            "92";
        const std::size_t begin = token.front() == '-' ? 1 : 0;
        const std::size_t e = token.find_first_of("eE");
        const std::string_view mantissa = token.substr(begin, e == std::string_view::npos ? e : e - begin);
        long long exponent = 0;
        if (e != std::string_view::npos) {
            std::size_t i = e + 1;
            bool negative = false;
            if (token[i] == '+' || token[i] == '-') negative = token[i++] == '-';
            for (; i < token.size(); ++i) exponent = std::min(exponent * 10 + (token[i] - '0'), 1000000000LL);
            if (negative) exponent = -exponent;
        }
        const std::size_t dot = mantissa.find('.');
        const std::string_view whole = mantissa.substr(0, dot);
        const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
        // The significant digits and the power of ten of the first.
        long long power = 0;
        std::string_view first, rest;
        if (const std::size_t k = whole.find_first_not_of('0'); k != std::string_view::npos) {
            power = exponent + static_cast<long long>(whole.size() - k) - 1;
            first = whole.substr(k);
            rest = fraction;
        } else if (const std::size_t f = fraction.find_first_not_of('0'); f != std::string_view::npos) {
            power = exponent - static_cast<long long>(f) - 1;
            first = fraction.substr(f);
        } else {
            return false;  // zero
        }
        if (power != static_cast<long long>(least_overflow.size()) - 1)
            return power > static_cast<long long>(least_overflow.size()) - 1;
        std::size_t j = 0;
        for (const std::string_view part : {first, rest}) {
            for (const char d : part) {
                if (j == least_overflow.size()) return true;  // equal so far, and at least as long
                if (d != least_overflow[j]) return d > least_overflow[j];
                ++j;
            }
        }
        return j == least_overflow.size();  // a strict prefix is smaller
    }

    // The token's text with every run of digits cut to two: nlohmann's number
    // lexer loops on a digit, so it meets the same states and refuses the
    // same byte for the same reason.
    static std::string without_long_digit_runs(std::string_view token) {
        std::string out;
        std::size_t run = 0;
        for (const char c : token) {
            run = is_digit(c) ? run + 1 : 0;
            if (run <= 2) out += c;
        }
        return out;
    }

    std::optional<json_token_fault> string_fault(std::size_t start, std::size_t unit) const {
        json_token_fault f;
        f.token_start = start;
        f.equivalent = '"';
        f.equivalent.append(s.substr(unit, 16));
        f.shift = unit - 1;
        return f;
    }

    // Scans the number starting at s[i]; true with `end` set when nlohmann reads
    // it whole, false with `bad` at the byte it refuses (s.size() at the end).
    bool number_at(std::size_t i, std::size_t& end, std::size_t& bad) const noexcept {
        std::size_t j = i;
        const auto digits = [&] {
            while (j < s.size() && is_digit(s[j])) ++j;
        };
        const auto refuse = [&] {
            bad = j;
            return false;
        };
        if (s[j] == '-') ++j;
        if (j >= s.size() || !is_digit(s[j])) return refuse();
        if (s[j++] != '0') digits();
        if (j < s.size() && s[j] == '.') {
            ++j;
            if (j >= s.size() || !is_digit(s[j])) return refuse();
            digits();
        }
        if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
            ++j;
            if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
            if (j >= s.size() || !is_digit(s[j])) return refuse();
            digits();
        }
        end = j;
        return true;
    }

    // What nlohmann's parser takes next.
    enum class expect {
        value,           // a value (at the start, after '[', ':', or ',' in an array)
        key_or_close,    // a member name or '}' (after '{')
        key,             // a member name (after ',' in an object)
        colon,           // ':' (after a member name)
        comma_or_close,  // ',' or the closing bracket (after a value in a container)
        end,             // nothing more (after the top value)
    };

    // A short text that leaves nlohmann's parser where `e` says (in an array
    // or an object as `in_array` says), for a token it refuses there.
    static std::string_view context_of(expect e, bool in_array) noexcept {
        switch (e) {
            case expect::key_or_close: return "{";
            case expect::key: return "{\"\":0,";
            case expect::colon: return "{\"\" ";
            case expect::comma_or_close: return in_array ? "[0 " : "{\"\":0 ";
            default: return "0 ";
        }
    }

    // A long string or number that nlohmann reads whole and then refuses
    // where it stands (a syntax error, whose text nlohmann builds from the
    // token too): the same refusal of a short token of its kind. A number
    // keeps its shape (its digit runs cut), so that the byte after it ends it
    // there too ("0.5" then '.').
    json_token_fault misplaced(std::size_t start, std::size_t end, expect e, bool in_array) const {
        json_token_fault f;
        f.token_start = start;
        f.equivalent = context_of(e, in_array);
        f.equivalent += s[start] == '"' ? std::string("\"\"") : without_long_digit_runs(s.substr(start, end - start));
        f.shift = end - f.equivalent.size();
        f.equivalent.append(s.substr(end, 1));
        return f;
    }

    std::optional<json_token_fault> run() const {
        std::size_t i = 0;
        // nlohmann skips a byte order mark at the start, and refuses a partial one.
        if (!s.empty() && static_cast<unsigned char>(s[0]) == 0xEF) {
            if (s.substr(0, 3) != "\xEF\xBB\xBF") return std::nullopt;
            i = 3;
        }
        // nlohmann's parser, token by token: the open containers and what may
        // come next. The scan ends where nlohmann would stop.
        std::vector<bool> in_array;
        expect next = expect::value;
        bool just_opened_array = false;
        const auto after_value = [&] { next = in_array.empty() ? expect::end : expect::comma_or_close; };
        while (i < s.size()) {
            const char c = s[i];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                ++i;
                continue;
            }
            const bool opened = just_opened_array;
            just_opened_array = false;
            const bool array = !in_array.empty() && in_array.back();
            switch (c) {
                case '[':
                case '{':
                    if (next != expect::value) return std::nullopt;
                    in_array.push_back(c == '[');
                    next = c == '[' ? expect::value : expect::key_or_close;
                    just_opened_array = c == '[';
                    ++i;
                    continue;
                case ']':
                case '}': {
                    const bool closes =
                        c == ']' ? (array && (next == expect::comma_or_close || (next == expect::value && opened)))
                                 : (!in_array.empty() && !array &&
                                    (next == expect::comma_or_close || next == expect::key_or_close));
                    if (!closes) return std::nullopt;
                    in_array.pop_back();
                    after_value();
                    ++i;
                    continue;
                }
                case ',':
                    if (next != expect::comma_or_close) return std::nullopt;
                    next = array ? expect::value : expect::key;
                    ++i;
                    continue;
                case ':':
                    if (next != expect::colon) return std::nullopt;
                    next = expect::value;
                    ++i;
                    continue;
                case 't':
                case 'n':
                case 'f': {
                    const std::string_view word = c == 't' ? "true" : c == 'n' ? "null" : "false";
                    if (s.substr(i, word.size()) != word || next != expect::value) return std::nullopt;
                    i += word.size();
                    after_value();
                    continue;
                }
                case '"': {
                    std::size_t end = 0, unit = 0;
                    string_at(i, end, unit);
                    if (end == 0) return unit - i >= min_bytes ? string_fault(i, unit) : std::nullopt;
                    if (next == expect::key_or_close || next == expect::key) {
                        next = expect::colon;
                    } else if (next == expect::value) {
                        after_value();
                    } else {
                        if (end - i < min_bytes) return std::nullopt;
                        return misplaced(i, end, next, array);
                    }
                    if (end - i >= min_bytes) long_strings->push_back({i + 1, end - 1});
                    i = end;
                    continue;
                }
                default: break;
            }
            // Anything else but a number is a short bad token nlohmann stops at.
            if (c != '-' && !is_digit(c)) return std::nullopt;
            std::size_t end = 0, bad = 0;
            if (!number_at(i, end, bad)) {
                if (bad - i < min_bytes) return std::nullopt;
                json_token_fault f;
                f.token_start = i;
                f.equivalent = without_long_digit_runs(s.substr(i, bad - i));
                f.shift = bad - f.equivalent.size();
                f.equivalent.append(s.substr(bad, 1));
                return f;
            }
            if (next != expect::value) {
                if (end - i < min_bytes) return std::nullopt;
                return misplaced(i, end, next, array);
            }
            const std::string_view token = s.substr(i, end - i);
            if (out_of_double_range(token)) {
                if (token.size() < min_bytes) return std::nullopt;
                // nlohmann reads one byte past a number (or the end) before it
                // finds the value out of range: at end + 1, as after "1e400".
                json_token_fault f;
                f.token_start = i;
                f.equivalent = "1e400";
                f.shift = end - 5;
                f.overflow = token;
                return f;
            }
            i = end;
            after_value();
        }
        return std::nullopt;
    }
};

// Whether `text` may hold a token of `min_bytes` or more, cheaply: such a
// token covers a whole stretch of min_bytes / 2 bytes that starts at a
// multiple of min_bytes / 2, and no stretch holding a token boundary can be
// inside one. A quote after an even number of backslashes is a boundary: it
// opens or closes a string (a backslash outside a string is a bad token of
// its own). One search per stretch in the common case, where the first quote
// is a few bytes in.
template <class D = void>
bool may_hold_long_token(std::string_view text, std::size_t min_bytes) noexcept {
    const std::size_t stretch = min_bytes / 2;
    if (stretch == 0) return true;
    for (std::size_t begin = 0; begin + stretch <= text.size(); begin += stretch) {
        const std::size_t end = begin + stretch;
        std::size_t at = begin;
        for (;;) {
            at = text.find('"', at);
            if (at == std::string_view::npos || at >= end) return true;
            std::size_t backslashes = 0;
            while (at - backslashes > 0 && text[at - backslashes - 1] == '\\') ++backslashes;
            if (backslashes % 2 == 0) break;
            ++at;
        }
    }
    return false;
}

// What the scan found: the long strings nlohmann takes, in document order,
// up to the first token it would stop at, and that token when it is long.
struct json_long_tokens {
    std::vector<json_long_string> strings;
    std::optional<json_token_fault> fault;
};

// The tokens of `text` of at least `min_bytes` (a fault only when nlohmann
// stops at no shorter token first). Expects no NUL byte (the readers refuse
// one first).
template <class D = void>
json_long_tokens find_long_tokens(std::string_view text, std::size_t min_bytes = long_token_bytes) {
    json_long_tokens found;
    found.fault = json_token_scan<D>{text, min_bytes, &found.strings}.run();
    return found;
}

// The value of a well-formed JSON string from the text between its quotes:
// escapes undone, in UTF-8 (a surrogate pair is one code point), as nlohmann
// decodes it.
template <class D = void>
std::string decode_json_string(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    const auto hex4 = [&](std::size_t at) {
        unsigned long v = 0;
        for (std::size_t k = at; k < at + 4; ++k) {
            const char c = text[k];
            v = v * 16 + static_cast<unsigned long>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        return v;
    };
    const auto put = [&](unsigned long bits) { out += static_cast<char>(bits); };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c != '\\') {
            out += c;
            continue;
        }
        const char e = text[++i];
        switch (e) {
            case 'b': out += '\b'; continue;
            case 'f': out += '\f'; continue;
            case 'n': out += '\n'; continue;
            case 'r': out += '\r'; continue;
            case 't': out += '\t'; continue;
            case 'u': break;
            default: out += e; continue;  // '"', '\\' or '/'
        }
        unsigned long cp = hex4(i + 1);
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // the scan saw its low surrogate follow
            cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(i + 3) - 0xDC00);
            i += 6;
        }
        if (cp < 0x80) {
            put(cp);
        } else if (cp < 0x800) {
            put(0xC0 | (cp >> 6));
            put(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            put(0xE0 | (cp >> 12));
            put(0x80 | ((cp >> 6) & 0x3F));
            put(0x80 | (cp & 0x3F));
        } else {
            put(0xF0 | (cp >> 18));
            put(0x80 | ((cp >> 12) & 0x3F));
            put(0x80 | ((cp >> 6) & 0x3F));
            put(0x80 | (cp & 0x3F));
        }
    }
    return out;
}

}  // namespace keyhook::detail
