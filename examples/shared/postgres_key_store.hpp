// The key store in PostgreSQL (rules K11 to K18): one store for many
// gateways, behind the interface of key_store.hpp. Needs libpq (Debian
// libpq-dev). The tables, created on first use (schema version 2; a store of
// version 1 gets the rate_tat column when first opened):
//
//   keyhook_key_schema   one row: the layout's version (key_schema_version);
//                        a store of another version is refused, unchanged
//   keyhook_key_version  one row: the store's version, a counter that every
//                        change key_admin makes bumps in its own transaction
//                        (and so does a gateway's rehash, K11); a reader
//                        compares it to know whether to read again (K17)
//   keyhook_keys         one row per stored key, in the order they were
//                        created (seq): id (primary key), tenant, stored_key
//                        (kh1.<pepper>.<digest> or a legacy form, K11; a
//                        unique index), record (the entry's JSON as a line of
//                        the file holds it, less tenant, storedKey, usage and
//                        lastUsedAt, which have columns), and the usage the
//                        gateways write: credits_remaining, credits_refill
//                        (the last refill, microseconds since 1970),
//                        rate_tat (K13's state, the same unit; null: no
//                        call yet) and last_used_at (null: never used)
//
// Never a plaintext key, never a pepper: the same as the file (K11).
//
// Writers (K18). Every change key_admin makes (update, try_update) is one
// transaction that first locks the version row (SELECT ... FOR UPDATE), so
// key_admin writers are one at a time, as the file's lock makes them; it
// then reads the rows, runs the change, writes what differs, bumps the
// version and sends NOTIFY keyhook_keys (the new version as the payload,
// nothing else), all before COMMIT: a gateway that hears the notification
// reads a store that already holds the change. The checks that keep K18's
// invariants run inside that transaction: no two keys with one id (the
// primary key) or one stored key (a unique index, checked at commit), and
// one plaintext key under every pepper and the legacy scheme (key_admin's
// check_key_is_new, run over the rows read under the version row's lock,
// in the transaction that inserts the key). Why a lock and not an index: a
// unique index can only compare digest strings, and a key stored under an
// older pepper (or as a legacy SHA-256 digest) has a different string; the
// only test is to verify the new plaintext against every stored digest,
// which needs the plaintext, at hand only in key_admin. SERIALIZABLE would
// make that check safe too, but at the price of retrying on every conflict;
// the row lock makes the writers wait for each other instead, as the file's
// lock does, and no gateway ever takes it for its usage (gateways add no
// keys). A write that would break an invariant is refused before anything
// is written (the rows it would write are read back with the reader's
// checks first), and the transaction is rolled back: the store is as it was.
//
// Gateways (K14, K15, K17). write_usage updates the usage columns of the
// keys used, row by row, in one short transaction that never takes the
// version row (unless a rehash moves a stored key, which readers must see):
// the credits spent are subtracted from what the row holds (a refill written
// in between, or credits key_admin set, win), lastUsedAt only moves forward.
// Rows are locked in id order, so two gateways never deadlock. Usage writes
// do not bump the version. With shared limits (decide_limits, K17) the
// database decides a key's rate and credits itself, a batch of calls per
// transaction on its own clock, and write_usage only carries lastUsedAt of
// keys without limits and rehashes.
//
// Connection. Each statement has a deadline (the options' timeout); a
// connection that breaks or times out is dropped and made again at the
// next call, after a pause that doubles from 250 ms to 2 s while attempts
// fail, so a gateway reconnects within a few seconds of the database's
// return. Errors are platform failures (errc::host_failure: exit 3) but for
// a write refused by K18 (errc::invalid_value: exit 1). Messages start with
// the address as store_opener.hpp shows it, and never carry a parameter's
// value (a constraint's DETAIL would quote a digest): only the primary
// message and the SQLSTATE.
#pragma once

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <libpq-fe.h>

#include "keyhook/timestamps.hpp"
#include "shared/key_store.hpp"
#include "shared/postgres_text.hpp"

namespace key_store {

namespace pg {

// 2 added rate_tat (K17's shared rate limits); a store of version 1 is
// moved to 2 by the first program that opens it (one added column).
inline constexpr std::int64_t key_schema_version = 2;
// The channel of NOTIFY and LISTEN.
inline constexpr const char* channel = "keyhook_keys";

inline constexpr const char* create_schema = "CREATE TABLE keyhook_key_schema (version BIGINT NOT NULL)";
inline constexpr const char* insert_schema = "INSERT INTO keyhook_key_schema (version) VALUES ($1)";
inline constexpr const char* select_schema = "SELECT MAX(version) FROM keyhook_key_schema";
inline constexpr const char* create_version = "CREATE TABLE keyhook_key_version (version BIGINT NOT NULL)";
inline constexpr const char* insert_version = "INSERT INTO keyhook_key_version (version) VALUES (1)";
inline constexpr const char* create_keys =
    "CREATE TABLE keyhook_keys (seq BIGSERIAL NOT NULL, id TEXT NOT NULL, tenant TEXT NOT NULL, "
    "stored_key TEXT NOT NULL, record TEXT NOT NULL, "
    "credits_remaining NUMERIC(20, 0) NOT NULL CHECK (credits_remaining >= 0), "
    "credits_refill BIGINT NOT NULL, last_used_at BIGINT, rate_tat BIGINT, "
    "CONSTRAINT keyhook_keys_id PRIMARY KEY (id) DEFERRABLE INITIALLY DEFERRED, "
    "CONSTRAINT keyhook_keys_stored_key UNIQUE (stored_key) DEFERRABLE INITIALLY DEFERRED)";
inline constexpr const char* create_order = "CREATE INDEX keyhook_keys_seq ON keyhook_keys (seq)";
inline constexpr const char* migrate_1_to_2 = "ALTER TABLE keyhook_keys ADD COLUMN rate_tat BIGINT";
// K17's shared limits. The rows of a batch's keys, locked in id order (two
// gateways never deadlock), with the database's clock: every decision on a
// key is made under its row's lock, one after another, on one clock,
// whichever gateway asks. (A clock read before a lock was granted is earlier
// than the decision before it; K13's and K14's arithmetic only grow stricter
// with an earlier time, and K13's bound holds over the decisions in the
// order they were made.) Microseconds since 1970.
inline constexpr const char* lock_limits =
    "SELECT id, credits_remaining, credits_refill, rate_tat, "
    "floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint "
    "FROM keyhook_keys WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE";
// What the allowed calls moved: credits, refill, the rate state, and
// lastUsedAt (forward only).
inline constexpr const char* write_limits =
    "UPDATE keyhook_keys AS k SET credits_remaining = c.remaining, credits_refill = c.refill, rate_tat = c.tat, "
    "last_used_at = GREATEST(COALESCE(k.last_used_at, c.used), c.used) "
    "FROM unnest($1::text[], $2::numeric[], $3::bigint[], $4::bigint[], $5::bigint[]) "
    "AS c(id, remaining, refill, tat, used) WHERE k.id = c.id";
inline constexpr const char* select_version = "SELECT version FROM keyhook_key_version";
inline constexpr const char* lock_version = "SELECT version FROM keyhook_key_version FOR UPDATE";
inline constexpr const char* lock_version_nowait = "SELECT version FROM keyhook_key_version FOR UPDATE NOWAIT";
inline constexpr const char* bump_version = "UPDATE keyhook_key_version SET version = version + 1 RETURNING version";
inline constexpr const char* notify = "SELECT pg_notify('keyhook_keys', $1)";
inline constexpr const char* select_keys =
    "SELECT id, tenant, stored_key, record, credits_remaining, credits_refill, last_used_at FROM keyhook_keys "
    "ORDER BY seq";
inline constexpr const char* insert_key =
    "INSERT INTO keyhook_keys (id, tenant, stored_key, record, credits_remaining, credits_refill, last_used_at) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7)";
inline constexpr const char* update_record =
    "UPDATE keyhook_keys SET tenant = $2, stored_key = $3, record = $4 WHERE id = $1";
inline constexpr const char* update_credits =
    "UPDATE keyhook_keys SET credits_remaining = $2, credits_refill = $3 WHERE id = $1";
inline constexpr const char* update_last_used = "UPDATE keyhook_keys SET last_used_at = $2 WHERE id = $1";
inline constexpr const char* update_stored_key = "UPDATE keyhook_keys SET stored_key = $2 WHERE id = $1";
inline constexpr const char* delete_key = "DELETE FROM keyhook_keys WHERE id = $1";
inline constexpr const char* lock_rows =
    "SELECT id FROM keyhook_keys WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE";
// A gateway's write-back, one row per change (c): the credits spent are
// subtracted within the refill period the gateway counted them in; a refill
// the row has not seen yet is written with what the gateway spent since; a
// later refill (or credits key_admin set) in the row wins. lastUsedAt moves
// forward only; a rehash replaces the stored key the gateway matched.
inline constexpr const char* write_usage =
    "UPDATE keyhook_keys AS k SET "
    "credits_remaining = CASE WHEN k.credits_refill = c.refill THEN GREATEST(k.credits_remaining - c.spent, 0) "
    "WHEN k.credits_refill < c.refill THEN c.remaining ELSE k.credits_remaining END, "
    "credits_refill = GREATEST(k.credits_refill, c.refill), "
    "last_used_at = CASE WHEN c.last_used IS NULL THEN k.last_used_at "
    "ELSE GREATEST(COALESCE(k.last_used_at, c.last_used), c.last_used) END, "
    "stored_key = CASE WHEN c.rehash_from IS NOT NULL AND k.stored_key = c.rehash_from THEN c.rehash_to "
    "ELSE k.stored_key END "
    "FROM unnest($1::text[], $2::numeric[], $3::numeric[], $4::bigint[], $5::bigint[], $6::text[], $7::text[]) "
    "AS c(id, spent, remaining, refill, last_used, rehash_from, rehash_to) WHERE k.id = c.id "
    "RETURNING k.id, k.last_used_at, k.stored_key";

inline std::int64_t micros(keyhook::timestamp t) { return t.time_since_epoch().count(); }
inline keyhook::timestamp from_micros(std::int64_t us) { return keyhook::timestamp{std::chrono::microseconds{us}}; }

// A PostgreSQL array literal of text values ({"a","b",NULL}), each quoted.
inline std::string array_literal(const std::vector<std::optional<std::string>>& values) {
    std::string out = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out += ',';
        if (!values[i]) {
            out += "NULL";
            continue;
        }
        out += '"';
        for (const char c : *values[i]) {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        out += '"';
    }
    return out + "}";
}

// The members of an entry that have columns of their own.
inline constexpr const char* column_members[] = {"tenant", "storedKey", "usage", "lastUsedAt"};

// The record column of `e`: its line less the members with columns.
inline std::string record_text(const entry& e) {
    auto j = to_line(e);
    for (const char* name : column_members) j.erase(name);
    return j.dump();
}

// One row as the table holds it (text, as libpq gives and takes it).
struct row {
    std::string id, tenant, stored_key, record, credits_remaining, credits_refill;
    std::optional<std::string> last_used_at;
};

inline row row_of(const entry& e) {
    row r;
    r.id = e.record.id.str();
    r.tenant = e.tenant;
    r.stored_key = e.stored_key;
    r.record = record_text(e);
    r.credits_remaining = std::to_string(e.usage.credits.remaining);
    r.credits_refill = std::to_string(micros(e.usage.credits.last_refill));
    if (e.record.last_used_at) r.last_used_at = std::to_string(micros(*e.record.last_used_at));
    return r;
}

inline bool whole_number(const std::string& s, bool may_be_negative) {
    const std::size_t from = may_be_negative && !s.empty() && s[0] == '-' ? 1 : 0;
    return s.size() > from && s.size() - from <= 20 && s.find_first_not_of("0123456789", from) == std::string::npos;
}

// Reads one row back into an entry with the file's reader (K18: what the
// reader refuses is refused here too). `where` starts each error's path.
inline keyhook::result<entry> entry_of_row(const row& r, const std::string& where) {
    const auto bad = [&where](const std::string& column, const std::string& why) {
        return keyhook::error{keyhook::errc::invalid_value, where + ": " + column, why};
    };
    auto doc = keyhook::try_parse_json(r.record, entry_limits());
    if (!doc) {
        const auto& e = doc.error();
        return keyhook::error{e.code, where + ": record" + (e.path.empty() ? std::string() : "." + e.path), e.message};
    }
    if (!doc->is_object()) return bad("record", "expected an object");
    for (const char* name : column_members)
        if (doc->contains(name)) return bad(std::string("record.") + name, "kept in a column of its own, not here");
    if (!whole_number(r.credits_remaining, false)) return bad("credits_remaining", "expected a whole number");
    if (!whole_number(r.credits_refill, true)) return bad("credits_refill", "expected microseconds since 1970");
    if (r.last_used_at && !whole_number(*r.last_used_at, true))
        return bad("last_used_at", "expected microseconds since 1970");
    try {
        (*doc)["tenant"] = r.tenant;
        (*doc)["storedKey"] = r.stored_key;
        (*doc)["lastUsedAt"] = r.last_used_at
                                   ? nlohmann::json(keyhook::format_timestamp(from_micros(std::stoll(*r.last_used_at))))
                                   : nlohmann::json(nullptr);
        (*doc)["usage"] = {{"creditsRemaining", std::stoull(r.credits_remaining)},
                           {"lastRefill", keyhook::format_timestamp(from_micros(std::stoll(r.credits_refill)))}};
    } catch (const std::exception&) {
        return bad("credits_remaining", "out of range");
    }
    auto e = read_entry(*doc, where);
    if (!e) return e.error();
    if (e->record.id.str() != r.id) return bad("id", "the record's id is not its row's");
    return e;
}

// A failure of a statement or of the connection, inside the store.
struct failure {
    std::string message;
    std::string sqlstate;  // empty for the connection's own failures
};

}  // namespace pg

class postgres_key_store final : public key_store {
public:
    struct options {
        // Each statement's deadline, and the connection's.
        std::chrono::milliseconds timeout{30000};
        // Takes out of a message any piece of the address's password (store_opener.hpp).
        std::function<std::string(std::string)> scrub;
    };

    // `conninfo`: a postgresql:// URI, as libpq reads it (never printed);
    // `shown`: the address as messages show it. Connects now and creates
    // the tables on first use: throws std::runtime_error when it cannot.
    postgres_key_store(std::string conninfo, std::string shown, options o)
        : conninfo_(std::move(conninfo)), shown_(std::move(shown)), options_(std::move(o)) {
        if (auto c = connect(); !c) throw std::runtime_error(c.error().message);
    }
    postgres_key_store(const postgres_key_store&) = delete;
    postgres_key_store& operator=(const postgres_key_store&) = delete;
    ~postgres_key_store() override { drop(); }

    [[nodiscard]] const std::string& path() const noexcept override { return shown_; }
    void keep_last_version(bool) override {}  // every read is one query; nothing to keep
    [[nodiscard]] bool shared() const noexcept override { return true; }

    keyhook::result<store_version> update(const change_fn& change) override {
        auto r = change_rows(change, true);
        if (!r) return r.error();
        return **r;
    }
    keyhook::result<std::optional<store_version>> try_update(const change_fn& change) override {
        return change_rows(change, false);
    }
    using key_store::try_update_usage;
    using key_store::update_usage;
    keyhook::result<store_version> update_usage(const usage_change_fn& change, const runner_fn& run) override {
        auto r = change_usage(change, run, true);
        if (!r) return r.error();
        return **r;
    }
    keyhook::result<std::optional<store_version>> try_update_usage(const usage_change_fn& change,
                                                                   const runner_fn& run) override {
        return change_usage(change, run, false);
    }

    // The version, and a heartbeat: a store that answers is reachable.
    keyhook::result<store_version> current_stamp() override {
        return guarded([&] { return store_version::database(version_of(exec(pg::select_version, {}))); });
    }

    // One snapshot of the version and every row (REPEATABLE READ).
    keyhook::result<snapshot> read_snapshot() override {
        std::optional<keyhook::error> refused;
        auto r = guarded([&] {
            transaction t(*this, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
            snapshot out;
            out.stamp = store_version::database(version_of(exec(pg::select_version, {})));
            auto rows = read_rows();
            t.commit();
            auto entries = entries_of(rows);
            if (!entries)
                refused = entries.error();
            else
                out.entries = std::move(*entries);
            return out;
        });
        if (!r) return r.error();
        if (refused) return *refused;
        return r;
    }

    bool wait_for_change(std::chrono::milliseconds max) override {
        const auto deadline = steady::now() + max;
        if (!connected()) {
            sleep_until(deadline);
            return false;
        }
        if (!listening_) {
            // From now on, and on every new connection before its first read (connect).
            listen_wanted_ = true;
            try {
                listen();
            } catch (const pg::failure&) {
                settle_failure();
                return true;
            }
        }
        if (drain_notifications()) return true;
        for (;;) {
            const int ready = wait_socket(POLLIN, deadline);
            if (ready == 0) return false;
            if (ready < 0 || !PQconsumeInput(conn_)) {
                drop();
                return true;  // the connection broke: the caller's next read says so
            }
            if (drain_notifications()) return true;
        }
    }

    keyhook::result<std::vector<written_usage>> write_usage(const std::vector<write_back>& changes) override {
        std::vector<written_usage> out(changes.size());
        if (changes.empty()) return out;
        return guarded([&] {
            std::vector<std::optional<std::string>> ids, spent, remaining, refill, last_used, from, to;
            bool rehash = false;
            for (const auto& c : changes) {
                ids.emplace_back(c.id.str());
                spent.emplace_back(std::to_string(c.spent));
                remaining.emplace_back(std::to_string(c.credits.remaining));
                refill.emplace_back(std::to_string(pg::micros(c.credits.last_refill)));
                last_used.push_back(c.last_used_at
                                        ? std::optional<std::string>(std::to_string(pg::micros(*c.last_used_at)))
                                        : std::nullopt);
                const bool moves = c.rehash_from && c.rehash_to;
                from.push_back(moves ? c.rehash_from : std::nullopt);
                to.push_back(moves ? c.rehash_to : std::nullopt);
                rehash = rehash || moves;
            }
            transaction t(*this);
            // A rehash is seen by readers through the version: its row first,
            // as key_admin takes it, then the keys' rows in id order.
            if (rehash) exec(pg::lock_version, {});
            auto sorted = ids;
            std::sort(sorted.begin(), sorted.end());
            exec(pg::lock_rows, {pg::array_literal(sorted)});
            const auto r =
                exec(pg::write_usage, {pg::array_literal(ids), pg::array_literal(spent), pg::array_literal(remaining),
                                       pg::array_literal(refill), pg::array_literal(last_used), pg::array_literal(from),
                                       pg::array_literal(to)});
            std::unordered_map<std::string, std::size_t> at;
            for (std::size_t i = 0; i < changes.size(); ++i) at.emplace(changes[i].id.str(), i);
            bool moved = false;
            for (int n = 0; n < PQntuples(r.get()); ++n) {
                const auto found = at.find(PQgetvalue(r.get(), n, 0));
                if (found == at.end()) continue;
                const auto i = found->second;
                auto& w = out[i];
                w.found = true;
                w.credits = changes[i].credits;  // counted: subtracted, or superseded by the row's refill
                if (!PQgetisnull(r.get(), n, 1))
                    w.last_used_at = pg::from_micros(std::stoll(PQgetvalue(r.get(), n, 1)));
                w.stored_key = PQgetvalue(r.get(), n, 2);
                moved = moved || (changes[i].rehash_to && w.stored_key == *changes[i].rehash_to &&
                                  changes[i].rehash_from != changes[i].rehash_to);
            }
            if (moved) announce(bump());
            t.commit();
            return out;
        });
    }

    [[nodiscard]] bool decides_limits() const noexcept override { return true; }

    // K17: one transaction per batch. The keys' rows are locked, the
    // database's clock read, each call decided in order by check_limits on
    // the row's usage, what moved written, and the transaction committed
    // before any outcome is returned: an allowed call is never answered
    // before its spending is durable. A key whose row is gone is not found.
    keyhook::result<std::vector<limits_outcome>> decide_limits(const std::vector<limits_call>& calls) override {
        std::vector<limits_outcome> out(calls.size());
        if (calls.empty()) return out;
        return guarded([&] {
            std::vector<std::optional<std::string>> ids;
            for (const auto& c : calls) ids.emplace_back(c.id);
            std::sort(ids.begin(), ids.end());
            ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
            transaction t(*this);
            const auto r = exec(pg::lock_limits, {pg::array_literal(ids)});
            struct held {
                keyhook::key_usage usage;
                bool moved = false;
            };
            std::unordered_map<std::string, held> rows;
            keyhook::timestamp at{};
            for (int n = 0; n < PQntuples(r.get()); ++n) {
                held h;
                h.usage.credits.remaining = std::stoull(PQgetvalue(r.get(), n, 1));
                h.usage.credits.last_refill = pg::from_micros(std::stoll(PQgetvalue(r.get(), n, 2)));
                if (!PQgetisnull(r.get(), n, 3))
                    h.usage.rate.tat = pg::from_micros(std::stoll(PQgetvalue(r.get(), n, 3)));
                at = std::max(at, pg::from_micros(std::stoll(PQgetvalue(r.get(), n, 4))));
                rows.emplace(PQgetvalue(r.get(), n, 0), h);
            }
            for (std::size_t i = 0; i < calls.size(); ++i) {
                out[i].at = at;
                const auto found = rows.find(calls[i].id);
                if (found == rows.end()) continue;
                auto& h = found->second;
                out[i].found = true;
                out[i].decision =
                    keyhook::check_limits(keyhook::key_limits{calls[i].policy, h.usage}, calls[i].cost, at);
                if (out[i].decision.allowed()) {
                    h.usage = out[i].decision.usage;
                    h.moved = true;
                }
            }
            std::vector<std::optional<std::string>> moved, remaining, refill, tat, used;
            for (const auto& [id, h] : rows) {
                if (!h.moved) continue;
                moved.emplace_back(id);
                remaining.emplace_back(std::to_string(h.usage.credits.remaining));
                refill.emplace_back(std::to_string(pg::micros(h.usage.credits.last_refill)));
                tat.push_back(h.usage.rate.tat
                                  ? std::optional<std::string>(std::to_string(pg::micros(*h.usage.rate.tat)))
                                  : std::nullopt);
                used.emplace_back(std::to_string(pg::micros(at)));
            }
            if (!moved.empty())
                exec(pg::write_limits, {pg::array_literal(moved), pg::array_literal(remaining),
                                        pg::array_literal(refill), pg::array_literal(tat), pg::array_literal(used)});
            t.commit();
            return out;
        });
    }

private:
    using steady = std::chrono::steady_clock;

    struct result_free {
        void operator()(PGresult* r) const noexcept { PQclear(r); }
    };
    using result_ptr = std::unique_ptr<PGresult, result_free>;

    // BEGIN now; ROLLBACK when left without commit() (an exception, a
    // change that returned false).
    class transaction {
    public:
        explicit transaction(postgres_key_store& s, const char* begin = "BEGIN") : s_(s) { s_.exec(begin, {}); }
        ~transaction() {
            if (!done_) s_.rollback();
        }
        transaction(const transaction&) = delete;
        transaction& operator=(const transaction&) = delete;
        void commit() {
            done_ = true;
            s_.exec("COMMIT", {});
        }

    private:
        postgres_key_store& s_;
        bool done_ = false;
    };

    // What was read: the rows as the table holds them.
    using rows_read = std::vector<pg::row>;

    std::string where_row(std::size_t i) const { return shown_ + ":keyhook_keys:" + std::to_string(i + 1); }

    keyhook::result<std::vector<entry>> entries_of(const rows_read& rows) const {
        std::vector<entry> out;
        out.reserve(rows.size());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            auto e = pg::entry_of_row(rows[i], where_row(i));
            if (!e) return e.error();
            out.push_back(std::move(*e));
        }
        return out;
    }

    rows_read read_rows() {
        const auto r = exec(pg::select_keys, {});
        rows_read out;
        out.reserve(static_cast<std::size_t>(PQntuples(r.get())));
        for (int n = 0; n < PQntuples(r.get()); ++n) {
            pg::row row;
            row.id = PQgetvalue(r.get(), n, 0);
            row.tenant = PQgetvalue(r.get(), n, 1);
            row.stored_key = PQgetvalue(r.get(), n, 2);
            row.record = PQgetvalue(r.get(), n, 3);
            row.credits_remaining = PQgetvalue(r.get(), n, 4);
            row.credits_refill = PQgetvalue(r.get(), n, 5);
            if (!PQgetisnull(r.get(), n, 6)) row.last_used_at = PQgetvalue(r.get(), n, 6);
            out.push_back(std::move(row));
        }
        return out;
    }

    static std::int64_t version_of(const result_ptr& r) {
        if (PQntuples(r.get()) != 1 || PQgetisnull(r.get(), 0, 0))
            throw pg::failure{"keyhook_key_version does not hold one row", {}};
        return std::stoll(PQgetvalue(r.get(), 0, 0));
    }

    // Under the version row's lock (nothing when another writer holds it and
    // `wait` is false): the version read, the rows and their entries.
    struct locked_read {
        std::int64_t version = 0;
        rows_read rows;
        std::vector<entry> entries;
    };
    std::optional<locked_read> lock_and_read(bool wait, std::optional<keyhook::error>& refused) {
        locked_read out;
        try {
            out.version = version_of(exec(wait ? pg::lock_version : pg::lock_version_nowait, {}));
        } catch (const pg::failure& f) {
            if (f.sqlstate == "55P03") return std::nullopt;  // lock_not_available: another writer holds it
            throw;
        }
        out.rows = read_rows();
        auto entries = entries_of(out.rows);
        if (!entries)
            refused = entries.error();
        else
            out.entries = std::move(*entries);
        return out;
    }

    std::int64_t bump() { return version_of(exec(pg::bump_version, {})); }
    void announce(std::int64_t version) { exec(pg::notify, {std::to_string(version)}); }

    keyhook::error refusal(const std::string& where, const std::string& why) const {
        return keyhook::error{keyhook::errc::invalid_value, shown_,
                              "write refused, the store is unchanged: " + where + ": " + why};
    }

    // update and try_update: see the top of this file.
    keyhook::result<std::optional<store_version>> change_rows(const change_fn& change, bool wait) {
        std::optional<keyhook::error> refused;
        auto r = guarded([&]() -> std::optional<store_version> {
            transaction t(*this);
            auto read = lock_and_read(wait, refused);
            if (!read) return std::nullopt;
            if (refused) return store_version::database(read->version);
            auto entries = read->entries;
            if (!change(entries, store_version::database(read->version))) return store_version::database(read->version);
            // K18: the whole new set of rows is checked before one is written.
            std::vector<pg::row> rows;
            rows.reserve(entries.size());
            std::set<std::string, std::less<>> ids, digests;
            for (std::size_t i = 0; i < entries.size(); ++i) {
                const std::string where = "keyhook_keys:" + std::to_string(i + 1);
                try {
                    rows.push_back(pg::row_of(entries[i]));
                } catch (const std::exception& e) {
                    refused = refusal(where, e.what());
                    return std::nullopt;
                }
                if (auto back = pg::entry_of_row(rows.back(), where); !back) {
                    refused = refusal(back.error().path, back.error().message);
                    return std::nullopt;
                }
                if (!ids.insert(rows.back().id).second) {
                    refused = refusal(where + ": id", "another row has this id");
                    return std::nullopt;
                }
                if (!digests.insert(rows.back().stored_key).second) {
                    refused = refusal(where + ": storedKey", "another row has this stored key");
                    return std::nullopt;
                }
            }
            std::unordered_map<std::string, const pg::row*> before;
            for (const auto& row : read->rows) before.emplace(row.id, &row);
            std::unordered_map<std::string, const entry*> before_entry;
            for (const auto& e : read->entries) before_entry.emplace(e.record.id.str(), &e);
            // The rows deleted or changed, in id order (the order gateways
            // lock rows in, so the two never deadlock), then the new ones in
            // the order given (their seq). The unique constraints are checked
            // at COMMIT, so a stored key may move from a deleted row to a new one.
            std::map<std::string, std::optional<std::size_t>> touched;  // id -> position in rows, none: deleted
            std::vector<std::size_t> added;
            for (const auto& row : read->rows)
                if (!ids.count(row.id)) touched.emplace(row.id, std::nullopt);
            for (std::size_t i = 0; i < rows.size(); ++i) {
                if (before.count(rows[i].id))
                    touched.emplace(rows[i].id, i);
                else
                    added.push_back(i);
            }
            for (const auto& [id, position] : touched) {
                if (!position) {
                    exec(pg::delete_key, {id});
                    continue;
                }
                const auto i = *position;
                const auto& now = rows[i];
                const auto& was = *before.at(now.id);
                // Compared as the writer formats them, so a row whose text
                // another writer spelt differently is not rewritten for that.
                const auto& old_entry = *before_entry.at(now.id);
                if (now.tenant != was.tenant || now.stored_key != was.stored_key ||
                    now.record != pg::record_text(old_entry))
                    exec(pg::update_record, {now.id, now.tenant, now.stored_key, now.record});
                // Usage is written only when the change set it (key_admin's
                // --credits), never as read: a gateway's write in between stays.
                if (entries[i].usage.credits != old_entry.usage.credits)
                    exec(pg::update_credits, {now.id, now.credits_remaining, now.credits_refill});
                if (entries[i].record.last_used_at != old_entry.record.last_used_at)
                    exec_nullable(pg::update_last_used, {now.id, now.last_used_at});
            }
            for (const auto i : added) {
                const auto& now = rows[i];
                exec_nullable(pg::insert_key, {now.id, now.tenant, now.stored_key, now.record, now.credits_remaining,
                                               now.credits_refill, now.last_used_at});
            }
            const auto version = bump();
            announce(version);
            t.commit();
            return store_version::database(version);
        });
        if (!r) return r.error();
        if (refused) return *refused;
        return r;
    }

    // update_usage and try_update_usage: as the file's, under the version
    // row's lock; only the usage columns and the stored key are written (a
    // moved stored key bumps the version).
    keyhook::result<std::optional<store_version>> change_usage(const usage_change_fn& change, const runner_fn& run,
                                                               bool wait) {
        std::optional<keyhook::error> refused;
        auto r = guarded([&]() -> std::optional<store_version> {
            transaction t(*this);
            auto read = lock_and_read(wait, refused);
            if (!read) return std::nullopt;
            const auto version = store_version::database(read->version);
            if (refused) return version;
            auto entries = read->entries;
            const auto count = entries.size();
            const auto changed = change(entries, version);
            if (changed.empty()) return version;
            if (entries.size() != count) {
                refused = refusal("(store)", "a usage write added or removed a key");
                return std::nullopt;
            }
            for (std::size_t k = 0; k < changed.size(); ++k)
                if (changed[k] >= count || (k > 0 && changed[k] <= changed[k - 1])) {
                    refused = refusal("(store)", "a usage write named a position twice or out of range");
                    return std::nullopt;
                }
            std::vector<pg::row> rows(changed.size());
            std::vector<std::optional<keyhook::error>> problem(changed.size());
            run(changed.size(), std::function<void(std::size_t)>([&](std::size_t k) {
                    const auto i = changed[k];
                    const std::string where = "keyhook_keys:" + std::to_string(i + 1);
                    try {
                        rows[k] = pg::row_of(entries[i]);
                    } catch (const std::exception& e) {
                        problem[k] = keyhook::error{keyhook::errc::invalid_value, where, e.what()};
                        return;
                    }
                    if (auto back = pg::entry_of_row(rows[k], where); !back)
                        problem[k] = back.error();
                    else if (rows[k].id != read->rows[i].id)
                        problem[k] = keyhook::error{keyhook::errc::invalid_value, where + ": id",
                                                    "a usage write changed the id"};
                }));
            for (const auto& p : problem)
                if (p) {
                    refused = refusal(p->path, p->message);
                    return std::nullopt;
                }
            bool moved = false;
            std::vector<std::size_t> order(changed.size());  // in id order, as gateways lock rows
            for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
            std::sort(order.begin(), order.end(),
                      [&](std::size_t a, std::size_t b) { return rows[a].id < rows[b].id; });
            for (const auto k : order) {
                const auto& now = rows[k];
                const auto& was = read->entries[changed[k]];
                if (entries[changed[k]].usage.credits != was.usage.credits)
                    exec(pg::update_credits, {now.id, now.credits_remaining, now.credits_refill});
                if (entries[changed[k]].record.last_used_at != was.record.last_used_at)
                    exec_nullable(pg::update_last_used, {now.id, now.last_used_at});
                if (now.stored_key != was.stored_key) {
                    exec(pg::update_stored_key, {now.id, now.stored_key});
                    moved = true;
                }
            }
            std::int64_t after = read->version;
            if (moved) {
                after = bump();
                announce(after);
            }
            t.commit();
            return store_version::database(after);
        });
        if (!r) return r.error();
        if (refused) return *refused;
        return r;
    }

    // ---- The connection.

    // Runs `f`, whose pg::failure becomes a keyhook::error (and a connection
    // that broke is dropped, to be made again at the next call).
    template <class F>
    auto guarded(F&& f) -> keyhook::result<decltype(f())> {
        if (auto c = connected_or_error(); !c) return c.error();
        try {
            return f();
        } catch (const pg::failure& e) {
            settle_failure();
            return failed(e);
        }
    }

    keyhook::error failed(const pg::failure& f) const {
        // 23xxx: a constraint the store keeps (K18) refused the write.
        const bool refused = f.sqlstate.size() == 5 && f.sqlstate.compare(0, 2, "23") == 0;
        std::string message = f.message;
        if (!f.sqlstate.empty()) message += " (SQLSTATE " + f.sqlstate + ")";
        if (refused) message = "write refused, the store is unchanged: " + message;
        if (options_.scrub) message = options_.scrub(message);
        return keyhook::error{refused ? keyhook::errc::invalid_value : keyhook::errc::host_failure, shown_, message};
    }

    // After a failure: a broken connection is dropped.
    void settle_failure() {
        if (conn_ && PQstatus(conn_) == CONNECTION_BAD) drop();
    }

    bool connected() { return static_cast<bool>(connected_or_error()); }

    // The connection, made again when it is gone and the pause since the
    // last failed attempt has passed.
    keyhook::result<void> connected_or_error() {
        if (conn_ && PQstatus(conn_) == CONNECTION_OK) return {};
        drop();
        const auto t = steady::now();
        if (t < retry_at_)
            return keyhook::error{keyhook::errc::host_failure, shown_,
                                  "not connected (the last attempt failed; trying again shortly)"};
        auto c = connect();
        if (!c) {
            pause_ = std::min<std::chrono::milliseconds>(std::max<std::chrono::milliseconds>(pause_ * 2, first_pause),
                                                         last_pause);
            retry_at_ = t + pause_;
            return c;
        }
        pause_ = std::chrono::milliseconds{0};
        return {};
    }

    static constexpr std::chrono::milliseconds first_pause{250};
    static constexpr std::chrono::milliseconds last_pause{2000};

    keyhook::result<void> connect() {
        drop();
        const auto deadline = steady::now() + options_.timeout;
        const auto fail = [this](const std::string& why) {
            drop();
            std::string message = "cannot connect to the PostgreSQL store: " + why;
            if (options_.scrub) message = options_.scrub(message);
            return keyhook::error{keyhook::errc::host_failure, shown_, message};
        };
        conn_ = PQconnectStart(conninfo_.c_str());
        if (!conn_) return fail("out of memory");
        if (PQstatus(conn_) == CONNECTION_BAD) return fail(examples::store::postgres_message(PQerrorMessage(conn_)));
        auto poll_state = PGRES_POLLING_WRITING;
        for (;;) {
            if (poll_state == PGRES_POLLING_OK) break;
            if (poll_state == PGRES_POLLING_FAILED)
                return fail(examples::store::postgres_message(PQerrorMessage(conn_)));
            const int ready = wait_socket(poll_state == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline);
            if (ready == 0) return fail("timed out");
            if (ready < 0) return fail("the connection's socket failed");
            poll_state = PQconnectPoll(conn_);
        }
        // libpq would print the server's notices (a FATAL before a cut
        // connection) on standard error; the store's errors say what matters.
        PQsetNoticeProcessor(
            conn_, [](void*, const char*) {}, nullptr);
        try {
            exec("SET client_min_messages = warning", {});
            open_schema();
            if (listen_wanted_) listen();  // before any read, so no announcement falls in between
        } catch (const pg::failure& f) {
            drop();
            auto e = failed(f);
            e.code = keyhook::errc::host_failure;  // a store this program cannot use: exit 3
            return e;
        }
        return {};
    }

    void listen() {
        exec(("LISTEN " + std::string(pg::channel)).c_str(), {});
        listening_ = true;
    }

    // Under a transaction-scoped advisory lock (programs starting together
    // never race to create the tables): a store of this schema version is
    // used as it is, an empty one gets its tables, any other is refused.
    void open_schema() {
        transaction t(*this);
        exec("SELECT pg_advisory_xact_lock(724463)", {});
        const auto exists = [this](const char* table) {
            const auto r = exec("SELECT to_regclass($1) IS NOT NULL", {table});
            return std::string(PQgetvalue(r.get(), 0, 0)) == "t";
        };
        if (exists("keyhook_key_schema")) {
            const auto r = exec(pg::select_schema, {});
            const std::int64_t found = PQgetisnull(r.get(), 0, 0) ? 0 : std::stoll(PQgetvalue(r.get(), 0, 0));
            if (found == 1) {  // an older layout this program moves forward, in this transaction
                exec(pg::migrate_1_to_2, {});
                exec(pg::insert_schema, {std::to_string(pg::key_schema_version)});
                t.commit();
                return;
            }
            if (found != pg::key_schema_version)
                throw pg::failure{
                    "the key store has schema version " + std::to_string(found) +
                        "; this program needs schema version " + std::to_string(pg::key_schema_version) +
                        (found > pg::key_schema_version ? " (the store was written by a newer keyhook)" : ""),
                    {}};
            t.commit();
            return;
        }
        if (exists("keyhook_keys") || exists("keyhook_key_version"))
            throw pg::failure{
                "the database has keyhook_keys without keyhook_key_schema: not a key store this program wrote", {}};
        for (const char* text :
             {pg::create_schema, pg::create_version, pg::insert_version, pg::create_keys, pg::create_order})
            exec(text, {});
        exec(pg::insert_schema, {std::to_string(pg::key_schema_version)});
        t.commit();
    }

    void drop() noexcept {
        if (conn_) PQfinish(conn_);
        conn_ = nullptr;
        listening_ = false;
    }

    void rollback() noexcept {
        if (!conn_ || PQstatus(conn_) != CONNECTION_OK) return;
        try {
            exec("ROLLBACK", {});
        } catch (...) {
            drop();  // a connection that cannot roll back is not used again
        }
    }

    static void sleep_until(steady::time_point deadline) {
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
            if (left <= 0) return;
            ::poll(nullptr, 0, static_cast<int>(std::min<long long>(left, 1000)));
        }
    }

    // poll() on the connection's socket: 1 ready, 0 the deadline passed, -1 failed.
    int wait_socket(short events, steady::time_point deadline) {
        for (;;) {
            const int fd = PQsocket(conn_);
            if (fd < 0) return -1;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
            if (left < 0) return 0;
            pollfd p{fd, events, 0};
            const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left + 1, 60000)));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return -1;
            if (n == 0) {
                if (steady::now() >= deadline) return 0;
                continue;
            }
            return 1;
        }
    }

    bool drain_notifications() {
        bool any = false;
        while (PGnotify* n = PQnotifies(conn_)) {
            any = true;  // only a reason to read: the payload (a version) is not trusted for anything
            PQfreemem(n);
        }
        return any;
    }

    result_ptr exec(const char* text, const std::vector<std::string>& params) {
        std::vector<std::optional<std::string>> p(params.begin(), params.end());
        return exec_nullable(text, p);
    }

    // One statement within the deadline; a failure throws pg::failure with
    // libpq's primary message and SQLSTATE only (never a DETAIL, which may
    // quote a row's values). A statement that times out drops the connection.
    result_ptr exec_nullable(const char* text, const std::vector<std::optional<std::string>>& params) {
        if (!conn_) throw pg::failure{"not connected", {}};
        std::vector<const char*> values;
        values.reserve(params.size());
        for (const auto& v : params) values.push_back(v ? v->c_str() : nullptr);
        const auto deadline = steady::now() + options_.timeout;
        const auto broken = [this](const std::string& why) {
            std::string message = why.empty() ? examples::store::postgres_message(PQerrorMessage(conn_)) : why;
            if (message.empty()) message = "the connection failed";
            drop();
            return pg::failure{message, {}};
        };
        if (!PQsendQueryParams(conn_, text, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr,
                               0))
            throw broken("");
        for (;;) {
            const int f = PQflush(conn_);
            if (f == 0) break;
            if (f < 0) throw broken("");
            const int ready = wait_socket(POLLIN | POLLOUT, deadline);
            if (ready == 0) throw broken("timed out");
            if (ready < 0 || !PQconsumeInput(conn_)) throw broken("");
        }
        result_ptr kept;
        std::optional<pg::failure> error;
        for (;;) {
            while (PQisBusy(conn_)) {
                const int ready = wait_socket(POLLIN, deadline);
                if (ready == 0) throw broken("timed out");
                if (ready < 0 || !PQconsumeInput(conn_)) throw broken("");
            }
            result_ptr r(PQgetResult(conn_));
            if (!r) break;
            const auto status = PQresultStatus(r.get());
            if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
                if (!error) kept = std::move(r);
                continue;
            }
            if (!error) {
                const char* primary = PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY);
                const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
                error = pg::failure{primary ? examples::store::postgres_message(primary)
                                            : examples::store::postgres_message(PQerrorMessage(conn_)),
                                    state ? state : ""};
            }
        }
        if (error) {
            if (PQstatus(conn_) == CONNECTION_BAD) drop();
            throw *error;
        }
        if (!kept) throw broken("");
        return kept;
    }

    std::string conninfo_;
    std::string shown_;
    options options_;
    PGconn* conn_ = nullptr;
    bool listening_ = false;      // this connection has sent LISTEN
    bool listen_wanted_ = false;  // a reader waits for announcements
    steady::time_point retry_at_{};
    std::chrono::milliseconds pause_{0};
};

}  // namespace key_store
