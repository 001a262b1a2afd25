// ODR test, first translation unit: includes every keyhook header. Linked with
// odr_b.cpp, which does the same; a header that defines a non-inline function
// or variable fails the link, and inline entities must agree across both.
#include "keyhook/keyhook.hpp"
#include "keyhook_all_headers.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace odr_b {
std::string format_in_b(keyhook::timestamp t);
const std::error_category* category_in_b();
std::string mask_in_b(const std::string& key);
}  // namespace odr_b

TEST_CASE("ODR: two translation units that include every header link and agree", "[package][odr]") {
    const auto t = keyhook::parse_timestamp("2026-11-22T12:00:00.62016Z");
    CHECK(odr_b::format_in_b(t) == keyhook::format_timestamp(t));
    // The category is a function-local static in an inline function: one object in the program.
    CHECK(odr_b::category_in_b() == &keyhook::error_category());
    const std::string key = "0f8fad5b-d9cb-469f-a165-70867728950e";
    CHECK(odr_b::mask_in_b(key) == keyhook::mask_key(key));
}
