// Where webhook_deliver keeps its deliveries (rule B6): the interface a store
// gives the worker, and open_delivery_store, which picks SQLite or PostgreSQL
// from the --store argument. Each backend is compiled in only when CMake found
// its library (KEYHOOK_EXAMPLES_HAVE_SQLITE, KEYHOOK_EXAMPLES_HAVE_LIBPQ).
//
// A webhook is named within its tenant: every row that belongs to a webhook
// is keyed by (tenant, webhook name), so one tenant's input never reads or
// changes another tenant's rows, whatever names they choose (B6). The tables,
// the same in both stores (schema version 2):
//   keyhook_schema      one row: the layout's version (schema_version). A
//                       store without it, but with keyhook tables, is of
//                       version 1 (keyed by webhook name alone) and is
//                       refused (check_schema)
//   keyhook_webhooks    one row per (tenant, webhook), shared by every
//                       worker: its settings as configured (JSON, secrets
//                       included: guard the store as the configuration file)
//                       and whether a 410 disabled it
//   keyhook_deliveries  one row per delivery id: the tenant and webhook it
//                       goes to, its state (delivery_state's JSON form), when
//                       it is due (null once it has ended), and the lease of
//                       the worker working it
//   keyhook_settings    name and value: "deliveryIdKey", the H12 key every
//                       producer enqueueing into the store uses (32 hex
//                       digits, a secret), so ids stay the same across runs
//                       (store-wide: an id covers the body, which names the
//                       tenant); "clockEpoch", the epoch of the workers'
//                       timeline (B6, --time-scale), and "clockScale", its
//                       scale, both kept by the first worker
//   keyhook_endpoints   one row per (tenant, webhook), shared by every worker:
//                       its keyhook::endpoint_state (H10's health and disabled
//                       flag, H11's throttle state) as JSON, and a version
//                       for compare-and-set
//   keyhook_replay_ids  H9's replay table (replay_ids.hpp), keyed by
//                       (receiver scope, webhook-id)
// Times are microseconds since 1970. Due times are on the workers' timeline
// (--time-scale: epoch + (real now - epoch) / scale, one epoch for the
// store); leases on the real clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "keyhook/delivery_state.hpp"
#include "keyhook/timestamps.hpp"

namespace examples::store {

// B6: a webhook as the store keys it, by its tenant and its name.
struct webhook_key {
    std::string tenant;
    std::string name;
    friend bool operator<(const webhook_key& a, const webhook_key& b) {
        return std::tie(a.tenant, a.name) < std::tie(b.tenant, b.name);
    }
    friend bool operator==(const webhook_key& a, const webhook_key& b) {
        return a.tenant == b.tenant && a.name == b.name;
    }
};

// A stored delivery: its state and the tenant of the webhook it goes to
// (the state's `webhook` names the webhook within that tenant).
struct stored_delivery : keyhook::delivery_state {
    std::string tenant;
    [[nodiscard]] webhook_key key() const { return webhook_key{tenant, webhook}; }
};

struct webhook_row {
    std::string settings;  // the webhook's JSON as configured
    bool disabled = false;
};

// A delivery the worker claimed: its state, and the row's text as read.
class delivery_store {
public:
    virtual ~delivery_store() = default;

    // In one transaction, all of `tenant`'s: each webhook's settings (name,
    // JSON; a newer configuration replaces the row's settings, its disabled
    // flag stays) and each delivery not already stored (by id: enqueueing
    // twice adds nothing). Returns how many deliveries were added.
    virtual std::size_t enqueue(const std::string& tenant,
                                const std::vector<std::pair<std::string, std::string>>& webhooks,
                                const std::vector<keyhook::delivery_state>& deliveries) = 0;

    virtual std::optional<webhook_row> webhook(const webhook_key& key) = 0;

    // The store's delivery id key (hex): `candidate` if the store had none
    // (the first writer wins), else the one it has.
    virtual std::string delivery_id_key(const std::string& candidate) = 0;

    // B6: the epoch of the workers' timeline: `candidate` if the store had
    // none (the first writer wins), else the one it has.
    virtual std::int64_t clock_epoch(std::int64_t candidate) = 0;

    // B6: the time scale of the workers' timeline: `candidate` if the store
    // had none (the first worker's), else the one it has ("clockScale"). A
    // worker started at another scale is refused: one timeline per store.
    virtual double clock_scale(double candidate) = 0;

    // Deliveries not yet ended, leased or not.
    virtual std::uint64_t pending() = 0;

    // The earliest due time of a delivery no live lease holds (real_now).
    virtual std::optional<std::int64_t> next_due(std::int64_t real_now) = 0;

    // Claims up to `limit` deliveries due by `due_by`, the earliest first,
    // that no live lease holds, leasing them to `owner` until `lease_until`.
    virtual std::vector<stored_delivery> claim(std::int64_t due_by, std::int64_t real_now, std::int64_t lease_until,
                                               const std::string& owner, std::size_t limit) = 0;

    // B6, before each attempt: extends the lease of delivery `id` to at least
    // `lease_until` when `owner` still holds it (its lease and not ended),
    // and returns true; false, and nothing written, when another worker has
    // claimed it since, or it has ended.
    virtual bool renew(const std::string& id, const std::string& owner, std::int64_t lease_until) = 0;

    // In one transaction: the delivery's new state and due time (its lease
    // released), and its webhook (of its tenant) disabled when
    // `disable_webhook`. False, and nothing written, when `owner` no longer
    // holds the delivery's lease.
    virtual bool record(const stored_delivery& s, const std::string& owner, bool disable_webhook) = 0;

    // H10, H11: a webhook's endpoint_state row (JSON) and its version; version
    // 0 and empty JSON when it has none yet.
    struct endpoint_row {
        std::string state;
        std::int64_t version = 0;
    };
    virtual endpoint_row endpoint(const webhook_key& key) = 0;
    // Compare-and-set: writes `state` when the row is still at `version` (0:
    // no row yet) and returns true; false, and nothing written, when another
    // worker changed it since it was read.
    virtual bool put_endpoint(const webhook_key& key, const std::string& state, std::int64_t version) = 0;

    // Every delivery's state in id order, read in batches.
    virtual void for_each(const std::function<void(const stored_delivery&)>& f) = 0;
};

inline std::int64_t micros(keyhook::timestamp t) { return t.time_since_epoch().count(); }
inline keyhook::timestamp from_micros(std::int64_t us) { return keyhook::timestamp{std::chrono::microseconds{us}}; }

// The delivery a row holds; a row that does not read back, or whose state
// names another webhook than its row, is a store fault.
inline stored_delivery state_of_row(const std::string& text, std::string tenant, const std::string& webhook) {
    auto s = keyhook::try_parse_delivery_state(text);
    if (!s) throw std::runtime_error("a stored delivery does not read back: " + s.error().what());
    if (s->webhook != webhook) throw std::runtime_error("a stored delivery's state names another webhook than its row");
    stored_delivery d;
    static_cast<keyhook::delivery_state&>(d) = std::move(*s);
    d.tenant = std::move(tenant);
    return d;
}

// B6: the store's layout. Version 1 (keyhook before the tenant keys) had no
// keyhook_schema table and keyed webhooks, their health and throttle by
// webhook name alone; it is refused, not migrated: its rows do not say which
// tenant they belong to (two tenants' webhooks of one name may already share
// one row). `found`: the version the store's keyhook_schema holds, none when
// it has no such table; `has_old_tables`: a keyhook table exists without it.
inline constexpr std::int64_t schema_version = 2;

struct schema_mismatch : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void check_schema(std::optional<std::int64_t> found, bool has_old_tables) {
    const std::string expected = std::to_string(schema_version);
    if (!found && has_old_tables)
        throw schema_mismatch(
            "the store has schema version 1 (keyhook tables without keyhook_schema: webhooks keyed by name "
            "alone); this program needs schema version " +
            expected +
            " (keyed by tenant and webhook name). A version 1 store is not migrated: its rows do not say which "
            "tenant they belong to. Finish its deliveries with the program that wrote it (webhook_deliver --work "
            "--until-empty), then give this program a new store");
    if (found && *found != schema_version)
        throw schema_mismatch("the store has schema version " + std::to_string(*found) +
                              "; this program needs schema version " + expected +
                              (*found > schema_version ? " (the store was written by a newer keyhook)" : ""));
}

// SQL both stores run. Placeholders are written ?N and turned into $N for PostgreSQL.
namespace sql {
// B6: the layout's version, one row, written when the tables are created.
inline constexpr const char* create_schema = "CREATE TABLE keyhook_schema (version BIGINT NOT NULL)";
inline constexpr const char* insert_schema = "INSERT INTO keyhook_schema (version) VALUES (?1)";
inline constexpr const char* select_schema = "SELECT MAX(version) FROM keyhook_schema";
// Every table some version of keyhook made: one of them without keyhook_schema is version 1.
inline constexpr const char* known_tables[] = {"keyhook_webhooks", "keyhook_deliveries", "keyhook_settings",
                                               "keyhook_endpoints", "keyhook_replay_ids"};
inline constexpr const char* create_webhooks =
    "CREATE TABLE IF NOT EXISTS keyhook_webhooks (tenant TEXT NOT NULL, name TEXT NOT NULL, "
    "settings TEXT NOT NULL, disabled INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tenant, name))";
inline constexpr const char* create_deliveries =
    "CREATE TABLE IF NOT EXISTS keyhook_deliveries (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
    "webhook TEXT NOT NULL, due_at BIGINT, lease_owner TEXT, lease_until BIGINT NOT NULL DEFAULT 0, "
    "state TEXT NOT NULL)";
inline constexpr const char* create_settings =
    "CREATE TABLE IF NOT EXISTS keyhook_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)";
inline constexpr const char* insert_setting =
    "INSERT INTO keyhook_settings (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING";
inline constexpr const char* select_setting = "SELECT value FROM keyhook_settings WHERE name = ?1";
inline constexpr const char* create_due_index =
    "CREATE INDEX IF NOT EXISTS keyhook_deliveries_due ON keyhook_deliveries (due_at) WHERE due_at IS NOT NULL";
inline constexpr const char* upsert_webhook =
    "INSERT INTO keyhook_webhooks (tenant, name, settings) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (tenant, name) DO UPDATE SET settings = excluded.settings";
inline constexpr const char* insert_delivery =
    "INSERT INTO keyhook_deliveries (id, tenant, webhook, due_at, state) VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT (id) DO NOTHING";
inline constexpr const char* select_webhook =
    "SELECT settings, disabled FROM keyhook_webhooks WHERE tenant = ?1 AND name = ?2";
inline constexpr const char* count_pending = "SELECT COUNT(*) FROM keyhook_deliveries WHERE due_at IS NOT NULL";
inline constexpr const char* next_due =
    "SELECT MIN(due_at) FROM keyhook_deliveries WHERE due_at IS NOT NULL AND lease_until < ?1";
// %s: PostgreSQL's row locks (" FOR UPDATE SKIP LOCKED"), nothing for SQLite,
// whose write transaction already excludes every other writer.
inline constexpr const char* claim_format =
    "UPDATE keyhook_deliveries SET lease_owner = ?1, lease_until = ?2 WHERE id IN ("
    "SELECT id FROM keyhook_deliveries WHERE due_at IS NOT NULL AND due_at <= ?3 AND lease_until < ?4 "
    "ORDER BY due_at LIMIT ?5%s) RETURNING state, tenant, webhook";
inline constexpr const char* renew =
    "UPDATE keyhook_deliveries SET lease_until = CASE WHEN lease_until < ?3 THEN ?3 ELSE lease_until END "
    "WHERE id = ?1 AND lease_owner = ?2 AND due_at IS NOT NULL";
inline constexpr const char* record =
    "UPDATE keyhook_deliveries SET state = ?3, due_at = ?4, lease_owner = NULL, lease_until = 0 "
    "WHERE id = ?1 AND lease_owner = ?2";
inline constexpr const char* disable_webhook =
    "UPDATE keyhook_webhooks SET disabled = 1 WHERE tenant = ?1 AND name = ?2";
// H10, H11: keyhook_endpoints.
inline constexpr const char* create_endpoints =
    "CREATE TABLE IF NOT EXISTS keyhook_endpoints (tenant TEXT NOT NULL, name TEXT NOT NULL, "
    "state TEXT NOT NULL, version BIGINT NOT NULL, PRIMARY KEY (tenant, name))";
inline constexpr const char* select_endpoint =
    "SELECT state, version FROM keyhook_endpoints WHERE tenant = ?1 AND name = ?2";
inline constexpr const char* insert_endpoint =
    "INSERT INTO keyhook_endpoints (tenant, name, state, version) VALUES (?1, ?2, ?3, 1) "
    "ON CONFLICT (tenant, name) DO NOTHING";
inline constexpr const char* update_endpoint =
    "UPDATE keyhook_endpoints SET state = ?3, version = version + 1 WHERE tenant = ?1 AND name = ?2 "
    "AND version = ?4";
inline constexpr const char* page =
    "SELECT id, state, tenant, webhook FROM keyhook_deliveries WHERE id > ?1 ORDER BY id LIMIT ?2";
}  // namespace sql

inline constexpr std::size_t read_batch = 256;

}  // namespace examples::store
