// Reading a file named on the command line, with the system's reason when it
// cannot be read. No dependency beyond the C++ standard library.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace examples::cli {

// The whole of a file named on the command line, or nullopt with `why` set to
// the system's reason ("No such file or directory", "Is a directory"): a
// directory is refused by its read, never read as an empty file (O1: a file
// that cannot be read is bad input, 1).
inline std::optional<std::string> read_whole_file(const std::string& path, std::string& why) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        why = std::strerror(errno);
        return std::nullopt;
    }
    std::string text;
    char buffer[65536];
    for (;;) {
        const std::size_t n = std::fread(buffer, 1, sizeof buffer, f);
        text.append(buffer, n);
        if (n < sizeof buffer) break;
    }
    const bool failed = std::ferror(f) != 0;
    const int error = errno;
    std::fclose(f);
    if (failed) {
        why = std::strerror(error);
        return std::nullopt;
    }
    return text;
}

}  // namespace examples::cli
