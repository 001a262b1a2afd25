// Where webhook_deliver keeps its deliveries (rule B6): the interface a store
// gives the worker and the operator's actions (O5), and open_delivery_store,
// which picks SQLite or PostgreSQL from the --store argument. Each backend is
// compiled in only when CMake found its library (KEYHOOK_EXAMPLES_HAVE_SQLITE,
// KEYHOOK_EXAMPLES_HAVE_LIBPQ).
//
// A webhook is named within its tenant: every row that belongs to a webhook
// is keyed by (tenant, webhook name), so one tenant's input never reads or
// changes another tenant's rows, whatever names they choose (B6). The tables,
// the same in both stores (schema version 3):
//   keyhook_schema      one row: the layout's version (schema_version). A
//                       store without it, but with keyhook tables, is of
//                       version 1 (keyed by webhook name alone) and is
//                       refused (check_schema); one of version 2 is
//                       migrated to 3 when it is opened
//   keyhook_webhooks    one row per (tenant, webhook), shared by every
//                       worker: its settings as configured (JSON, secrets
//                       included: guard the store as the configuration file)
//                       and whether a 410 disabled it
//   keyhook_deliveries  one row per delivery id: the tenant and webhook it
//                       goes to, its state (delivery_state's JSON form: the
//                       current attempt sequence), when it is due (null once
//                       it has ended), the lease of the worker working it;
//                       since version 3 also its status as a column (what
//                       the operator's actions select on), its attempt
//                       sequence (1, one more each time it is queued again),
//                       when it was created and when it ended (the workers'
//                       timeline), and the endpoint URL it was enqueued for.
//                       A purged delivery stays as a tombstone: status
//                       "purged", its id, tenant, webhook and times, no state
//                       (enqueueing its event again adds nothing)
//   keyhook_attempts    (version 3) one row per attempt of every sequence of
//                       a delivery: when, the HTTP status or transport
//                       outcome, its duration, the transport error's text and
//                       the response body's first 1 KiB (secrets replaced,
//                       escaped), and what followed (retry, delivered, ...)
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
// Times are microseconds since 1970. Due, creation and end times are on the
// workers' timeline (--time-scale: epoch + (real now - epoch) / scale, one
// epoch for the store); leases on the real clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

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

// A stored delivery: its state (the current attempt sequence) and the tenant
// of the webhook it goes to (the state's `webhook` names the webhook within
// that tenant), with what the store keeps beside it (O5).
struct stored_delivery : keyhook::delivery_state {
    std::string tenant;
    std::int64_t sequence = 1;                   // the attempt sequence: 1, then one more each time it is queued again
    keyhook::timestamp created_at{};             // when it was enqueued (the workers' timeline)
    std::optional<keyhook::timestamp> ended_at;  // when it ended; none while pending
    std::string endpoint;                        // the webhook's endpoint URL it was enqueued for ("": not known)
    [[nodiscard]] webhook_key key() const { return webhook_key{tenant, webhook}; }
};

// A webhook of an enqueue: its name, its settings as the store keeps them
// (JSON), and its endpoint URL, which its new deliveries remember (O5).
struct webhook_config {
    std::string name;
    std::string settings;
    std::string endpoint;
};

struct webhook_row {
    std::string settings;  // the webhook's JSON as configured
    bool disabled = false;
};

// What the history keeps of an attempt beyond its delivery_attempt (O5).
// The texts are stored as given: the worker replaces the webhook's secrets
// in them and escapes them (P1) first.
struct attempt_detail {
    std::chrono::microseconds duration{0};
    std::string error;          // what failed in transport; "" when an answer came
    std::string response;       // the response body's first 1 KiB
    bool response_cut = false;  // the body was longer
    std::string result;         // what followed: "retry", "delivered", "gave_up" or "disabled"
};

// One attempt of a delivery as its history lists it.
struct attempt_record {
    std::int64_t sequence = 1;
    std::int64_t number = 1;  // within its sequence, from 1
    keyhook::delivery_attempt attempt;
    std::optional<attempt_detail> detail;  // none for attempts a version 2 store recorded
};

// A Retry-After as the history's column holds it: whole seconds ("120") or
// an instant (T4).
inline std::optional<std::string> retry_after_text(const std::optional<keyhook::retry_after>& r) {
    if (!r) return std::nullopt;
    return r->is_delay() ? std::to_string(r->delay_value().count()) : keyhook::format_timestamp(r->time_value());
}
inline std::optional<keyhook::retry_after> retry_after_of(const std::string& text) {
    if (text.empty()) return std::nullopt;
    if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return keyhook::retry_after::delay(std::chrono::seconds(std::stoll(text)));
    if (auto t = keyhook::try_parse_timestamp(text)) return keyhook::retry_after::at(*t);
    return std::nullopt;
}

// Which deliveries an action or a listing takes (O5): every field left empty
// takes all.
struct delivery_filter {
    std::vector<keyhook::delivery_status> statuses;
    std::optional<std::string> tenant;
    std::optional<std::string> webhook;  // with tenant
    std::optional<keyhook::timestamp> created_since;
    std::optional<keyhook::timestamp> ended_before;
};

// One delivery by id: its row, or that it was purged (a tombstone).
struct found_delivery {
    std::optional<stored_delivery> delivery;
    bool purged = false;
};

// A delivery to queue again (O5): the ended state it was read in, and the
// endpoint URL it is now queued for when the operator sent it to the
// webhook's current one (--to-current-endpoint).
struct requeue_item {
    stored_delivery was;
    std::optional<std::string> endpoint;
};

// What enabling a webhook found (O5).
enum class enable_outcome { enabled, not_disabled, unknown_webhook };

// For enable_webhook: whether the endpoint state (its JSON, "" when the
// webhook has none) says disabled, and the state to store when it is enabled.
struct endpoint_enabling {
    bool disabled = false;
    std::string enabled_state;
};

// The workers' timeline as a store keeps it, once a worker has run.
struct kept_timeline {
    std::int64_t epoch = 0;
    double scale = 1.0;
};

class delivery_store {
public:
    virtual ~delivery_store() = default;

    // In one transaction, all of `tenant`'s: each webhook's settings (a newer
    // configuration replaces the row's settings, its disabled flag stays) and
    // each delivery not already stored (by id: enqueueing twice adds nothing,
    // and neither does enqueueing a purged delivery's event), created at
    // `created_at`, remembering its webhook's endpoint of `webhooks` (""
    // when its webhook is not among them). Returns how many were added.
    virtual std::size_t enqueue(const std::string& tenant, const std::vector<webhook_config>& webhooks,
                                const std::vector<keyhook::delivery_state>& deliveries,
                                keyhook::timestamp created_at = {}) = 0;

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

    // The epoch and scale the store keeps, read only (the operator's actions
    // use the workers' timeline without fixing one); none before a worker ran.
    virtual std::optional<kept_timeline> timeline() = 0;

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

    // In one transaction: the delivery's new state, status and due time (its
    // lease released; when it ended, its end time: s.ended_at, else its last
    // attempt's time), the attempt `made` to its history when one was made
    // (the state's last attempt, numbered in s.sequence), and its webhook (of
    // its tenant) disabled when `disable_webhook`. False, and nothing
    // written, when `owner` no longer holds the delivery's lease.
    virtual bool record(const stored_delivery& s, const std::string& owner, bool disable_webhook,
                        const attempt_detail* made = nullptr) = 0;

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

    // The deliveries `filter` takes, in id order, read in batches (purged
    // ones never). ended_before is not a listing's filter and is ignored.
    virtual void for_each(const delivery_filter& filter, const std::function<void(const stored_delivery&)>& f) = 0;
    void for_each(const std::function<void(const stored_delivery&)>& f) { for_each(delivery_filter{}, f); }

    // O5: one delivery by id, or that it was purged, or neither.
    virtual found_delivery find(const std::string& id) = 0;

    // O5: every attempt of every sequence of delivery `id`, in order.
    virtual std::vector<attempt_record> history(const std::string& id) = 0;

    // O5: in one transaction, each delivery of `items` that is still in the
    // ended status and sequence it was read in (a conditional UPDATE) is
    // queued again: pending, due at `due`, its sequence one more, its state's
    // attempts emptied (its history kept), its endpoint the item's when
    // given. Returns the ids queued: repeating or racing it queues each
    // delivery at most once per time it ended.
    virtual std::vector<std::string> requeue(const std::vector<requeue_item>& items, keyhook::timestamp due) = 0;

    // O5: in one transaction, enables the webhook again when it is disabled
    // (its settings row's flag, or its endpoint state as `read` reads it):
    // clears the flag and stores read(state).enabled_state, both only while
    // they still say disabled, so racing enables enable once.
    virtual enable_outcome enable_webhook(const webhook_key& key,
                                          const std::function<endpoint_enabling(const std::string&)>& read) = 0;

    // O5: in one transaction, every ended delivery (delivered, gave up,
    // disabled) that `filter` takes (its tenant, webhook and ended_before;
    // without ended_before none) becomes a tombstone: its state and history
    // deleted, its id kept. Returns how many.
    virtual std::size_t purge(const delivery_filter& filter) = 0;
};

inline std::int64_t micros(keyhook::timestamp t) { return t.time_since_epoch().count(); }
inline keyhook::timestamp from_micros(std::int64_t us) { return keyhook::timestamp{std::chrono::microseconds{us}}; }

// The status column's text (keyhook's names for delivery_status).
inline std::string status_text(keyhook::delivery_status s) {
    switch (s) {
        case keyhook::delivery_status::pending: return "pending";
        case keyhook::delivery_status::delivered: return "delivered";
        case keyhook::delivery_status::gave_up: return "gave_up";
        case keyhook::delivery_status::disabled: return "disabled";
    }
    return "pending";
}
inline constexpr const char* purged_status = "purged";

// When a delivery that has ended ended: as recorded, else its last attempt's
// time, else its creation (one that ended without an attempt).
inline std::optional<keyhook::timestamp> end_time(const stored_delivery& d) {
    if (d.status == keyhook::delivery_status::pending) return std::nullopt;
    if (d.ended_at) return d.ended_at;
    if (!d.attempts.empty()) return d.attempts.back().sent_at;
    return d.created_at;
}

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

// The state a delivery queued again starts from (O5): no attempts in its
// sequence, pending, due at `due`.
inline stored_delivery requeued_state(const stored_delivery& was, keyhook::timestamp due) {
    stored_delivery d = was;
    d.attempts.clear();
    d.status = keyhook::delivery_status::pending;
    d.next_due = due;
    d.sequence = was.sequence + 1;
    d.ended_at.reset();
    return d;
}

// The endpoint a webhook's stored settings name ("" when they name none).
inline std::string endpoint_of_settings(const std::string& settings) {
    const auto j = nlohmann::json::parse(settings, nullptr, false);
    if (!j.is_object()) return "";
    const auto e = j.find("endpoint");
    return e != j.end() && e->is_string() ? e->get<std::string>() : std::string();
}

// B6: the store's layout. Version 1 (keyhook before the tenant keys) had no
// keyhook_schema table and keyed webhooks, their health and throttle by
// webhook name alone; it is refused, not migrated: its rows do not say which
// tenant they belong to (two tenants' webhooks of one name may already share
// one row). Version 2 lacked what O5 needs (a delivery's status column,
// attempt sequence, creation and end times, endpoint, and every attempt's
// history); it is migrated to 3 when a program opens it (migrate_row).
// `found`: the version the store's keyhook_schema holds, none when it has no
// such table; `has_old_tables`: a keyhook table exists without it.
inline constexpr std::int64_t schema_version = 3;
inline constexpr std::int64_t migrated_schema_version = 2;

struct schema_mismatch : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What opening a store does with its layout.
enum class schema_step {
    create,   // an empty store: the tables, then the current version
    use,      // the current version
    migrate,  // version 2: migrated to the current one
};

inline schema_step check_schema(std::optional<std::int64_t> found, bool has_old_tables) {
    const std::string expected = std::to_string(schema_version);
    if (!found && has_old_tables)
        throw schema_mismatch(
            "the store has schema version 1 (keyhook tables without keyhook_schema: webhooks keyed by name "
            "alone); this program needs schema version " +
            expected +
            " (keyed by tenant and webhook name). A version 1 store is not migrated: its rows do not say which "
            "tenant they belong to. Finish its deliveries with the program that wrote it (webhook_deliver --work "
            "--until-empty), then give this program a new store");
    if (!found) return schema_step::create;
    if (*found == schema_version) return schema_step::use;
    if (*found == migrated_schema_version) return schema_step::migrate;
    throw schema_mismatch("the store has schema version " + std::to_string(*found) +
                          "; this program needs schema version " + expected +
                          (*found > schema_version ? " (the store was written by a newer keyhook)" : ""));
}

// Version 2 to 3, one delivery row: its status, creation and end times (its
// first attempt's time, else its due time; its last attempt's, else its
// creation) and its attempts as history rows of sequence 1 (without detail:
// version 2 kept none). A row that does not read back is a store fault.
struct migrated_row {
    std::string status;
    std::int64_t created_at = 0;
    std::optional<std::int64_t> ended_at;
    std::vector<attempt_record> attempts;
};
inline migrated_row migrate_row(const std::string& state_text, const std::string& tenant, const std::string& webhook) {
    const auto d = state_of_row(state_text, tenant, webhook);
    migrated_row m;
    m.status = status_text(d.status);
    if (!d.attempts.empty())
        m.created_at = micros(d.attempts.front().sent_at);
    else if (d.next_due)
        m.created_at = micros(*d.next_due);
    stored_delivery with_time = d;
    with_time.created_at = from_micros(m.created_at);
    if (const auto end = end_time(with_time)) m.ended_at = micros(*end);
    for (std::size_t i = 0; i < d.attempts.size(); ++i)
        m.attempts.push_back(attempt_record{1, static_cast<std::int64_t>(i + 1), d.attempts[i], std::nullopt});
    return m;
}

// An attempt's outcome as the history's columns hold it: "http" with a
// status, "transport_failure" or "timed_out".
inline std::string outcome_text(const keyhook::attempt_outcome& o) {
    if (o.status()) return "http";
    return o.what() == keyhook::attempt_outcome::kind::timed_out ? "timed_out" : "transport_failure";
}
inline keyhook::attempt_outcome outcome_of(const std::string& text, std::optional<int> status) {
    if (text == "http" && status) return keyhook::attempt_outcome::http(*status);
    if (text == "timed_out") return keyhook::attempt_outcome::timed_out();
    return keyhook::attempt_outcome::transport_failure();
}

// SQL both stores run. Placeholders are written ?N and turned into $N for PostgreSQL.
namespace sql {
// B6: the layout's version, one row, written when the tables are created.
inline constexpr const char* create_schema = "CREATE TABLE keyhook_schema (version BIGINT NOT NULL)";
inline constexpr const char* insert_schema = "INSERT INTO keyhook_schema (version) VALUES (?1)";
inline constexpr const char* update_schema = "UPDATE keyhook_schema SET version = ?1";
inline constexpr const char* select_schema = "SELECT MAX(version) FROM keyhook_schema";
// Every table some version of keyhook made: one of them without keyhook_schema is version 1.
inline constexpr const char* known_tables[] = {"keyhook_webhooks",  "keyhook_deliveries", "keyhook_settings",
                                               "keyhook_endpoints", "keyhook_replay_ids", "keyhook_attempts"};
// A new store gets version 2's tables, then the steps to version 3: one
// path for new stores and migrated ones.
inline constexpr const char* create_webhooks =
    "CREATE TABLE IF NOT EXISTS keyhook_webhooks (tenant TEXT NOT NULL, name TEXT NOT NULL, "
    "settings TEXT NOT NULL, disabled INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tenant, name))";
inline constexpr const char* create_deliveries =
    "CREATE TABLE IF NOT EXISTS keyhook_deliveries (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
    "webhook TEXT NOT NULL, due_at BIGINT, lease_owner TEXT, lease_until BIGINT NOT NULL DEFAULT 0, "
    "state TEXT NOT NULL)";
inline constexpr const char* create_settings =
    "CREATE TABLE IF NOT EXISTS keyhook_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)";
inline constexpr const char* create_due_index =
    "CREATE INDEX IF NOT EXISTS keyhook_deliveries_due ON keyhook_deliveries (due_at) WHERE due_at IS NOT NULL";
inline constexpr const char* create_endpoints =
    "CREATE TABLE IF NOT EXISTS keyhook_endpoints (tenant TEXT NOT NULL, name TEXT NOT NULL, "
    "state TEXT NOT NULL, version BIGINT NOT NULL, PRIMARY KEY (tenant, name))";
// Version 2 to 3 (O5): the delivery's columns, the history, their indexes.
inline constexpr const char* to_version_3[] = {
    "ALTER TABLE keyhook_deliveries ADD COLUMN status TEXT NOT NULL DEFAULT 'pending'",
    "ALTER TABLE keyhook_deliveries ADD COLUMN sequence BIGINT NOT NULL DEFAULT 1",
    "ALTER TABLE keyhook_deliveries ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE keyhook_deliveries ADD COLUMN ended_at BIGINT",
    "ALTER TABLE keyhook_deliveries ADD COLUMN endpoint TEXT NOT NULL DEFAULT ''",
    "CREATE TABLE keyhook_attempts (id TEXT NOT NULL, sequence BIGINT NOT NULL, attempt BIGINT NOT NULL, "
    "sent_at BIGINT NOT NULL, outcome TEXT NOT NULL, http_status INTEGER, retry_after TEXT, duration_us BIGINT, "
    "error TEXT, response TEXT, response_cut INTEGER, result TEXT, PRIMARY KEY (id, sequence, attempt))",
    "CREATE INDEX keyhook_deliveries_webhook ON keyhook_deliveries (tenant, webhook, created_at)",
    "CREATE INDEX keyhook_deliveries_ended ON keyhook_deliveries (ended_at) WHERE ended_at IS NOT NULL"};
// The migration's reads and writes, a page of rows at a time.
inline constexpr const char* migrate_page =
    "SELECT id, state, tenant, webhook FROM keyhook_deliveries WHERE id > ?1 ORDER BY id LIMIT ?2";
inline constexpr const char* migrate_delivery =
    "UPDATE keyhook_deliveries SET status = ?2, created_at = ?3, ended_at = ?4, endpoint = ?5 WHERE id = ?1";
inline constexpr const char* all_webhooks = "SELECT tenant, name, settings FROM keyhook_webhooks";

inline constexpr const char* insert_setting =
    "INSERT INTO keyhook_settings (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING";
inline constexpr const char* select_setting = "SELECT value FROM keyhook_settings WHERE name = ?1";
inline constexpr const char* upsert_webhook =
    "INSERT INTO keyhook_webhooks (tenant, name, settings) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (tenant, name) DO UPDATE SET settings = excluded.settings";
// A purged delivery's row stays (a tombstone), so its id adds nothing either.
inline constexpr const char* insert_delivery =
    "INSERT INTO keyhook_deliveries (id, tenant, webhook, due_at, state, status, sequence, created_at, endpoint) "
    "VALUES (?1, ?2, ?3, ?4, ?5, 'pending', 1, ?6, ?7) ON CONFLICT (id) DO NOTHING";
inline constexpr const char* select_webhook =
    "SELECT settings, disabled FROM keyhook_webhooks WHERE tenant = ?1 AND name = ?2";
inline constexpr const char* count_pending = "SELECT COUNT(*) FROM keyhook_deliveries WHERE due_at IS NOT NULL";
inline constexpr const char* next_due =
    "SELECT MIN(due_at) FROM keyhook_deliveries WHERE due_at IS NOT NULL AND lease_until < ?1";
// The columns of a delivery as stored_delivery holds them (delivery_of_row).
#define KEYHOOK_DELIVERY_COLUMNS "state, tenant, webhook, sequence, created_at, ended_at, endpoint"
inline constexpr const char* delivery_columns = KEYHOOK_DELIVERY_COLUMNS;
// %s: PostgreSQL's row locks (" FOR UPDATE SKIP LOCKED"), nothing for SQLite,
// whose write transaction already excludes every other writer.
inline constexpr const char* claim_format =
    "UPDATE keyhook_deliveries SET lease_owner = ?1, lease_until = ?2 WHERE id IN ("
    "SELECT id FROM keyhook_deliveries WHERE due_at IS NOT NULL AND due_at <= ?3 AND lease_until < ?4 "
    "ORDER BY due_at LIMIT ?5%s) RETURNING " KEYHOOK_DELIVERY_COLUMNS;
inline constexpr const char* renew =
    "UPDATE keyhook_deliveries SET lease_until = CASE WHEN lease_until < ?3 THEN ?3 ELSE lease_until END "
    "WHERE id = ?1 AND lease_owner = ?2 AND due_at IS NOT NULL";
inline constexpr const char* record =
    "UPDATE keyhook_deliveries SET state = ?3, due_at = ?4, status = ?5, ended_at = ?6, lease_owner = NULL, "
    "lease_until = 0 WHERE id = ?1 AND lease_owner = ?2";
inline constexpr const char* insert_attempt =
    "INSERT INTO keyhook_attempts (id, sequence, attempt, sent_at, outcome, http_status, retry_after, "
    "duration_us, error, response, response_cut, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
    "ON CONFLICT (id, sequence, attempt) DO NOTHING";
inline constexpr const char* disable_webhook =
    "UPDATE keyhook_webhooks SET disabled = 1 WHERE tenant = ?1 AND name = ?2";
// H10, H11: keyhook_endpoints.
inline constexpr const char* select_endpoint =
    "SELECT state, version FROM keyhook_endpoints WHERE tenant = ?1 AND name = ?2";
inline constexpr const char* insert_endpoint =
    "INSERT INTO keyhook_endpoints (tenant, name, state, version) VALUES (?1, ?2, ?3, 1) "
    "ON CONFLICT (tenant, name) DO NOTHING";
inline constexpr const char* update_endpoint =
    "UPDATE keyhook_endpoints SET state = ?3, version = version + 1 WHERE tenant = ?1 AND name = ?2 "
    "AND version = ?4";
// A page of the deliveries a filter takes: ?3 to ?6 the statuses (each
// repeated to fill four), ?7 the tenant, ?8 the webhook, ?9 the earliest
// creation time, each NULL for any (cast: PostgreSQL must know a NULL
// parameter's type).
inline constexpr const char* page =
    "SELECT id, " KEYHOOK_DELIVERY_COLUMNS
    " FROM keyhook_deliveries WHERE id > ?1 AND status IN (?3, ?4, ?5, ?6) "
    "AND (CAST(?7 AS TEXT) IS NULL OR tenant = ?7) AND (CAST(?8 AS TEXT) IS NULL OR webhook = ?8) "
    "AND (CAST(?9 AS BIGINT) IS NULL OR created_at >= ?9) "
    "ORDER BY id LIMIT ?2";
// O5: one delivery, a tombstone included (its status says so).
inline constexpr const char* find = "SELECT status, " KEYHOOK_DELIVERY_COLUMNS " FROM keyhook_deliveries WHERE id = ?1";
inline constexpr const char* history =
    "SELECT sequence, attempt, sent_at, outcome, http_status, retry_after, duration_us, error, response, "
    "response_cut, result FROM keyhook_attempts WHERE id = ?1 ORDER BY sequence, attempt";
// O5: queued again only from the ended status and sequence it was read in.
inline constexpr const char* requeue =
    "UPDATE keyhook_deliveries SET state = ?4, status = 'pending', due_at = ?5, sequence = sequence + 1, "
    "ended_at = NULL, lease_owner = NULL, lease_until = 0, endpoint = COALESCE(?6, endpoint) "
    "WHERE id = ?1 AND status = ?2 AND sequence = ?3 AND status IN ('delivered', 'gave_up', 'disabled')";
// O5: enabling. %s: " FOR UPDATE" for PostgreSQL (racing enables and the
// workers' compare-and-set wait for the transaction), nothing for SQLite.
inline constexpr const char* lock_webhook_format =
    "SELECT disabled FROM keyhook_webhooks WHERE tenant = ?1 AND name = ?2%s";
inline constexpr const char* lock_endpoint_format =
    "SELECT state, version FROM keyhook_endpoints WHERE tenant = ?1 AND name = ?2%s";
inline constexpr const char* enable_webhook =
    "UPDATE keyhook_webhooks SET disabled = 0 WHERE tenant = ?1 AND name = ?2 AND disabled <> 0";
// O5: a purge leaves tombstones, from ended deliveries only.
inline constexpr const char* purge =
    "UPDATE keyhook_deliveries SET status = 'purged', state = '', due_at = NULL, lease_owner = NULL, "
    "lease_until = 0, endpoint = '' WHERE status IN ('delivered', 'gave_up', 'disabled') AND ended_at < ?1 "
    "AND (CAST(?2 AS TEXT) IS NULL OR tenant = ?2) AND (CAST(?3 AS TEXT) IS NULL OR webhook = ?3) RETURNING id";
inline constexpr const char* purge_history = "DELETE FROM keyhook_attempts WHERE id = ?1";
#undef KEYHOOK_DELIVERY_COLUMNS
}  // namespace sql

inline constexpr std::size_t read_batch = 256;

// The four statuses a filter's page query binds (?3 to ?6): the filter's,
// the first repeated to fill four, or every status but purged.
inline std::vector<std::string> status_parameters(const delivery_filter& f) {
    std::vector<std::string> out;
    for (const auto s : f.statuses) out.push_back(status_text(s));
    if (out.empty()) out = {"pending", "delivered", "gave_up", "disabled"};
    while (out.size() < 4) out.push_back(out.front());
    out.resize(4);
    return out;
}

}  // namespace examples::store
