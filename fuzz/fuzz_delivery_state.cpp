// A delivery's stored state (rule B6, read under J1 to J3): never crash;
// whatever reads writes back to text that reads to the same value and is
// written again byte for byte (the exact round trip a store relies on); every
// refusal says why.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "keyhook/delivery_state.hpp"

KEYHOOK_FUZZ_TARGET(delivery_state) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto state = keyhook::try_parse_delivery_state(text);
    if (!state) {
        fuzz::check(!state.error().message.empty(), "a refusal without a reason", state.error().path);
        return 0;
    }
    const std::string written = keyhook::write_delivery_state(*state);
    const auto again = keyhook::try_parse_delivery_state(written);
    fuzz::check(again.has_value(), "written state does not read back", written);
    fuzz::check(*again == *state, "the round trip changed the value", written);
    fuzz::check(keyhook::write_delivery_state(*again) == written, "written twice, different bytes", written);
    fuzz::check(state->next_due.has_value() == (state->status == keyhook::delivery_status::pending),
                "nextDue set exactly when pending", written);
    return 0;
}
