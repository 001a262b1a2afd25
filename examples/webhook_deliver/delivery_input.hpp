// webhook_deliver's input and its stored webhooks. The document is
// webhook_dispatch's (examples/shared/dispatch_input.hpp) with three
// additions only webhook_deliver reads:
//   "events": [{"after": seconds, "event": {...}}, ...] instead of "event"
//       (shared/dispatch_input.hpp, timed_event_input): read one entry at a
//       time, so that J3's bound applies to the events kept, not to their
//       DOM; at most max_timed_events;
//   "webhooks"[i]."maxPerSecond": integer 0 to 1000000 (optional, 0: none),
//       H11's throttle of that webhook (burst 1);
//   "webhooks"[i]."signingKeys": B5's key set (key_sets.hpp), instead of
//       "signingSecret".
// A webhook of this input is the program's own record, deliver_webhook:
// keyhook's webhook (its members as keyhook reads and writes them) plus the
// two members above, described once by its member table. The store keeps
// each webhook as that table writes it with keyhook::reveal_secrets (every
// secret in plaintext, as keyhook::to_store_json writes a webhook), and
// reads it back by the same table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "key_sets.hpp"
#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/error.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/members.hpp"
#include "keyhook/result.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/webhook.hpp"
#include "keyhook/webhook_json.hpp"
#include "keyhook/webhook_validation.hpp"
#include "shared/delivery_store.hpp"
#include "shared/dispatch_input.hpp"

namespace deliver {

inline constexpr std::uint64_t max_per_second_limit = 1000000;  // T of at least 1 microsecond (K13)

// H11's throttle: a whole number of deliveries a second, 0 (none) to 1000000.
struct throttle_form {
    static constexpr keyhook::form_kind kind = keyhook::form_kind::value;
    static constexpr std::string_view expected = "a whole number of deliveries a second";
    template <class Json>
    static std::optional<keyhook::error> read(const Json& v, const std::string& path, std::uint64_t& out) {
        if (!v.is_number_integer()) return keyhook::wrong_type(path, expected, v);
        const bool negative = !v.is_number_unsigned() && v.template get<std::int64_t>() < 0;
        if (negative || v.template get<std::uint64_t>() > max_per_second_limit)
            return keyhook::error{keyhook::errc::out_of_range, path, "expected 0 (no throttle) to 1000000"};
        out = v.template get<std::uint64_t>();
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, std::uint64_t in) {
        slot = in;
    }
};

// A webhook as webhook_deliver reads and stores it.
struct deliver_webhook {
    keyhook::webhook config;                                  // name, endpoint, saved, events, auth, signingSecret
    std::uint64_t max_per_second = 0;                         // maxPerSecond (H11); 0: no throttle
    std::optional<keyhook::crypto::signing_key_set> key_set;  // signingKeys (B5)
};

// signingKeys goes with no signingSecret.
inline bool without_signing_secret(const deliver_webhook& w) noexcept { return !w.config.signing_secret; }

}  // namespace deliver

template <>
struct keyhook::members_of<deliver::deliver_webhook> {
    using w = deliver::deliver_webhook;
    static constexpr auto rows =
        make_rows(spread<examples::webhook_config_form>(&w::config),
                  row<deliver::throttle_form>("maxPerSecond", &w::max_per_second, presence::omitted),
                  row<deliver::key_set_form>("signingKeys", &w::key_set, presence::omitted)
                      .only_when(&deliver::without_signing_secret, "give signingSecret or signingKeys, not both"));
};
static_assert(keyhook::members_complete<deliver::deliver_webhook>());

namespace deliver {

// The webhooks of the input: an array of deliver_webhook (validated as a
// list once read, as keyhook validates a webhook list).
struct deliver_webhook_form : keyhook::record_form<deliver_webhook> {
    static constexpr std::string_view list_expected = "an array of webhooks";
};

// The document but its "events" (read one entry at a time): the tenant as
// keyhook reads it, the webhooks, and the one "event" when it is given.
struct delivery_document {
    keyhook::tenant_settings tenant;
    std::vector<deliver_webhook> webhooks;
    std::optional<examples::event_input> event;
};

}  // namespace deliver

template <>
struct keyhook::members_of<deliver::delivery_document> {
    using d = deliver::delivery_document;
    static constexpr auto rows = make_rows(
        row<null_refused<examples::tenant_form>>("tenant", &d::tenant, presence::required),
        row<null_refused<list_form<deliver::deliver_webhook_form>>>("webhooks", &d::webhooks, presence::required),
        row<null_refused<record_form<examples::event_input>>>("event", &d::event, presence::optional));
};
static_assert(keyhook::members_complete<deliver::delivery_document>());

namespace deliver {

struct delivery_input {
    keyhook::webhook_settings settings;                   // the tenant and its webhooks, validated
    std::vector<examples::timed_event> events;            // by `after`, in document order among equals
    std::map<std::string, std::uint64_t> max_per_second;  // by webhook name; absent or 0: no throttle
    key_sets keys;                                        // by webhook name (B5)
    std::vector<deliver_webhook> webhooks;                // as read, for the store
};

// The delivery input of `text`, each event stamped with the run's start plus
// its `after` unless it gives its time. Errors: a syntax error with the byte
// offset, or the first fault with its JSON path: the tenant, the webhooks
// (shape, maxPerSecond, signingKeys, then the list's validation), then the
// events.
inline keyhook::result<delivery_input> parse_delivery_input(const std::string& text, keyhook::timestamp start,
                                                            const keyhook::endpoint_policy& policy = {}) {
    examples::timed_events streamed;
    auto j = examples::read_timed_events(text, start, streamed);
    if (!j) return j.error();
    auto doc = keyhook::try_read_record<delivery_document>(*j);
    if (!doc) return doc.error();
    std::vector<keyhook::webhook> configs;
    configs.reserve(doc->webhooks.size());
    for (const auto& w : doc->webhooks) configs.push_back(w.config);
    auto valid = keyhook::try_validate_webhooks(configs, policy, "webhooks");
    if (!valid) return valid.error();
    delivery_input in;
    in.settings = keyhook::webhook_settings{std::move(doc->tenant), std::move(*valid)};
    auto events = examples::events_of(*j, std::move(doc->event), std::move(streamed), in.settings.tenant.name, start);
    if (!events) return events.error();
    in.events = std::move(*events);
    for (const auto& w : doc->webhooks) {
        if (w.max_per_second != 0) in.max_per_second[w.config.name] = w.max_per_second;
        if (w.key_set) in.keys.emplace(w.config.name, *w.key_set);
    }
    in.webhooks = std::move(doc->webhooks);
    return in;
}

// ---- the store's copy

// A webhook as the store keeps it: its table's members, every secret in
// plaintext (the store-only form; never for output).
inline std::string stored_settings_text(const deliver_webhook& w) {
    nlohmann::json j;
    keyhook::write_record(j, w, keyhook::reveal_secrets{});
    return j.dump();
}

// Each webhook of the input by name, as the store keeps it, with its
// endpoint URL (its deliveries remember it, O5).
inline std::vector<examples::store::webhook_config> stored_settings_of(const delivery_input& in) {
    std::vector<examples::store::webhook_config> out;
    out.reserve(in.webhooks.size());
    for (const auto& w : in.webhooks) out.push_back({w.config.name, stored_settings_text(w), w.config.endpoint});
    return out;
}

// A stored webhook read back by its table (the rows of earlier versions,
// which held the webhook's input JSON, read the same way: the same members).
inline keyhook::result<deliver_webhook> try_read_stored_settings(const std::string& text) {
    auto j = keyhook::try_parse_json(text);
    if (!j) return j.error();
    return keyhook::try_read_record<deliver_webhook>(*j);
}

}  // namespace deliver
