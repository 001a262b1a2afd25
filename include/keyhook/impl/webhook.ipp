#pragma once
// keyhook: definitions of webhook.hpp.

#include <ostream>

#include "keyhook/webhook.hpp"

namespace keyhook {

KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const webhook& w) {
    os << "webhook{name=" << detail::quote_input(w.name)
       << ", endpoint=" << detail::quote_input(redact_url(w.endpoint), 256) << ", " << (w.saved ? "saved" : "draft")
       << ", events=";
    if (w.events.empty()) os << "all";
    const char* sep = "";
    for (auto e : w.events) {
        os << sep << e;
        sep = "|";
    }
    os << ", auth=[";
    sep = "";
    for (const auto& p : w.auth) {
        os << sep << p;
        sep = ", ";
    }
    os << ']';
    if (w.signing_secret) os << ", signing secret set";  // not even its masked form: it is a key
    return os << '}';
}

}  // namespace keyhook
