// Shared by the key_audit tests: the bundled sample, the instant it was written
// for, and a run of key_audit's logic with captured streams.
#pragma once

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "key_audit.hpp"

namespace key_audit_test {

inline const std::string sample_now_text = "2026-11-22T12:00:00Z";
inline const keyhook::timestamp sample_now = keyhook::parse_timestamp(sample_now_text);

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline const std::string& sample() {
    static const std::string text = read_file(KEY_AUDIT_SAMPLE_FILE);
    return text;
}

struct outcome {
    int exit_code;
    std::string out;
    std::string err;
};

// `clock` stands in for the system clock when --now is not given.
inline outcome run(const std::vector<std::string>& args, const std::string& input = {},
                   keyhook::timestamp clock = sample_now) {
    std::istringstream in(input);
    std::ostringstream out, err;
    const int code = key_audit::run(args, in, out, err, clock, sample());
    return {code, out.str(), err.str()};
}

}  // namespace key_audit_test
