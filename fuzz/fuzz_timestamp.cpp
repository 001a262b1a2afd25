// Timestamps (T1-T4): never crash; whatever parses writes back to text that
// parses to the same instant; and it agrees with date::parse on every input
// both accept (a differential check).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include <date/date.h>

#include "keyhook/timestamps.hpp"

namespace {

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
}

// date::parse's reading of the same text, for the differential check: only
// the "Z" forms with at most 6 fraction digits, which both must read alike.
bool date_parse(const std::string& text, keyhook::timestamp& out) {
    if (text.size() < 20 || text.back() != 'Z' || text[10] != 'T') return false;
    std::istringstream in(text);
    date::sys_time<std::chrono::microseconds> tp;
    in >> date::parse("%FT%TZ", tp);
    if (in.fail() || in.peek() != std::char_traits<char>::eof()) return false;
    out = tp;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto parsed = keyhook::try_parse_timestamp(text);
    if (!parsed) {
        if (parsed.error().code != keyhook::errc::invalid_timestamp) fail("wrong error kind");
        return 0;
    }
    const auto written = keyhook::format_timestamp(*parsed);
    const auto again = keyhook::try_parse_timestamp(written);
    if (!again || *again != *parsed) fail("parse, write, parse changed the instant");
    if (keyhook::format_timestamp(*again) != written) fail("writing is not stable");

    keyhook::timestamp by_date{};
    const auto digits = text.find('.') == std::string::npos ? 0 : text.size() - text.find('.') - 2;
    const bool leap = text.size() > 18 && text.compare(17, 2, "60") == 0;
    if (!leap && digits <= 6 && date_parse(text, by_date) && by_date != *parsed) fail("differs from date::parse");
    return 0;
}
