// Member-table completeness: a record's member table (detail/members.hpp) must list every
// member of the struct, so a member added to the struct and forgotten in the
// table does not compile. Case 0 is the legal path (a complete table); every
// other case must not compile.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "keyhook/detail/members.hpp"

struct record {
    std::string id;
    std::optional<std::string> note;
    std::vector<std::string> tags;
#if KEYHOOK_COMPILE_FAIL_CASE == 1 || KEYHOOK_COMPILE_FAIL_CASE == 2
    std::optional<std::string> added;  // a new member, not in the table
#endif
};

template <>
struct keyhook::detail::members_of<record> {
    static constexpr auto rows = std::make_tuple(row<text_form>("id", &record::id, presence::required),
                                                 row<text_form>("note", &record::note, presence::optional)
#if KEYHOOK_COMPILE_FAIL_CASE != 3
                                                     ,
                                                 row<string_list_form>("tags", &record::tags, presence::optional)
#endif
    );
};

#if KEYHOOK_COMPILE_FAIL_CASE != 2
// What a record's header writes after its table.
static_assert(keyhook::detail::members_complete<record>());
#endif

int main() {
    const record a{}, b{};
    // Case 2: no static_assert in the header; a derived function still refuses.
    return keyhook::detail::members_equal(a, b) ? 0 : 1;
}
