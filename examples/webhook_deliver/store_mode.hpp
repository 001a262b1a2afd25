// webhook_deliver with --store (rule B6): enqueue a file's deliveries, work
// the store's due deliveries, list them. The store keeps each delivery's
// webhook name, body and history, and each webhook's settings; an attempt is
// signed with the webhook's keys as stored at that moment.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "attempt.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/delivery_state.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/webhook_json.hpp"
#include "keyhook/webhook_validation.hpp"
#include "shared/delivery_store.hpp"
#if KEYHOOK_EXAMPLES_HAVE_SQLITE
#include "shared/sqlite_store.hpp"
#endif
#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
#include "shared/postgres_store.hpp"
#endif

namespace deliver {

// A --store that this build cannot open: it was made without the library.
struct store_not_built : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// --store's argument: "sqlite:PATH" or a plain path (SQLite), or a
// "postgresql://" / "postgres://" URI. Throws store_not_built saying what is
// missing when this build lacks the library, std::runtime_error when the
// store cannot be opened.
inline std::unique_ptr<examples::store::delivery_store> open_store(const std::string& spec) {
    const bool postgres = spec.rfind("postgresql://", 0) == 0 || spec.rfind("postgres://", 0) == 0;
#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
    if (postgres) return std::make_unique<examples::store::postgres_store>(spec);
#else
    if (postgres)
        throw store_not_built(
            "--store postgresql://... needs libpq, which this build was made without (Debian libpq-dev, then "
            "configure again)");
#endif
    const std::string path = spec.rfind("sqlite:", 0) == 0 ? spec.substr(7) : spec;
    if (path.empty()) throw std::runtime_error("--store sqlite:PATH needs a path");
#if KEYHOOK_EXAMPLES_HAVE_SQLITE
    return std::make_unique<examples::store::sqlite_store>(path);
#else
    throw store_not_built(
        "--store sqlite:PATH needs SQLite, which this build was made without (Debian libsqlite3-dev, then "
        "configure again)");
#endif
}

// Each webhook's JSON as configured, by name, from the input document
// (already read and validated by parse_dispatch_input).
inline std::vector<std::pair<std::string, std::string>> webhook_settings_of(const std::string& text) {
    std::vector<std::pair<std::string, std::string>> out;
    const auto document = keyhook::parse_json(text);
    for (const auto& w : document.at("webhooks")) out.emplace_back(w.at("name").get<std::string>(), w.dump());
    return out;
}

// H12's key for the ids of what is enqueued: KEYHOOK_DELIVERY_ID_KEY (32 hex
// digits) when set, which every producer of the host must share; else the
// store's own, made at random by the first enqueue and kept in the store, so
// that enqueueing a file again finds the same ids. Errors say what is wrong,
// never the key.
inline keyhook::result<keyhook::delivery_id_key> delivery_id_key_for(examples::store::delivery_store& store) {
    if (const char* env = std::getenv("KEYHOOK_DELIVERY_ID_KEY")) {
        auto key = keyhook::delivery_id_key::try_from_hex(env);
        if (!key) return keyhook::error{key.error().code, "KEYHOOK_DELIVERY_ID_KEY", key.error().message};
        return key;
    }
    unsigned char random[keyhook::delivery_id_key::size];
    keyhook::crypto::openssl_random{}(random, sizeof random);
    static constexpr char hex[] = "0123456789abcdef";
    std::string candidate;
    for (const unsigned char c : random) {
        candidate += hex[c >> 4];
        candidate += hex[c & 15];
    }
    keyhook::detail::secure_wipe(random, sizeof random);
    auto key = keyhook::delivery_id_key::try_from_hex(store.delivery_id_key(candidate));
    if (!key) return keyhook::error{key.error().code, "keyhook_settings.deliveryIdKey", key.error().message};
    return key;
}

struct work_options {
    bool until_empty = false;
    std::chrono::microseconds lease = std::chrono::seconds(30);  // B6 policy
    std::size_t batch = 64;
    keyhook::endpoint_policy policy;
};

inline std::int64_t real_micros() { return examples::store::micros(clock_now()); }

// A name no other worker has: the process id and 64 random bits.
inline std::string worker_name() {
    unsigned char r[8];
    keyhook::crypto::openssl_random{}(r, sizeof r);
    std::string name = "worker-" + std::to_string(static_cast<long long>(::getpid())) + "-";
    static constexpr char hex[] = "0123456789abcdef";
    for (const unsigned char c : r) {
        name += hex[c >> 4];
        name += hex[c & 15];
    }
    return name;
}

// Works the store: claims due deliveries in batches (memory follows the batch,
// not the store), attempts each, records each outcome with the next due time
// in one transaction. Returns when nothing is pending (until_empty) or never.
inline void work_store(examples::store::delivery_store& store, const work_options& o,
                       const examples::http::client_options& client, run_clock& clock) {
    const std::string owner = worker_name();
    const auto lease = o.lease.count();
    // Idle polls: short against the lease, so a stopped worker's deliveries are taken over soon after it ends.
    const auto poll = std::chrono::microseconds(std::clamp<std::int64_t>(lease / 8, 1000, 200000));
    for (;;) {
        const auto claimed_at = real_micros();
        auto batch = store.claim(examples::store::micros(clock.now()), claimed_at, claimed_at + lease, owner, o.batch);
        if (batch.empty()) {
            if (const auto due = store.next_due(real_micros())) {
                clock.wait_toward(examples::store::from_micros(*due), std::chrono::seconds(1));
                continue;
            }
            if (o.until_empty && store.pending() == 0) return;
            std::this_thread::sleep_for(poll);  // the rest is leased by other workers, or nothing is due yet
            continue;
        }
        // Settings read once a batch: a configuration stored meanwhile (a new key) applies from the next.
        std::map<std::string, std::optional<std::pair<keyhook::validated_webhook, bool>>> webhooks;
        auto renewed_at = claimed_at;
        for (auto& d : batch) {
            if (real_micros() - renewed_at > lease / 2) {
                renewed_at = real_micros();
                store.renew(owner, renewed_at + lease);
            }
            auto found = webhooks.find(d.webhook);
            if (found == webhooks.end()) {
                std::optional<std::pair<keyhook::validated_webhook, bool>> entry;
                if (const auto row = store.webhook(d.webhook)) {
                    auto json = keyhook::try_parse_json(row->settings);
                    auto shape =
                        json ? keyhook::try_webhook_from_json(*json) : keyhook::result<keyhook::webhook>(json.error());
                    auto valid = shape ? keyhook::try_validate_webhook(*shape, o.policy)
                                       : keyhook::result<keyhook::validated_webhook>(shape.error());
                    if (valid)
                        entry.emplace(std::move(*valid), row->disabled);
                    else
                        std::cerr << "webhook_deliver: the stored settings of webhook "
                                  << keyhook::detail::quote_input(d.webhook) << ": " << valid.error() << '\n';
                }
                found = webhooks.emplace(d.webhook, std::move(entry)).first;
            }
            if (!found->second || found->second->second) {
                // Disabled (410) or no usable settings: the delivery ends without an attempt.
                d.status = keyhook::delivery_status::disabled;
                d.next_due.reset();
                store.record(d, owner, false);
                continue;
            }
            clock.wait_until(*d.next_due);
            // The signature's timestamp is real time: the receiver checks it against its clock.
            const auto request = keyhook::crypto::try_sign_delivery(found->second->first, d.id, d.body, clock_now());
            const auto report = attempt(request, d.attempts, client, clock);
            const auto decision = decided(report);
            keyhook::record_attempt(d, report.attempt, decision);
            const bool disable = decision.what == keyhook::retry_decision::action::disable_webhook;
            if (!store.record(d, owner, disable)) {
                std::cerr << "webhook_deliver: " << d.id << ": the lease ran out during the attempt; "
                          << "another worker has the delivery\n";
                continue;
            }
            if (disable) found->second->second = true;
            print_attempt(d.id, d.webhook, d.attempts.size(), report);
        }
    }
}

// One JSON line per stored delivery (delivery_state's JSON form without the body).
inline void list_store(examples::store::delivery_store& store) {
    store.for_each([](const keyhook::delivery_state& d) {
        nlohmann::json j = d;
        j.erase("body");
        std::cout << j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) << '\n';
    });
    std::cout.flush();
}

}  // namespace deliver
