// keyhook: definitions of result.hpp (see config.hpp for when they are compiled).
#pragma once

#include <ostream>

#include "keyhook/result.hpp"

namespace keyhook {
namespace detail {

KEYHOOK_INLINE void print_ok(std::ostream& os) { os << "ok"; }

}  // namespace detail
}  // namespace keyhook
