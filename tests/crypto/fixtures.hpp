// What several crypto suites dispatch: one event, and webhooks that carry
// signing keys (whsec_ and whsk_ text, as configured).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "keyhook/events.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/webhook.hpp"

namespace crypto_fixtures {

// The Standard Webhooks reference test vector (the same in its libraries for
// every language).
inline constexpr const char* kat_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
inline constexpr const char* kat_id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
inline constexpr std::int64_t kat_unix = 1614265330;
inline constexpr const char* kat_body = R"({"test": 2432232314})";

inline keyhook::timestamp unix_time(std::int64_t s) { return keyhook::timestamp{std::chrono::seconds{s}}; }

inline keyhook::notification event(keyhook::timestamp at) {
    keyhook::notification n;
    n.folder_name = "Loans";
    n.user_action = keyhook::event_type::AddProduct;
    n.tenant = "acme";
    n.request_time = at;
    return n;
}

// A saved webhook at https://hooks.example.com/<name>, signed when `signing` is given.
inline keyhook::webhook hook(std::string name, std::optional<std::string> signing = std::nullopt) {
    keyhook::webhook w;
    w.name = std::move(name);
    w.endpoint = "https://hooks.example.com/" + w.name;
    w.saved = true;
    if (signing) w.signing_secret = keyhook::secret(std::move(*signing));
    return w;
}

}  // namespace crypto_fixtures
