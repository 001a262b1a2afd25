// webhook_receiver --store S: H9's replay table kept in a SQLite file or a
// PostgreSQL database (examples/shared/replay_ids.hpp), so that a restarted
// receiver, and every receiver of its replay scope sharing the store, answers
// an id accepted by any of them as a replay (rule B6). The scope
// (--replay-scope, default "default") is the receiver's: receivers of
// different endpoints or tenants on one store each name their own, so none
// takes another's ids for replays. Each backend is compiled in only when
// CMake found its library.
#pragma once

#include <chrono>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "keyhook/timestamps.hpp"
#include "replay.hpp"
#include "shared/delivery_store.hpp"
#include "shared/replay_ids.hpp"
#if KEYHOOK_EXAMPLES_HAVE_SQLITE
#include "shared/sqlite_store.hpp"
#endif
#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
#include "shared/postgres_store.hpp"
#endif

namespace webhook_receiver {

// A --store this build cannot open: it was made without the library.
struct store_not_built : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The replay scope when --replay-scope is not given.
inline constexpr const char* default_replay_scope = "default";

// "sqlite:PATH" or a "postgresql://" / "postgres://" URI (libpq's). Throws
// store_not_built saying what is missing, std::runtime_error when the store
// cannot be opened (libpq's message names no password) or has another schema
// version (B6, delivery_store.hpp).
inline std::unique_ptr<examples::store::replay_id_store> open_replay_store(
    const std::string& spec, const std::string& scope = default_replay_scope) {
    std::unique_ptr<examples::store::replay_id_store> store;
    if (spec.rfind("postgresql://", 0) == 0 || spec.rfind("postgres://", 0) == 0) {
#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
        store = std::make_unique<examples::store::postgres_store>(spec);
#else
        throw store_not_built(
            "--store postgresql://... needs libpq, which this build was made without (Debian libpq-dev, then "
            "configure again)");
#endif
    } else if (spec.rfind("sqlite:", 0) == 0) {
        if (spec.size() == 7) throw std::runtime_error("--store sqlite:PATH needs a path");
#if KEYHOOK_EXAMPLES_HAVE_SQLITE
        store = std::make_unique<examples::store::sqlite_store>(spec.substr(7));
#else
        throw store_not_built(
            "--store sqlite:PATH needs SQLite, which this build was made without (Debian libsqlite3-dev, then "
            "configure again)");
#endif
    } else {
        throw std::runtime_error("--store: expected sqlite:PATH or postgresql://...");
    }
    store->open_replay_ids(scope);
    return store;
}

// The replay table on a store. One connection, one claim at a time: a
// SQLite connection is not shared between threads, and the store's own
// transaction is what makes a claim atomic across receivers anyway.
class store_replay_table final : public replay_table {
public:
    store_replay_table(std::unique_ptr<examples::store::replay_id_store> store, std::chrono::seconds window)
        : store_(std::move(store)), window_(window) {}

    outcome claim(const std::string& id, keyhook::timestamp signed_at, keyhook::timestamp now) override {
        // As in memory: kept two windows past its signing time.
        const auto forget_after =
            keyhook::detail::add_saturating(keyhook::detail::add_saturating(signed_at, window_), window_);
        std::lock_guard<std::mutex> lock(mutex_);
        try {
            return store_->claim_replay_id(id, examples::store::micros(forget_after), examples::store::micros(now),
                                           examples::store::replay_prune_batch)
                       ? outcome::accepted
                       : outcome::replay;
        } catch (const std::exception& e) {
            // The store's message names the table and the reason, never a password.
            std::cerr << "webhook_receiver: the replay store failed: " << e.what() << std::endl;
            return outcome::unavailable;
        }
    }

    void release(const std::string& id) override {
        std::lock_guard<std::mutex> lock(mutex_);
        try {
            store_->release_replay_id(id);
        } catch (const std::exception& e) {
            std::cerr << "webhook_receiver: the replay store failed to give back an id (a retry of it will be "
                         "taken for a replay): "
                      << e.what() << std::endl;
        }
    }

private:
    std::unique_ptr<examples::store::replay_id_store> store_;
    std::chrono::seconds window_;
    std::mutex mutex_;
};

}  // namespace webhook_receiver
