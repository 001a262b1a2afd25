// Aligned text for people: a table of columns (key_admin list) and lines of
// "label: value" (key_admin show), aligned by the columns a terminal gives
// each character (a CJK name takes two per character), not by bytes.
//
// The cells are printed as given: a caller escapes text that came from input
// first (keyhook::escape_text, rule P1), so no cell can end a line, move the
// cursor or reorder what follows.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace examples::text {

namespace table_detail {

// One UTF-8 sequence at s[i], moving i past it; a byte that starts no
// well-formed sequence reads as U+FFFD and moves i by one.
inline char32_t decode(std::string_view s, std::size_t& i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) {
        ++i;
        return lead;
    }
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        n = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        n = 3;
        if (lead == 0xE0) lo = 0xA0;
        if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        n = 4;
        if (lead == 0xF0) lo = 0x90;
        if (lead == 0xF4) hi = 0x8F;
    }
    bool ok = n != 0 && s.size() - i >= n && byte(1) >= lo && byte(1) <= hi;
    for (std::size_t k = 2; ok && k < n; ++k) ok = (byte(k) & 0xC0) == 0x80;
    if (!ok) {
        ++i;
        return 0xFFFD;
    }
    char32_t c = lead & (0x7Fu >> n);
    for (std::size_t k = 1; k < n; ++k) c = c << 6 | (byte(k) & 0x3Fu);
    i += n;
    return c;
}

// Terminal columns of a code point: 0 for combining marks and zero-width
// characters, 2 for East Asian wide ones and emoji, else 1 (wcwidth() without
// the locale).
inline std::size_t columns(char32_t c) {
    if (c == 0 || (c >= 0x0300 && c <= 0x036F) || (c >= 0x200B && c <= 0x200F) || (c >= 0xFE00 && c <= 0xFE0F) ||
        (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x20D0 && c <= 0x20FF))
        return 0;
    if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) || (c >= 0x3041 && c <= 0x33FF) ||
        (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
        (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
        (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
        (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
        return 2;
    return 1;
}

}  // namespace table_detail

// Columns `s` takes on a terminal.
[[nodiscard]] inline std::size_t display_width(std::string_view s) {
    std::size_t width = 0;
    for (std::size_t i = 0; i < s.size();) width += table_detail::columns(table_detail::decode(s, i));
    return width;
}

// `s` cut to at most `max_columns` columns, ending in "…" when cut.
[[nodiscard]] inline std::string truncate_to_width(std::string_view s, std::size_t max_columns) {
    if (display_width(s) <= max_columns) return std::string(s);
    std::string out;
    std::size_t width = 0;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t start = i;
        const auto w = table_detail::columns(table_detail::decode(s, i));
        if (width + w + 1 > max_columns) break;  // a column for the ellipsis
        out.append(s.substr(start, i - start));
        width += w;
    }
    return out + "\u2026";
}

// `s` as `escape` shows it (keyhook::escape_text, P1), cut to at most
// `max_columns` columns, ending in "…" when cut. The cut falls between the
// input's code points, never inside an escape sequence: cutting the escaped
// text instead could leave "\x0" or a lone backslash at the end.
template <class Escape>
[[nodiscard]] std::string escape_to_width(std::string_view s, std::size_t max_columns, const Escape& escape) {
    std::string whole = escape(s);
    if (display_width(whole) <= max_columns) return whole;
    std::string kept;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t next = i;
        (void)table_detail::decode(s, next);
        std::string longer = escape(s.substr(0, next));
        if (display_width(longer) + 1 > max_columns) break;  // a column for the ellipsis
        kept = std::move(longer);
        i = next;
    }
    return kept + "\u2026";
}

// Rows of cells (the first the header) as lines of columns two spaces apart,
// each padded to its column's widest cell; no line ends in spaces.
[[nodiscard]] inline std::string render_table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> widths;
    for (const auto& row : rows) {
        if (widths.size() < row.size()) widths.resize(row.size(), 0);
        for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (c > 0) line += "  ";
            line += row[c];
            line.append(widths[c] - display_width(row[c]), ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line;
        out += '\n';
    }
    return out;
}

// "label: value" lines, the values aligned one column after the longest label.
[[nodiscard]] inline std::string render_fields(const std::vector<std::pair<std::string, std::string>>& fields) {
    std::size_t width = 0;
    for (const auto& f : fields) width = std::max(width, display_width(f.first));
    std::string out;
    for (const auto& f : fields) {
        out += f.first;
        out += ':';
        out.append(width - display_width(f.first) + 1, ' ');
        out += f.second;
        out += '\n';
    }
    return out;
}

}  // namespace examples::text
