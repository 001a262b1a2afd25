// One description per record, on a real record: a member added to webhook
// needs its row in detail/webhook_table.hpp, and a row needs its member.
// webhook_member_edits.cmake makes the edits on copies of the two headers;
// case 0 makes both (the two edits of docs/design.md's exercise) and
// compiles, reading, writing and comparing the new member; cases 1 and 2
// each forget one and must not compile.
#include <string>

#include <nlohmann/json.hpp>

#include "keyhook/detail/webhook_settings_table.hpp"

int main() {
    keyhook::webhook w;
    nlohmann::json j;
    keyhook::to_json(j, w);
    const auto back = keyhook::try_webhook_from_json<nlohmann::json>(j);
#if KEYHOOK_COMPILE_FAIL_CASE == 0
    w.description = "read, written and compared through its row";
#endif
    return back && *back == w ? 0 : 1;
}
