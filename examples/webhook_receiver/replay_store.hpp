// webhook_receiver --store S: H9's replay table kept in a SQLite file or a
// PostgreSQL database (examples/shared/replay_ids.hpp; S is read and the
// store opened by examples/shared/store_opener.hpp), so that a restarted
// receiver, and every receiver of its replay scope sharing the store, answers
// an id accepted by any of them as a replay (rule B6). The scope
// (--replay-scope, default "default") is the receiver's: receivers of
// different endpoints or tenants on one store each name their own, so none
// takes another's ids for replays.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "keyhook/timestamps.hpp"
#include "replay.hpp"
#include "shared/delivery_store.hpp"
#include "shared/replay_ids.hpp"
#include "shared/store_opener.hpp"

namespace webhook_receiver {

// The replay scope when --replay-scope is not given.
inline constexpr const char* default_replay_scope = "default";

// --store's text read and the store opened in one step (store_opener.hpp):
// a form that is not a replay store's throws std::invalid_argument naming the
// accepted ones; store_not_built and std::runtime_error as open_replay_store.
inline std::unique_ptr<examples::store::replay_id_store> open_replay_store(
    const std::string& spec, const std::string& scope = default_replay_scope) {
    std::string why;
    const auto address = examples::store::parse_store_address(spec, examples::store::store_use::replay_ids, why);
    if (!address) throw std::invalid_argument(why);
    return examples::store::open_replay_store(*address, scope);
}

// The replay table on a store. One connection, one claim at a time: a
// SQLite connection is not shared between threads, and the store's own
// transaction is what makes a claim atomic across receivers anyway.
// A claim is pending for at most `pending_bound` (--pending-bound): past
// it, another receiver takes the id over (B6), so a receiver killed between
// its claim and its line delays the delivery by that much, never loses it.
class store_replay_table final : public replay_table {
public:
    store_replay_table(std::unique_ptr<examples::store::replay_id_store> store, std::chrono::seconds window,
                       std::chrono::microseconds pending_bound = default_pending_bound)
        : store_(std::move(store)), window_(window), pending_bound_(pending_bound) {}

    // B6 policy: long enough for any line to be written, short enough for a sender's retry.
    static constexpr std::chrono::microseconds default_pending_bound = std::chrono::seconds(30);

    // Told the outcome of each operation on the store (true: it answered),
    // for the receiver's health and metrics (O4). Set before serving.
    void set_observer(std::function<void(bool answered)> observe) { observe_ = std::move(observe); }

    // O4's probe: a claim and a release of an id no request can carry (a
    // header value holds no line feed), expired from the start. True when
    // the store answered both; nothing is left in it. Its claim prunes
    // expired ids, as any claim does.
    bool probe() {
        static const std::string id = "\nkeyhook health probe";
        std::lock_guard<std::mutex> lock(mutex_);
        const auto now = examples::store::micros(keyhook::to_timestamp(std::chrono::system_clock::now()));
        try {
            std::int64_t held_until = 0;
            if (store_->claim_replay_id(id, now, now, now + 1, examples::store::replay_prune_batch, held_until))
                store_->release_replay_id(id, now + 1);
            tell(true);
            return true;
        } catch (const std::exception& e) {
            std::cerr << "webhook_receiver: the replay store failed its health probe: " << e.what() << std::endl;
            tell(false);
            return false;
        }
    }

    using replay_table::claim;
    outcome claim(const std::string& id, keyhook::timestamp signed_at, keyhook::timestamp now,
                  std::chrono::seconds& retry_after) override {
        // As in memory: kept two windows past its signing time.
        const auto forget_after = later_by(signed_at, 2 * std::chrono::microseconds(window_));
        std::lock_guard<std::mutex> lock(mutex_);
        // The token: unique per claim of an id (a takeover comes later).
        auto token = examples::store::micros(now) + pending_bound_.count();
        if (const auto last = tokens_.find(id); last != tokens_.end() && last->second >= token)
            token = last->second + 1;
        try {
            std::int64_t held_until = 0;
            const bool claimed =
                store_->claim_replay_id(id, examples::store::micros(forget_after), examples::store::micros(now), token,
                                        examples::store::replay_prune_batch, held_until);
            tell(true);
            if (claimed) {
                tokens_[id] = token;
                return outcome::claimed;
            }
            if (held_until == 0) return outcome::replay;
            // Pending elsewhere: retry once it may be taken over (1 s at
            // least, the bound at most).
            const auto left = std::chrono::microseconds(held_until - examples::store::micros(now));
            const auto bound = std::chrono::ceil<std::chrono::seconds>(pending_bound_);
            retry_after = std::clamp(std::chrono::ceil<std::chrono::seconds>(left), std::chrono::seconds(1),
                                     std::max(bound, std::chrono::seconds(1)));
            return outcome::pending;
        } catch (const std::exception& e) {
            // The store's message names the table and the reason, never a password.
            std::cerr << "webhook_receiver: the replay store failed: " << e.what() << std::endl;
            tell(false);
            return outcome::unavailable;
        }
    }

    void accept(const std::string& id) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto token = take_token(id);
        try {
            store_->accept_replay_id(id, token);
            tell(true);
        } catch (const std::exception& e) {
            tell(false);
            // The line is written: the id stays pending until its bound, then a retry is processed again.
            std::cerr << "webhook_receiver: the replay store failed to mark an id accepted (a retry of it may "
                         "be processed again): "
                      << e.what() << std::endl;
        }
    }

    void release(const std::string& id) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto token = take_token(id);
        try {
            store_->release_replay_id(id, token);
            tell(true);
        } catch (const std::exception& e) {
            tell(false);
            std::cerr << "webhook_receiver: the replay store failed to give back an id (a retry of it is "
                         "answered 503 until its pending claim may be taken over): "
                      << e.what() << std::endl;
        }
    }

private:
    // t + d (d >= 0), the last instant a timestamp holds when that is later.
    static keyhook::timestamp later_by(keyhook::timestamp t, std::chrono::microseconds d) {
        return t > keyhook::max_timestamp - d ? keyhook::max_timestamp : t + d;
    }

    void tell(bool answered) {
        if (observe_) observe_(answered);
    }

    std::int64_t take_token(const std::string& id) {
        const auto at = tokens_.find(id);
        if (at == tokens_.end()) return 0;
        const auto token = at->second;
        tokens_.erase(at);
        return token;
    }

    std::unique_ptr<examples::store::replay_id_store> store_;
    std::chrono::seconds window_;
    std::chrono::microseconds pending_bound_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::int64_t> tokens_;  // the ids this receiver holds pending
    std::function<void(bool)> observe_;
};

}  // namespace webhook_receiver
