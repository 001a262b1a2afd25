// ODR test, second translation unit (see odr_a.cpp).
#include "keyhook/keyhook.hpp"
#include "keyhook_all_headers.hpp"

#include <string>

namespace odr_b {
std::string format_in_b(keyhook::timestamp t) { return keyhook::format_timestamp(t); }
const std::error_category* category_in_b() { return &keyhook::error_category(); }
std::string mask_in_b(const std::string& key) { return keyhook::mask_key(key); }
}  // namespace odr_b
