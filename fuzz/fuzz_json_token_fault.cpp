// J3's check of long bad tokens (detail/json_token_fault.hpp) against
// nlohmann reading the whole text. Property: at every threshold the reader
// sees the same events and the same error (offset, reason, the number's text
// for J2) as from nlohmann alone; threshold 0 makes every bad token go
// through its short equivalent, so any input exercises the scan.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "../tests/support/recording_sax.hpp"
#include "fuzz_common.hpp"

KEYHOOK_FUZZ_TARGET(json_token_fault) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // The readers refuse a NUL byte before the parser runs (nlohmann would
    // take it for the end of the text).
    if (text.find('\0') != std::string_view::npos) return 0;
    const std::string whole = keyhook_test::read_whole(text);
    static constexpr std::size_t thresholds[] = {0, 1, 4, 64};
    for (const std::size_t threshold : thresholds) {
        const std::string checked = keyhook_test::read_checked(text, threshold);
        fuzz::check(checked == whole, "the checked parse differs from nlohmann's", checked + " vs " + whole);
    }
    return 0;
}
