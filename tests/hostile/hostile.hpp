// The hostile-input catalogue's machinery: a row names a surface (a parser or
// validator), an input, the exact error kind and path it must give, and the
// rules (docs/rules.md) involved. Every error is also checked for properties
// that hold whatever the input: a bounded message that never holds a whole
// input longer than 64 bytes (messages quote at most that much).
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "keyhook/error.hpp"

namespace hostile {

struct row {
    std::string surface;  // a key of the runner map
    std::string input;
    keyhook::errc expected;
    std::string path;
    std::string rules;  // e.g. "L2 T2", for the reader of a failure
};

using runner = std::function<std::optional<keyhook::error>(const std::string&)>;
using runner_map = std::map<std::string, runner>;

inline std::size_t& rows_checked() {
    static std::size_t n = 0;
    return n;
}

// Splits on '|' (the catalogue's separator for multi-part inputs).
inline std::vector<std::string> split(const std::string& s, char sep = '|') {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == sep) {
            out.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    return out;
}

inline void check_rows(const runner_map& runners, const std::vector<row>& rows) {
    for (const auto& r : rows) {
        INFO("surface " << r.surface << ", rules " << r.rules << ", input (" << r.input.size() << " bytes) "
                        << keyhook::detail::quote_input(r.input, 120));
        const auto it = runners.find(r.surface);
        REQUIRE(it != runners.end());
        const auto e = it->second(r.input);
        ++rows_checked();
        CHECK(e.has_value());
        if (!e) continue;
        INFO("got " << *e);
        CHECK(e->code == r.expected);
        CHECK(e->path == r.path);
        CHECK(e->message.size() < 600);
        if (r.input.size() > 64) CHECK(e->message.find(r.input) == std::string::npos);
    }
}

}  // namespace hostile
