// Event names (H3, H5) through parse_event_type. Properties: accepted exactly
// when the input is one of the 53 names of spec 6.1 (case-sensitive, checked
// against a plain list scan); an unknown name gives errc::unknown_event whose
// suggestion is a known name, the case-insensitive match when there is one;
// the work per input is bounded (only 64 bytes feed the suggestion), which
// libFuzzer's -timeout and the 64 KiB inputs of scripts/fuzz.sh exercise.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"
#include "keyhook/events.hpp"

namespace {

bool equal_ignoring_ascii_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

}  // namespace

KEYHOOK_FUZZ_TARGET(event_name) {
    const std::string_view name(reinterpret_cast<const char*>(data), size);
    const keyhook::event_type* known = nullptr;
    const keyhook::event_type* folded = nullptr;
    for (const auto& e : keyhook::all_event_types()) {
        if (keyhook::to_string(e) == name) known = &e;
        if (!folded && equal_ignoring_ascii_case(keyhook::to_string(e), name)) folded = &e;
    }
    const auto parsed = keyhook::try_parse_event_type(name);
    fuzz::check(parsed.has_value() == (known != nullptr), "accepted iff one of the 53 names");
    fuzz::check(keyhook::find_event_type(name).has_value() == (known != nullptr), "find_event_type disagrees");
    if (parsed) {
        fuzz::check(*parsed == *known, "parsed to another type");
        return 0;
    }
    const auto& e = parsed.error();
    fuzz::check(e.code == keyhook::errc::unknown_event && e.path.empty(), "an unknown name gives another error");
    const auto suggestion = keyhook::closest_event_type(name);
    bool listed = false;
    for (const auto& k : keyhook::all_event_types()) listed = listed || k == suggestion;
    fuzz::check(listed, "the suggestion is not a known type");
    const std::string tail = "; did you mean \"" + std::string(keyhook::to_string(suggestion)) + "\"?";
    fuzz::check(
        e.message.size() >= tail.size() && e.message.compare(e.message.size() - tail.size(), tail.size(), tail) == 0,
        "the message does not end with the suggestion", e.message);
    if (folded) fuzz::check(suggestion == *folded, "a case-insensitive match is not the suggestion");
    fuzz::check(e.message.size() < 400, "the message grows with the input");
    return 0;
}
