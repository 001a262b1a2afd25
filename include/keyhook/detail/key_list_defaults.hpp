// keyhook internal: the list call's default page and page size, which the
// request (key_list_request.hpp) asks for and the response's decoder
// (key_list.hpp) assumes when a response names none; declared here so that
// neither header needs the other.
#pragma once

#include <cstdint>

namespace keyhook {

inline constexpr std::int64_t default_list_page = 1;
inline constexpr std::int64_t default_list_page_size = 100;

}  // namespace keyhook
