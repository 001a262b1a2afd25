// H9's replay table kept in a store (rule B6), for webhook_receiver --listen
// --store: the webhook-ids accepted within the tolerance window, shared by
// every receiver on the store and kept across restarts. The SQLite and
// PostgreSQL stores (sqlite_store.hpp, postgres_store.hpp) implement it.
//
// One table, created on first use (open_replay_ids):
//   keyhook_replay_ids  one row per (scope, webhook-id) claimed or accepted:
//                       the time after which it is forgotten, and
//                       pending_until: 0 once the id is accepted (its
//                       delivery written where the host reads it), else the
//                       time after which the pending claim may be taken over
//                       by another receiver (microseconds since 1970)
// The scope is the receiver's (webhook_receiver --replay-scope, default
// "default"): receivers of one endpoint share a scope and so process an id
// once between them; receivers of different endpoints or tenants on one
// store each take their own, so an id one of them accepted is never taken
// for a replay by another (B6: no tenant's input reaches another's rows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace examples::store {

class replay_id_store {
public:
    virtual ~replay_id_store() = default;

    // Creates the table and its index if the store has none; later claims
    // and releases are in `scope`.
    virtual void open_replay_ids(const std::string& scope) = 0;

    // In one transaction: forgets up to `prune_limit` ids whose time ran out
    // by `now`, then claims `id` in the scope, pending until `pending_until`
    // (which is also the claim's token for accept_replay_id and
    // release_replay_id), kept until `forget_after`. True when the id is new
    // here, its earlier record ran out, or its pending claim is older than its
    // bound (taken over): the caller processes the delivery. False when a live
    // record holds it; then `held_until` is 0 when the id was accepted (a
    // replay, in this receiver or any other of its scope on the store), else
    // the time its pending claim may be taken over. Two concurrent claims of
    // one id in one scope never both see true ((scope, id) is the table's key).
    virtual bool claim_replay_id(const std::string& id, std::int64_t forget_after, std::int64_t now,
                                 std::int64_t pending_until, std::size_t prune_limit, std::int64_t& held_until) = 0;

    // H9, B6: the claim `token` made is accepted: the delivery's line is
    // written. Nothing when the claim was taken over since.
    virtual void accept_replay_id(const std::string& id, std::int64_t token) = 0;

    // Forgets the pending claim `token` made (nothing when it was taken over
    // or accepted): a claimed delivery that could not be processed is given
    // back, so that the sender's retry is.
    virtual void release_replay_id(const std::string& id, std::int64_t token) = 0;
};

// SQL both stores run (?N placeholders, as in delivery_store.hpp).
namespace sql::replay {
inline constexpr const char* create_table =
    "CREATE TABLE IF NOT EXISTS keyhook_replay_ids (scope TEXT NOT NULL, id TEXT NOT NULL, "
    "forget_after BIGINT NOT NULL, pending_until BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (scope, id))";
inline constexpr const char* create_index =
    "CREATE INDEX IF NOT EXISTS keyhook_replay_ids_expiry ON keyhook_replay_ids (forget_after)";
// Bounded work per claim: the oldest expired ids, by the index. %s: " FOR
// UPDATE SKIP LOCKED" for PostgreSQL, so receivers pruning together do not
// wait on each other's rows.
inline constexpr const char* prune_format =
    "DELETE FROM keyhook_replay_ids WHERE (scope, id) IN (SELECT scope, id FROM keyhook_replay_ids "
    "WHERE forget_after < ?1 ORDER BY forget_after LIMIT ?2%s)";
// One statement decides: a new id is inserted, pending; an id whose record
// ran out, or whose pending claim is past its bound, is taken again; a live
// one is left as it is (no row changed: a replay, or pending elsewhere).
inline constexpr const char* claim =
    "INSERT INTO keyhook_replay_ids (scope, id, forget_after, pending_until) VALUES (?1, ?2, ?3, ?5) "
    "ON CONFLICT (scope, id) DO UPDATE "
    "SET forget_after = excluded.forget_after, pending_until = excluded.pending_until "
    "WHERE keyhook_replay_ids.forget_after < ?4 OR "
    "(keyhook_replay_ids.pending_until <> 0 AND keyhook_replay_ids.pending_until < ?4)";
inline constexpr const char* holder = "SELECT pending_until FROM keyhook_replay_ids WHERE scope = ?1 AND id = ?2";
inline constexpr const char* accept =
    "UPDATE keyhook_replay_ids SET pending_until = 0 WHERE scope = ?1 AND id = ?2 AND pending_until = ?3";
inline constexpr const char* release =
    "DELETE FROM keyhook_replay_ids WHERE scope = ?1 AND id = ?2 AND pending_until = ?3";
}  // namespace sql::replay

// Ids forgotten per claim, at most: more than one, so expired ids leave the
// table faster than claims add them.
inline constexpr std::size_t replay_prune_batch = 8;

}  // namespace examples::store
