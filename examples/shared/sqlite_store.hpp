// The SQLite store of webhook_deliver (B6, one machine): a file in WAL mode,
// each change in a write transaction (BEGIN IMMEDIATE), so workers on one
// machine may share it. Needs libsqlite3 (Debian libsqlite3-dev) 3.35 or
// later for RETURNING.
#pragma once

#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <sqlite3.h>

#include "shared/delivery_store.hpp"
#include "shared/replay_ids.hpp"

namespace examples::store {

class sqlite_store final : public delivery_store, public replay_id_store {
public:
    explicit sqlite_store(const std::string& path) {
        create_owner_only(path);
        if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                            nullptr) != SQLITE_OK) {
            const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
            sqlite3_close(db_);
            throw std::runtime_error("cannot open the SQLite store: " + why);
        }
        sqlite3_busy_timeout(db_, busy_timeout_ms);  // another worker's transaction is short
        try {
            exec_when_free("PRAGMA journal_mode=WAL");
            exec("PRAGMA synchronous=NORMAL");  // WAL: a committed transaction survives the process's crash
            open_schema();
        } catch (...) {
            sqlite3_close(db_);  // no destructor runs for a constructor that throws
            throw;
        }
    }
    // K18: the store holds signing secrets and authentication values, so a
    // store this program creates is readable by its owner only. SQLite
    // creates a new database file with 0644 less the umask, and gives its
    // -wal, -shm and -journal files the database file's mode: creating the
    // file first, 0600, makes all of them 0600 whatever the umask (a path
    // that is a symlink to no file yet creates the file it names, 0600). An
    // existing file keeps its mode (chmod 600 one an earlier version made).
    static void create_owner_only(const std::string& path) {
        if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) return;
        // The store's own path is the operator's (a symlink to a store elsewhere is
        // followed); the files SQLite derives from it refuse symlinks themselves.
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            throw std::runtime_error("cannot open the SQLite store: cannot create the file: " +
                                     std::string(std::strerror(errno)));
        ::close(fd);
    }

    sqlite_store(const sqlite_store&) = delete;
    sqlite_store& operator=(const sqlite_store&) = delete;
    ~sqlite_store() override { sqlite3_close(db_); }

    std::size_t enqueue(const std::string& tenant, const std::vector<webhook_config>& webhooks,
                        const std::vector<keyhook::delivery_state>& deliveries,
                        keyhook::timestamp created_at = {}) override {
        transaction t(*this);
        std::map<std::string, std::string> endpoints;
        for (const auto& w : webhooks) {
            statement(*this, sql::upsert_webhook).text(1, tenant).text(2, w.name).text(3, w.settings).done();
            endpoints[w.name] = w.endpoint;
        }
        std::size_t added = 0;
        for (const auto& d : deliveries) {
            statement s(*this, sql::insert_delivery);
            s.text(1, to_string(d.id)).text(2, tenant).text(3, d.webhook).integer(4, micros(*d.next_due));
            s.text(5, keyhook::write_delivery_state(d)).integer(6, micros(created_at));
            s.text(7, endpoints.count(d.webhook) ? endpoints[d.webhook] : std::string()).done();
            added += static_cast<std::size_t>(sqlite3_changes(db_));
        }
        t.commit();
        return added;
    }

    std::optional<webhook_row> webhook(const webhook_key& key) override {
        statement s(*this, sql::select_webhook);
        s.text(1, key.tenant).text(2, key.name);
        if (!s.step()) return std::nullopt;
        return webhook_row{s.column_text(0), sqlite3_column_int64(s.get(), 1) != 0};
    }

    std::string delivery_id_key(const std::string& candidate) override {
        return keep_first_setting("deliveryIdKey", candidate);
    }

    std::int64_t clock_epoch(std::int64_t candidate) override {
        return std::stoll(keep_first_setting("clockEpoch", std::to_string(candidate)));
    }

    double clock_scale(double candidate) override {
        char text[32];
        std::snprintf(text, sizeof text, "%.17g", candidate);
        return std::strtod(keep_first_setting("clockScale", text).c_str(), nullptr);
    }

    std::optional<kept_timeline> timeline() override {
        const auto epoch = setting("clockEpoch");
        const auto scale = setting("clockScale");
        if (!epoch || !scale) return std::nullopt;
        return kept_timeline{std::stoll(*epoch), std::strtod(scale->c_str(), nullptr)};
    }

    // B6: the setting `name` as the store has it, `candidate` when it had none
    // (the first writer wins; one transaction).
    std::string keep_first_setting(const char* name, const std::string& candidate) {
        transaction t(*this);
        statement(*this, sql::insert_setting).text(1, name).text(2, candidate).done();
        std::string kept = setting(name).value_or(std::string());
        t.commit();
        return kept;
    }

    std::optional<std::string> setting(const char* name) {
        statement s(*this, sql::select_setting);
        s.text(1, name);
        if (!s.step()) return std::nullopt;
        return s.column_text(0);
    }

    std::uint64_t pending() override {
        statement s(*this, sql::count_pending);
        s.step();
        return static_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 0));
    }

    std::optional<std::int64_t> next_due(std::int64_t real_now) override {
        statement s(*this, sql::next_due);
        s.integer(1, real_now);
        if (!s.step() || sqlite3_column_type(s.get(), 0) == SQLITE_NULL) return std::nullopt;
        return sqlite3_column_int64(s.get(), 0);
    }

    std::vector<stored_delivery> claim(std::int64_t due_by, std::int64_t real_now, std::int64_t lease_until,
                                       const std::string& owner, std::size_t limit) override {
        char text[1024];
        std::snprintf(text, sizeof text, sql::claim_format, "");
        std::vector<stored_delivery> out;
        transaction t(*this);
        {
            statement s(*this, text);
            s.text(1, owner).integer(2, lease_until).integer(3, due_by).integer(4, real_now);
            s.integer(5, static_cast<std::int64_t>(limit));
            while (s.step()) out.push_back(delivery_of(s, 0));
        }
        t.commit();
        return out;
    }

    bool renew(const std::string& id, const std::string& owner, std::int64_t lease_until) override {
        statement(*this, sql::renew).text(1, id).text(2, owner).integer(3, lease_until).done();
        return sqlite3_changes(db_) == 1;  // one statement: its own transaction
    }

    bool record(const stored_delivery& d, const std::string& owner, bool disable_webhook,
                const attempt_detail* made = nullptr) override {
        transaction t(*this);
        statement s(*this, sql::record);
        s.text(1, to_string(d.id)).text(2, owner).text(3, keyhook::write_delivery_state(d));
        optional_integer(s, 4, d.next_due ? std::optional<std::int64_t>(micros(*d.next_due)) : std::nullopt);
        s.text(5, status_text(d.status));
        const auto ended = end_time(d);
        optional_integer(s, 6, ended ? std::optional<std::int64_t>(micros(*ended)) : std::nullopt);
        s.done();
        if (sqlite3_changes(db_) == 0) return false;  // the rollback leaves the row to its new owner
        if (made && !d.attempts.empty()) {
            const auto& a = d.attempts.back();
            statement h(*this, sql::insert_attempt);
            h.text(1, to_string(d.id)).integer(2, d.sequence).integer(3, static_cast<std::int64_t>(d.attempts.size()));
            h.integer(4, micros(a.sent_at)).text(5, outcome_text(a.outcome));
            optional_integer(h, 6,
                             a.outcome.status() ? std::optional<std::int64_t>(*a.outcome.status()) : std::nullopt);
            optional_text(h, 7, retry_after_text(a.retry_after));
            h.integer(8, made->duration.count()).text(9, made->error).text(10, made->response);
            h.integer(11, made->response_cut ? 1 : 0).text(12, made->result).done();
        }
        if (disable_webhook) statement(*this, sql::disable_webhook).text(1, d.tenant).text(2, d.webhook).done();
        t.commit();
        return true;
    }

    // H10, H11: keyhook_endpoints.
    endpoint_row endpoint(const webhook_key& key) override {
        statement s(*this, sql::select_endpoint);
        s.text(1, key.tenant).text(2, key.name);
        if (!s.step()) return {};
        return endpoint_row{s.column_text(0), sqlite3_column_int64(s.get(), 1)};
    }

    bool put_endpoint(const webhook_key& key, const std::string& state, std::int64_t version) override {
        transaction t(*this);
        if (version == 0)
            statement(*this, sql::insert_endpoint).text(1, key.tenant).text(2, key.name).text(3, state).done();
        else
            statement(*this, sql::update_endpoint)
                .text(1, key.tenant)
                .text(2, key.name)
                .text(3, state)
                .integer(4, version)
                .done();
        const bool written = sqlite3_changes(db_) == 1;
        t.commit();
        return written;
    }

    using delivery_store::for_each;
    void for_each(const delivery_filter& filter, const std::function<void(const stored_delivery&)>& f) override {
        const auto statuses = status_parameters(filter);
        std::string after;
        for (;;) {
            std::vector<stored_delivery> batch;
            {
                statement s(*this, sql::page);
                s.text(1, after).integer(2, static_cast<std::int64_t>(read_batch));
                for (int i = 0; i < 4; ++i) s.text(3 + i, statuses[static_cast<std::size_t>(i)]);
                optional_text(s, 7, filter.tenant);
                optional_text(s, 8, filter.webhook);
                optional_integer(
                    s, 9,
                    filter.created_since ? std::optional<std::int64_t>(micros(*filter.created_since)) : std::nullopt);
                while (s.step()) {
                    after = s.column_text(0);
                    batch.push_back(delivery_of(s, 1));
                }
            }
            if (batch.empty()) return;
            for (const auto& d : batch) f(d);
        }
    }

    found_delivery find(const std::string& id) override {
        statement s(*this, sql::find);
        s.text(1, id);
        found_delivery out;
        if (!s.step()) return out;
        if (s.column_text(0) == purged_status)
            out.purged = true;
        else
            out.delivery = delivery_of(s, 1);
        return out;
    }

    std::vector<attempt_record> history(const std::string& id) override {
        statement s(*this, sql::history);
        s.text(1, id);
        std::vector<attempt_record> out;
        while (s.step()) {
            attempt_record r;
            r.sequence = sqlite3_column_int64(s.get(), 0);
            r.number = sqlite3_column_int64(s.get(), 1);
            r.attempt.sent_at = from_micros(sqlite3_column_int64(s.get(), 2));
            r.attempt.outcome = outcome_of(s.column_text(3), column_int(s, 4));
            r.attempt.retry_after = retry_after_of(s.column_text(5));
            if (sqlite3_column_type(s.get(), 6) != SQLITE_NULL) {
                attempt_detail detail;
                detail.duration = std::chrono::microseconds(sqlite3_column_int64(s.get(), 6));
                detail.error = s.column_text(7);
                detail.response = s.column_text(8);
                detail.response_cut = sqlite3_column_int64(s.get(), 9) != 0;
                detail.result = s.column_text(10);
                r.detail = std::move(detail);
            }
            out.push_back(std::move(r));
        }
        return out;
    }

    std::vector<std::string> requeue(const std::vector<requeue_item>& items, keyhook::timestamp due) override {
        std::vector<std::string> queued;
        transaction t(*this);
        for (const auto& item : items) {
            const auto next = requeued_state(item.was, due);
            statement s(*this, sql::requeue);
            s.text(1, to_string(item.was.id)).text(2, status_text(item.was.status)).integer(3, item.was.sequence);
            s.text(4, keyhook::write_delivery_state(next)).integer(5, micros(due));
            optional_text(s, 6, item.endpoint);
            s.done();
            if (sqlite3_changes(db_) == 1) queued.push_back(to_string(item.was.id));
        }
        t.commit();
        return queued;
    }

    enable_outcome enable_webhook(const webhook_key& key,
                                  const std::function<endpoint_enabling(const std::string&)>& read) override {
        char text[256];
        transaction t(*this);  // BEGIN IMMEDIATE: no other writer until it ends
        bool flag = false;
        {
            std::snprintf(text, sizeof text, sql::lock_webhook_format, "");
            statement s(*this, text);
            s.text(1, key.tenant).text(2, key.name);
            if (!s.step()) return enable_outcome::unknown_webhook;
            flag = sqlite3_column_int64(s.get(), 0) != 0;
        }
        std::optional<std::pair<std::string, std::int64_t>> row;
        {
            std::snprintf(text, sizeof text, sql::lock_endpoint_format, "");
            statement s(*this, text);
            s.text(1, key.tenant).text(2, key.name);
            if (s.step()) row.emplace(s.column_text(0), sqlite3_column_int64(s.get(), 1));
        }
        const auto enabling = read(row ? row->first : std::string());
        if (!flag && !enabling.disabled) return enable_outcome::not_disabled;
        statement(*this, sql::enable_webhook).text(1, key.tenant).text(2, key.name).done();
        if (row)
            statement(*this, sql::update_endpoint)
                .text(1, key.tenant)
                .text(2, key.name)
                .text(3, enabling.enabled_state)
                .integer(4, row->second)
                .done();
        t.commit();
        return enable_outcome::enabled;
    }

    std::size_t purge(const delivery_filter& filter) override {
        if (!filter.ended_before) return 0;
        transaction t(*this);
        std::vector<std::string> ids;
        {
            statement s(*this, sql::purge);
            s.integer(1, micros(*filter.ended_before));
            optional_text(s, 2, filter.tenant);
            optional_text(s, 3, filter.webhook);
            while (s.step()) ids.push_back(s.column_text(0));
        }
        for (const auto& id : ids) statement(*this, sql::purge_history).text(1, id).done();
        t.commit();
        return ids.size();
    }

private:
    // B6: in one write transaction, so programs opening a new store together
    // create it once: a store of the current version is used as it is; an
    // empty one gets the tables and its version row; one of version 2 is
    // migrated (O5); any other is refused (check_schema), and nothing is
    // written to it.
    void open_schema() {
        transaction t(*this);
        auto table_exists = [this](const char* name) {
            statement s(*this, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
            s.text(1, name).step();
            return sqlite3_column_int64(s.get(), 0) != 0;
        };
        std::optional<std::int64_t> found;
        if (table_exists("keyhook_schema")) {
            statement s(*this, sql::select_schema);
            if (s.step() && sqlite3_column_type(s.get(), 0) != SQLITE_NULL) found = sqlite3_column_int64(s.get(), 0);
            if (!found) found = 0;  // a version table with no row: not a store this program wrote
        }
        bool old_tables = false;
        for (const char* name : sql::known_tables) old_tables = old_tables || table_exists(name);
        const auto step = check_schema(found, old_tables);
        if (step == schema_step::use) return;  // the current version; the transaction wrote nothing
        if (step == schema_step::create) {
            exec(sql::create_schema);
            statement(*this, sql::insert_schema).integer(1, migrated_schema_version).done();
            exec(sql::create_webhooks);
            exec(sql::create_deliveries);
            exec(sql::create_due_index);
            exec(sql::create_settings);
            exec(sql::create_endpoints);
        }
        migrate_to_3();
        t.commit();
    }

    // Version 2 to 3 (O5), in open_schema's transaction: the new columns and
    // the history table, then each delivery's columns from its state
    // (migrate_row) and its webhook's endpoint as stored now.
    void migrate_to_3() {
        for (const char* text : sql::to_version_3) exec(text);
        std::map<webhook_key, std::string> endpoints;
        {
            statement s(*this, sql::all_webhooks);
            while (s.step())
                endpoints[webhook_key{s.column_text(0), s.column_text(1)}] = endpoint_of_settings(s.column_text(2));
        }
        std::string after;
        for (;;) {
            std::vector<std::tuple<std::string, std::string, std::string, std::string>> rows;
            {
                statement s(*this, sql::migrate_page);
                s.text(1, after).integer(2, static_cast<std::int64_t>(read_batch));
                while (s.step())
                    rows.emplace_back(s.column_text(0), s.column_text(1), s.column_text(2), s.column_text(3));
            }
            if (rows.empty()) break;
            for (const auto& [id, state, tenant, webhook] : rows) {
                after = id;
                const auto m = migrate_row(state, tenant, webhook);
                const auto endpoint = endpoints.find(webhook_key{tenant, webhook});
                statement u(*this, sql::migrate_delivery);
                u.text(1, id).text(2, m.status).integer(3, m.created_at);
                optional_integer(u, 4, m.ended_at);
                u.text(5, endpoint == endpoints.end() ? std::string() : endpoint->second).done();
                for (const auto& r : m.attempts) {
                    statement h(*this, sql::insert_attempt);
                    h.text(1, id).integer(2, r.sequence).integer(3, r.number).integer(4, micros(r.attempt.sent_at));
                    h.text(5, outcome_text(r.attempt.outcome));
                    optional_integer(h, 6,
                                     r.attempt.outcome.status()
                                         ? std::optional<std::int64_t>(*r.attempt.outcome.status())
                                         : std::nullopt);
                    optional_text(h, 7, retry_after_text(r.attempt.retry_after));
                    for (int i = 8; i <= 12; ++i) h.null(i);
                    h.done();
                }
            }
        }
        statement(*this, sql::update_schema).integer(1, schema_version).done();
    }

    [[noreturn]] void fail(const char* what) const {
        throw std::runtime_error(std::string("SQLite store: ") + what + ": " + sqlite3_errmsg(db_));
    }
    void exec(const char* text) {
        if (sqlite3_exec(db_, text, nullptr, nullptr, nullptr) != SQLITE_OK) fail(text);
    }
    // Switching to WAL takes the file's exclusive lock, and SQLite answers
    // SQLITE_BUSY without calling the busy handler while another connection
    // holds it to recover or checkpoint the log (the last one to close does):
    // two workers opening one store at once meet exactly that. Retry for as
    // long as the busy handler would wait.
    void exec_when_free(const char* text) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
        for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(50))) {
            const int rc = sqlite3_exec(db_, text, nullptr, nullptr, nullptr);
            if (rc == SQLITE_OK) return;
            if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) fail(text);
            std::this_thread::sleep_for(pause);
        }
    }
    static constexpr int busy_timeout_ms = 10000;

    class statement {
    public:
        statement(sqlite_store& store, const char* text) : store_(store) {
            if (sqlite3_prepare_v2(store.db_, text, -1, &stmt_, nullptr) != SQLITE_OK) store.fail("prepare");
        }
        statement(const statement&) = delete;
        statement& operator=(const statement&) = delete;
        ~statement() { sqlite3_finalize(stmt_); }
        statement& text(int i, const std::string& v) {
            check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
            return *this;
        }
        statement& integer(int i, std::int64_t v) {
            check(sqlite3_bind_int64(stmt_, i, v));
            return *this;
        }
        statement& null(int i) {
            check(sqlite3_bind_null(stmt_, i));
            return *this;
        }
        // True while there is a row.
        bool step() {
            const int rc = sqlite3_step(stmt_);
            if (rc == SQLITE_ROW) return true;
            if (rc != SQLITE_DONE) store_.fail("step");
            return false;
        }
        void done() {
            while (step()) {
            }
        }
        std::string column_text(int i) {
            const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
            return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i))) : std::string();
        }
        sqlite3_stmt* get() const { return stmt_; }

    private:
        void check(int rc) {
            if (rc != SQLITE_OK) store_.fail("bind");
        }
        sqlite_store& store_;
        sqlite3_stmt* stmt_ = nullptr;
    };

    // A write transaction, rolled back unless committed.
    class transaction {
    public:
        explicit transaction(sqlite_store& store) : store_(store) { store_.exec("BEGIN IMMEDIATE"); }
        transaction(const transaction&) = delete;
        transaction& operator=(const transaction&) = delete;
        ~transaction() {
            if (open_) sqlite3_exec(store_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
        }
        void commit() {
            store_.exec("COMMIT");
            open_ = false;
        }

    private:
        sqlite_store& store_;
        bool open_ = true;
    };

    // The delivery of a row's delivery columns from column `first` on
    // (sql::delivery_columns: state, tenant, webhook, sequence, created_at,
    // ended_at, endpoint).
    static stored_delivery delivery_of(statement& s, int first) {
        auto d = state_of_row(s.column_text(first), s.column_text(first + 1), s.column_text(first + 2));
        d.sequence = sqlite3_column_int64(s.get(), first + 3);
        d.created_at = from_micros(sqlite3_column_int64(s.get(), first + 4));
        if (sqlite3_column_type(s.get(), first + 5) != SQLITE_NULL)
            d.ended_at = from_micros(sqlite3_column_int64(s.get(), first + 5));
        d.endpoint = s.column_text(first + 6);
        return d;
    }
    static std::optional<int> column_int(statement& s, int i) {
        if (sqlite3_column_type(s.get(), i) == SQLITE_NULL) return std::nullopt;
        return static_cast<int>(sqlite3_column_int64(s.get(), i));
    }
    static void optional_integer(statement& s, int i, std::optional<std::int64_t> v) {
        if (v)
            s.integer(i, *v);
        else
            s.null(i);
    }
    static void optional_text(statement& s, int i, const std::optional<std::string>& v) {
        if (v)
            s.text(i, *v);
        else
            s.null(i);
    }

    sqlite3* db_ = nullptr;

public:
    // H9's replay table (replay_ids.hpp; webhook_receiver --store).
    void open_replay_ids(const std::string& scope) override {
        replay_scope_ = scope;
        exec(sql::replay::create_table);
        exec(sql::replay::create_index);
    }

    bool claim_replay_id(const std::string& id, std::int64_t forget_after, std::int64_t now, std::int64_t pending_until,
                         std::size_t prune_limit, std::int64_t& held_until) override {
        char prune[256];
        std::snprintf(prune, sizeof prune, sql::replay::prune_format, "");
        transaction t(*this);
        statement(*this, prune).integer(1, now).integer(2, static_cast<std::int64_t>(prune_limit)).done();
        statement(*this, sql::replay::claim)
            .text(1, replay_scope_)
            .text(2, id)
            .integer(3, forget_after)
            .integer(4, now)
            .integer(5, pending_until)
            .done();
        const bool claimed = sqlite3_changes(db_) == 1;
        held_until = 0;
        if (!claimed) {
            statement s(*this, sql::replay::holder);
            s.text(1, replay_scope_).text(2, id);
            if (s.step()) held_until = sqlite3_column_int64(s.get(), 0);
        }
        t.commit();
        return claimed;
    }

    void accept_replay_id(const std::string& id, std::int64_t token) override {
        statement(*this, sql::replay::accept).text(1, replay_scope_).text(2, id).integer(3, token).done();
    }

    void release_replay_id(const std::string& id, std::int64_t token) override {
        statement(*this, sql::replay::release).text(1, replay_scope_).text(2, id).integer(3, token).done();
    }

private:
    std::string replay_scope_;
};

}  // namespace examples::store
