// webhook_deliver's operator actions on a store (rule O5), besides working it
// (worker.hpp):
//   list      every delivery a filter takes, with every attempt of its history
//   resend    one ended delivery queued again, by id
//   recover   every delivery of one webhook created since a time that gave up
//             or was ended by its webhook's disabling, queued again
//   enable    a disabled webhook enabled again, its health cleared, with an
//             endpoint.enabled notice (H10)
//   purge     ended deliveries reduced to tombstones before a time
// An action only changes the store: the workers on it (webhook_deliver
// --work) send what it queues. Each changes only deliveries in the state it
// names, conditionally (delivery_store.hpp: the ended status and attempt
// sequence a delivery was read in), so repeating or racing an action queues
// each delivery at most once per time it ended. A delivery queued again goes
// to its webhook's settings as they are now, never while its webhook is
// disabled, and not when its webhook's endpoint URL changed since it was
// enqueued unless the operator says so (--to-current-endpoint). Each action
// returns its exit status (O1) and the counts its summary line shows.
#pragma once

#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attempt.hpp"
#include "delivery_input.hpp"
#include "keyhook/delivery_state.hpp"
#include "keyhook/endpoint_health.hpp"
#include "keyhook/escape.hpp"
#include "keyhook/http.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/timestamps.hpp"
#include "shared/cli.hpp"
#include "shared/delivery_store.hpp"
#include "worker.hpp"

namespace deliver {

struct action_result {
    int status = examples::cli::exit_ok;
    run_counts counts;                     // delivered, gave up and disabled: --list's counts of what it listed
    std::optional<std::uint64_t> pending;  // --list's pending count; else the store's, read at the end
};

// The workers' timeline now, as the store keeps it (B6), without fixing one:
// before any worker ran, the wall clock.
inline keyhook::timestamp store_now(examples::store::delivery_store& store) {
    if (const auto kept = store.timeline()) {
        if (kept->scale > 0) return run_clock::anchored(kept->scale, examples::store::from_micros(kept->epoch)).now();
    }
    return clock_now();
}

// A JSON string as the programs print names: ASCII, escaped (P1).
inline std::string quoted(const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

inline void print_json_line(const nlohmann::ordered_json& j) {
    std::cout << j.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace) << std::endl;
}

// --list: one JSON line per delivery `filter` takes: its tenant, then its
// state as delivery_state writes it without the body, its sequence,
// creation and end times and endpoint (P2: no query values, no user-info),
// and "attempts": every attempt of every sequence from the history, with
// its duration, transport error and response's first 1 KiB as stored
// (secrets replaced, escaped: P1).
inline action_result list_deliveries(examples::store::delivery_store& store,
                                     const examples::store::delivery_filter& filter) {
    action_result r;
    std::uint64_t pending = 0;
    store.for_each(filter, [&](const examples::store::stored_delivery& d) {
        const nlohmann::ordered_json state = static_cast<const keyhook::delivery_state&>(d);
        nlohmann::ordered_json j = {{"tenant", d.tenant}};
        for (const auto& [name, value] : state.items())
            if (name != "body" && name != "attempts") j[name] = value;
        j["sequence"] = d.sequence;
        j["createdAt"] = keyhook::format_timestamp(d.created_at);
        j["endedAt"] = d.ended_at ? nlohmann::ordered_json(keyhook::format_timestamp(*d.ended_at))
                                  : nlohmann::ordered_json(nullptr);
        j["endpoint"] = d.endpoint.empty() ? nlohmann::ordered_json(nullptr)
                                           : nlohmann::ordered_json(keyhook::redact_url(d.endpoint));
        auto attempts = nlohmann::ordered_json::array();
        for (const auto& a : store.history(to_string(d.id))) {
            nlohmann::ordered_json line;
            line["sequence"] = a.sequence;
            line["attempt"] = a.number;
            line["sentAt"] = keyhook::format_timestamp(a.attempt.sent_at);
            line["status"] = a.attempt.outcome.status() ? nlohmann::ordered_json(*a.attempt.outcome.status())
                                                        : nlohmann::ordered_json(nullptr);
            line["outcome"] = examples::store::outcome_text(a.attempt.outcome);
            if (const auto ra = examples::store::retry_after_text(a.attempt.retry_after)) line["retryAfter"] = *ra;
            if (a.detail) {
                line["durationMs"] = static_cast<double>(a.detail->duration.count()) / 1000.0;
                line["error"] =
                    a.detail->error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.detail->error);
                line["response"] = a.detail->response;
                line["responseCut"] = a.detail->response_cut;
                line["result"] = a.detail->result;
            }
            attempts.push_back(std::move(line));
        }
        j["attempts"] = std::move(attempts);
        print_json_line(j);
        switch (d.status) {
            case keyhook::delivery_status::pending: ++pending; break;
            case keyhook::delivery_status::delivered: ++r.counts.delivered; break;
            case keyhook::delivery_status::gave_up: ++r.counts.gave_up; break;
            case keyhook::delivery_status::disabled: ++r.counts.disabled; break;
        }
    });
    r.pending = pending;
    return r;
}

// The webhook an action queues deliveries for, as it is now: its endpoint
// URL (as configured) and whether it is disabled (its settings row's flag
// or its endpoint state's, H10). Nothing, said on standard error, when the
// store has no settings for it or they do not read back.
struct webhook_now {
    std::string endpoint;
    bool disabled = false;
};
inline std::optional<webhook_now> current_webhook(examples::store::delivery_store& store,
                                                  const examples::store::webhook_key& key) {
    const auto row = store.webhook(key);
    if (!row) {
        std::cerr << "webhook_deliver: the store has no " << webhook_text(key) << '\n';
        return std::nullopt;
    }
    const auto settings = try_read_stored_settings(row->settings);
    if (!settings) {
        std::cerr << "webhook_deliver: the stored settings of " << webhook_text(key) << ": " << settings.error()
                  << '\n';
        return std::nullopt;
    }
    return webhook_now{settings->config.endpoint, row->disabled || read_endpoint(store, key).state.disabled};
}

inline std::string enable_hint(const examples::store::webhook_key& key) {
    return "enable it first (webhook_deliver --store S --enable --tenant " + quoted(key.tenant) + " --webhook " +
           quoted(key.name) + ")";
}

// O5: the line of a delivery queued again, naming the endpoint it now goes
// to (P2: without query values and user-info).
inline void print_queued(const examples::store::stored_delivery& was, const std::string& endpoint) {
    nlohmann::ordered_json q;
    q["deliveryId"] = to_string(was.id);
    q["tenant"] = was.tenant;
    q["webhook"] = was.webhook;
    q["was"] = examples::store::status_text(was.status);
    q["sequence"] = was.sequence + 1;
    q["endpoint"] = keyhook::redact_url(endpoint);
    print_json_line(nlohmann::ordered_json{{"queued", std::move(q)}});
}

// Whether `d` was enqueued for another endpoint URL than `now` (an unknown
// one, "", is taken for the same).
inline bool endpoint_changed(const examples::store::stored_delivery& d, const webhook_now& now) {
    return !d.endpoint.empty() && d.endpoint != now.endpoint;
}

// --resend ID: the ended delivery (delivered, gave up, or ended by its
// webhook's disabling) queued again: a new attempt sequence, the same
// webhook-id, its history kept.
inline action_result resend(examples::store::delivery_store& store, const std::string& id, bool to_current_endpoint) {
    action_result r;
    r.status = examples::cli::exit_bad_input;
    const auto found = store.find(id);
    const std::string shown = quoted(id);
    if (found.purged) {
        std::cerr << "webhook_deliver: delivery " << shown << " was purged: nothing to resend\n";
        return r;
    }
    if (!found.delivery) {
        std::cerr << "webhook_deliver: the store has no delivery " << shown << '\n';
        return r;
    }
    const auto& d = *found.delivery;
    if (d.status == keyhook::delivery_status::pending) {
        std::cerr << "webhook_deliver: delivery " << shown << " is pending (queued, not ended): nothing to resend\n";
        return r;
    }
    const auto hook = current_webhook(store, d.key());
    if (!hook) return r;
    if (hook->disabled) {
        std::cerr << "webhook_deliver: delivery " << shown << ": its " << webhook_text(d.key())
                  << " is disabled: " << enable_hint(d.key()) << '\n';
        return r;
    }
    if (endpoint_changed(d, *hook) && !to_current_endpoint) {
        std::cerr << "webhook_deliver: delivery " << shown << " was enqueued for "
                  << quoted(keyhook::redact_url(d.endpoint)) << "; its " << webhook_text(d.key()) << " now has "
                  << quoted(keyhook::redact_url(hook->endpoint))
                  << ": give --to-current-endpoint to send it to the current one\n";
        return r;
    }
    const auto endpoint = endpoint_changed(d, *hook) ? std::optional<std::string>(hook->endpoint) : std::nullopt;
    const auto queued = store.requeue({examples::store::requeue_item{d, endpoint}}, store_now(store));
    if (queued.empty()) {
        std::cerr << "webhook_deliver: delivery " << shown
                  << " was queued again meanwhile (by another action): nothing to resend\n";
        return r;
    }
    print_queued(d, hook->endpoint);
    r.status = examples::cli::exit_ok;
    return r;
}

// --recover: every delivery of the webhook created at or after `since` that
// gave up or was ended by its webhook's disabling, queued again. All or
// none is refused (disabled webhook, endpoint changed); a second recover
// queues only what ended since.
inline action_result recover(examples::store::delivery_store& store, const examples::store::webhook_key& key,
                             keyhook::timestamp since, bool to_current_endpoint) {
    action_result r;
    r.status = examples::cli::exit_bad_input;
    const auto hook = current_webhook(store, key);
    if (!hook) return r;
    if (hook->disabled) {
        std::cerr << "webhook_deliver: " << webhook_text(key) << " is disabled: " << enable_hint(key) << '\n';
        return r;
    }
    examples::store::delivery_filter filter;
    filter.statuses = {keyhook::delivery_status::gave_up, keyhook::delivery_status::disabled};
    filter.tenant = key.tenant;
    filter.webhook = key.name;
    filter.created_since = since;
    // First the refusal, for all or none: deliveries enqueued for another endpoint URL.
    std::size_t changed = 0;
    std::string first_changed;
    store.for_each(filter, [&](const examples::store::stored_delivery& d) {
        if (!endpoint_changed(d, *hook)) return;
        if (changed++ == 0) first_changed = to_string(d.id);
    });
    if (changed != 0 && !to_current_endpoint) {
        std::cerr << "webhook_deliver: " << changed << " of the deliveries to recover (" << first_changed
                  << (changed > 1 ? " and others" : "") << ") were enqueued for another endpoint URL than "
                  << webhook_text(key) << " has now (" << quoted(keyhook::redact_url(hook->endpoint))
                  << "): give --to-current-endpoint to send them to the current one; nothing was queued\n";
        return r;
    }
    const auto now = store_now(store);
    std::size_t seen = 0, queued = 0;
    std::vector<examples::store::requeue_item> batch;
    const auto flush = [&] {
        if (batch.empty()) return;
        const auto ids = store.requeue(batch, now);
        for (const auto& item : batch)
            if (std::find(ids.begin(), ids.end(), to_string(item.was.id)) != ids.end())
                print_queued(item.was, hook->endpoint);
        queued += ids.size();
        batch.clear();
    };
    store.for_each(filter, [&](const examples::store::stored_delivery& d) {
        ++seen;
        batch.push_back({d, endpoint_changed(d, *hook) ? std::optional<std::string>(hook->endpoint) : std::nullopt});
        if (batch.size() >= examples::store::read_batch) flush();
    });
    flush();
    std::cerr << "webhook_deliver: " << queued << " of " << seen << " ended deliveries of " << webhook_text(key)
              << " queued again";
    if (queued < seen) std::cerr << " (the others were queued meanwhile by another action)";
    std::cerr << '\n';
    r.status = examples::cli::exit_ok;
    return r;
}

// --enable: the webhook enabled again when it is disabled, its health
// cleared (H10), with an endpoint.enabled notice on standard output.
inline action_result enable(examples::store::delivery_store& store, const examples::store::webhook_key& key) {
    action_result r;
    keyhook::endpoint_state before;
    const auto outcome = store.enable_webhook(key, [&](const std::string& text) {
        before = keyhook::endpoint_state{};
        if (!text.empty()) {
            auto json = keyhook::try_parse_json(text);
            auto s = json ? keyhook::try_endpoint_state_from_json(*json)
                          : keyhook::result<keyhook::endpoint_state>(json.error());
            if (!s)
                throw std::runtime_error("the stored state of " + webhook_text(key) +
                                         " does not read back: " + s.error().what());
            before = *s;
        }
        return examples::store::endpoint_enabling{before.disabled,
                                                  nlohmann::json(keyhook::enable_endpoint(before)).dump()};
    });
    switch (outcome) {
        case examples::store::enable_outcome::unknown_webhook:
            std::cerr << "webhook_deliver: the store has no " << webhook_text(key) << '\n';
            r.status = examples::cli::exit_bad_input;
            break;
        case examples::store::enable_outcome::not_disabled:
            std::cerr << "webhook_deliver: " << webhook_text(key) << " is not disabled: nothing to enable\n";
            break;
        case examples::store::enable_outcome::enabled:
            print_notice(keyhook::endpoint_enabled_notice(before, key.name, store_now(store)), key.tenant);
            std::cerr << "webhook_deliver: " << webhook_text(key)
                      << " enabled; its ended deliveries are queued again by --recover or --resend\n";
            break;
    }
    return r;
}

// --purge-before T: the ended deliveries (of the tenant, of its webhook)
// that ended before T reduced to tombstones: state and history deleted, the
// id kept, so that enqueueing the same event again still adds nothing.
inline action_result purge(examples::store::delivery_store& store, const examples::store::delivery_filter& filter) {
    action_result r;
    const auto n = store.purge(filter);
    print_json_line(nlohmann::ordered_json{{"purged", n}});
    std::cerr << "webhook_deliver: " << n << " ended deliveries purged (their ids kept)\n";
    return r;
}

}  // namespace deliver
