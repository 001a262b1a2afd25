// What the PostgreSQL stores (postgres_store.hpp, postgres_key_store.hpp)
// print of libpq's messages. Needs nothing but the standard library.
#pragma once

#include <string>

namespace examples::store {

// libpq's message as one clean line: it ends with a newline and may hold
// more lines (a hint indented with a tab); the end is trimmed and each inner
// line break, with the blanks around it, is written "; ".
inline std::string postgres_message(const char* text) {
    std::string out;
    bool pending_break = false;
    for (const char* p = text ? text : ""; *p != '\0'; ++p) {
        const char c = *p;
        if (c == '\n' || c == '\r') {
            pending_break = true;
            continue;
        }
        if (pending_break && (c == ' ' || c == '\t')) continue;
        if (pending_break && !out.empty()) out += "; ";
        pending_break = false;
        out += c;
    }
    while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
    return out;
}

}  // namespace examples::store
