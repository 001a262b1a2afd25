// keyhook: rule P1, printing text that came from input. One escaping routine
// behind escape_text, escaped(s) for streams, escape_json_text for a
// serializer's output, and quoted_input for error messages.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>

#include "keyhook/config.hpp"

namespace keyhook {
namespace detail {

// Code points keyhook never prints raw (P1): the C0 controls, DEL and the C1
// controls (Unicode category Cc: ESC, CR, LF, CSI U+009B, NEL U+0085 ...),
// every Bidi_Control character (U+061C, U+200E, U+200F, U+202A to U+202E,
// U+2066 to U+2069), which reorder what a terminal or log viewer shows, and
// U+2028, U+2029, which some viewers take for line breaks.
constexpr bool is_unsafe_to_print(char32_t cp) noexcept {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// What else an escape covers besides the unsafe characters.
enum class escape_style : unsigned char {
    text,      // '\' doubled as well, so an escape in the output always stands for an escaped character
    quoted,    // '\' and '"' escaped: the text goes between double quotes
    composed,  // nothing else: for text already made of escaped parts (error messages)
};

// Appends s with every unsafe code point written as \uXXXX (C0 and DEL as
// \xHH) and every byte outside well-formed UTF-8 as \xHH. Ordinary text,
// non-ASCII letters included, is copied as it is.
KEYHOOK_INLINE void append_escaped(std::string& out, std::string_view s, escape_style style = escape_style::text);

}  // namespace detail

// P1: s escaped for printing. Control characters (C0, DEL, C1), bidirectional
// controls, U+2028 and U+2029 become \xHH or \uXXXX, bytes that are not
// UTF-8 become \xHH, and '\' is doubled; everything else is unchanged. The
// result can neither end a log line nor drive a terminal.
[[nodiscard]] KEYHOOK_INLINE std::string escape_text(std::string_view s);

// `os << keyhook::escaped(s)` writes escape_text(s).
struct escaped_text {
    std::string_view text;

    friend std::ostream& operator<<(std::ostream& os, escaped_text x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, escaped_text x);
};
[[nodiscard]] inline escaped_text escaped(std::string_view s) noexcept { return escaped_text{s}; }

// P1 for JSON text made by a serializer (nlohmann's dump()): the characters of
// is_unsafe_to_print that a serializer leaves raw inside strings (DEL, C1,
// bidirectional controls, U+2028, U+2029) become \u escapes, and a byte that is
// not UTF-8 becomes \ufffd. The result is JSON that reads to the same values.
// Outside strings a serializer writes only ASCII, so its layout is kept.
[[nodiscard]] KEYHOOK_INLINE std::string escape_json_text(std::string_view json);

// P1 for error messages and usage errors: input quoted as keyhook's own
// errors quote it. At most `limit` bytes of s (never part of a character),
// escaped as in escape_text with '"' escaped as well, between double quotes;
// "..." follows when s was cut. quoted_input("a\nb") is "\"a\\x0ab\"". The
// bound keeps a message short whatever the input's size; never pass a key.
[[nodiscard]] KEYHOOK_INLINE std::string quoted_input(std::string_view s, std::size_t limit = 64);

namespace detail {

// quoted_input, under the name the library's own code uses.
KEYHOOK_INLINE std::string quote_input(std::string_view s, std::size_t limit = 64);

// Writes text escaped as escaped_text would, between double quotes (P1).
KEYHOOK_INLINE void print_quoted(std::ostream& os, std::string_view text);

}  // namespace detail
}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/escape.ipp"
#endif
