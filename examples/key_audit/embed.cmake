# Writes INPUT's bytes into OUTPUT as a C++ header that defines the string_view
# NAME (in namespace key_audit), so the program carries its sample with it.
# Every byte is written as a \x escape: no text can end the literal early.
# Usage: cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P embed.cmake
file(READ "${INPUT}" _hex HEX)
string(LENGTH "${_hex}" _hex_length)
math(EXPR _size "${_hex_length} / 2")
string(REGEX REPLACE "(..)" "\\\\x\\1" _escaped "${_hex}")
# 32 bytes (128 characters of escapes) a line.
string(REGEX REPLACE "(................................................................................................................................)" "\\1\"\n    \"" _lines "${_escaped}")
file(WRITE "${OUTPUT}"
"// Generated from ${INPUT} by embed.cmake: do not edit.
#pragma once
#include <string_view>
namespace key_audit {
inline constexpr std::string_view ${NAME}{
    \"${_lines}\",
    ${_size}};
}  // namespace key_audit
")
