// expiry_poll: simulates a host that polls its key list at irregular times over
// one day and sends the expiry notices of each poll. Each poll covers
// (since, now], where `since` is the previous poll's `now`, so every change is
// sent once. The clock is simulated: real hosts pass the system clock's reading.
#include <keyhook/expiry_notices.hpp>
#include "shared/cli.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace {

keyhook::api_key key(std::string id, std::string name, const char* from, const char* until,
                     keyhook::key_status listed = keyhook::key_status::active) {
    keyhook::api_key k;
    k.id = keyhook::key_id(std::move(id));
    k.name = std::move(name);
    k.masked = keyhook::mask_key("3f0c2a9e-5d41-4b7a-9c3e-" + k.id.str());
    k.status = listed;
    k.active_from = keyhook::parse_timestamp(from);
    k.expire_at = keyhook::parse_timestamp(until);
    return k;
}

}  // namespace

int main(int argc, char** argv) {
    const examples::cli::program program{"expiry_poll", "usage: expiry_poll [--help] [--version]", ""};
    if (const auto status = examples::cli::parse_no_options(
            program,
            "Simulates a host that polls its key list at irregular times over one day and sends the\n"
            "expiry notices of each poll (see docs/expiry-notices.md). Exit 1 if the polls together\n"
            "sent other notices than one poll over the whole day would.",
            argc, argv))
        return *status;

    // The records a real host would read from the list call (spec 4.1).
    const std::vector<keyhook::api_key> keys = {
        // 1 day: becomes Active and starts warning at the same instant.
        key("000000000001", "nightly export", "2026-03-01T06:00:00Z", "2026-03-02T06:00:00Z"),
        // 5 days: warns from its 2nd valid day.
        key("000000000002", "billing sync", "2026-02-28T10:00:00Z", "2026-03-05T10:00:00Z"),
        // 31 days: warns from its 24th valid day.
        key("000000000003", "reporting", "2026-02-06T13:00:00Z", "2026-03-09T13:00:00Z"),
        // Expires during the day.
        key("000000000004", "partner feed", "2026-02-01T17:45:00Z", "2026-03-01T17:45:00Z"),
        // Revoked: the clock changes nothing.
        key("000000000005", "old integration", "2026-02-20T00:00:00Z", "2026-03-01T12:00:00Z",
            keyhook::key_status::revoked),
    };

    // First poll: the host chose to start at midnight (see the doc for other choices).
    keyhook::timestamp since = keyhook::parse_timestamp("2026-03-01T00:00:00Z");
    const keyhook::timestamp day_start = since;
    const std::vector<const char*> poll_times = {
        "2026-03-01T03:00:00Z",        "2026-03-01T06:00:00Z",  // a change exactly at `now`: reported now
        "2026-03-01T09:30:00Z",        "2026-03-01T13:00:00Z", "2026-03-01T13:00:00Z",  // a repeated poll: nothing
        "2026-03-01T17:45:00.000001Z", "2026-03-02T00:00:00Z",
    };

    std::vector<keyhook::expiry_notice> sent;
    for (const char* text : poll_times) {
        const keyhook::timestamp now = keyhook::parse_timestamp(text);
        const auto digest = keyhook::digest_between(keys, since, now);
        std::cout << "poll (" << keyhook::format_timestamp(since) << ", " << keyhook::format_timestamp(now)
                  << "]: " << digest.notices.size() << " notice(s)\n";
        for (const auto& n : digest.notices) {
            std::cout << "  " << keyhook::escape_json_text(nlohmann::ordered_json(n).dump()) << '\n';
            sent.push_back(n);
        }
        since = now;  // the host stores this and passes it next time
    }

    // The polls together sent exactly what one poll over the whole day would.
    const auto whole = keyhook::digest_between(keys, day_start, since);
    const bool same = whole.notices == sent;
    std::cout << "one poll over the day: " << whole.notices.size() << " notice(s), "
              << (same ? "the same as the polls sent" : "DIFFERENT from the polls") << '\n';
    return same ? 0 : 1;
}
