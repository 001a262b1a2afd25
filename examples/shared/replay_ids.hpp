// H9's replay table kept in a store (rule B6), for webhook_receiver --listen
// --store: the webhook-ids accepted within the tolerance window, shared by
// every receiver on the store and kept across restarts. The SQLite and
// PostgreSQL stores (sqlite_store.hpp, postgres_store.hpp) implement it.
//
// One table, created on first use (open_replay_ids):
//   keyhook_replay_ids  one row per accepted webhook-id and the time after
//                       which it is forgotten (microseconds since 1970)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace examples::store {

class replay_id_store {
public:
    virtual ~replay_id_store() = default;

    // Creates the table and its index if the store has none.
    virtual void open_replay_ids() = 0;

    // In one transaction: forgets up to `prune_limit` ids whose time ran out
    // by `now`, then records `id` until `forget_after`. True when the id is
    // new here (or its earlier record had run out): the caller processes the
    // delivery. False when a live record holds it: a replay, in this
    // receiver or any other on the store. Two concurrent claims of one id
    // never both see true (the id is the table's key).
    virtual bool claim_replay_id(const std::string& id, std::int64_t forget_after, std::int64_t now,
                                 std::size_t prune_limit) = 0;

    // Forgets `id` (nothing when it is not there): a claimed delivery that
    // could not be processed is given back, so that the sender's retry is.
    virtual void release_replay_id(const std::string& id) = 0;
};

// SQL both stores run (?N placeholders, as in delivery_store.hpp).
namespace sql::replay {
inline constexpr const char* create_table =
    "CREATE TABLE IF NOT EXISTS keyhook_replay_ids (id TEXT PRIMARY KEY, forget_after BIGINT NOT NULL)";
inline constexpr const char* create_index =
    "CREATE INDEX IF NOT EXISTS keyhook_replay_ids_expiry ON keyhook_replay_ids (forget_after)";
// Bounded work per claim: the oldest expired ids, by the index. %s: " FOR
// UPDATE SKIP LOCKED" for PostgreSQL, so receivers pruning together do not
// wait on each other's rows.
inline constexpr const char* prune_format =
    "DELETE FROM keyhook_replay_ids WHERE id IN (SELECT id FROM keyhook_replay_ids WHERE forget_after < ?1 "
    "ORDER BY forget_after LIMIT ?2%s)";
// One statement decides: a new id is inserted; an id whose record ran out is
// taken again; a live one is left as it is (no row changed: a replay).
inline constexpr const char* claim =
    "INSERT INTO keyhook_replay_ids (id, forget_after) VALUES (?1, ?2) ON CONFLICT (id) DO UPDATE SET "
    "forget_after = excluded.forget_after WHERE keyhook_replay_ids.forget_after < ?3";
inline constexpr const char* release = "DELETE FROM keyhook_replay_ids WHERE id = ?1";
}  // namespace sql::replay

// Ids forgotten per claim, at most: more than one, so expired ids leave the
// table faster than claims add them.
inline constexpr std::size_t replay_prune_batch = 8;

}  // namespace examples::store
