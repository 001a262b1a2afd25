#pragma once
// keyhook: definitions of webhook_json.hpp (the non-template part).

#include <ostream>

#include "keyhook/webhook_json.hpp"

namespace keyhook {

KEYHOOK_INLINE bool operator==(const webhook_settings& a, const webhook_settings& b) {
    return a.tenant == b.tenant && a.webhooks == b.webhooks;
}
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const webhook_settings& s) {
    os << s.tenant;
    for (const auto& w : s.webhooks) os << '\n' << w;
    return os;
}

}  // namespace keyhook
