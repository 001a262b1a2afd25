// The PostgreSQL store of webhook_deliver (B6, many workers): due deliveries
// are claimed with FOR UPDATE SKIP LOCKED, so workers never wait on each
// other's rows, and leased; a worker that stops leaves its rows to the others
// once the lease runs out. Needs libpq (Debian libpq-dev).
#pragma once

#include <cstdlib>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <libpq-fe.h>

#include "shared/delivery_store.hpp"
#include "shared/postgres_text.hpp"
#include "shared/replay_ids.hpp"

namespace examples::store {

class postgres_store final : public delivery_store, public replay_id_store {
public:
    // `conninfo`: a postgresql:// URI or key=value string, as libpq reads it.
    // Messages never hold it (it may hold a password): store_opener.hpp
    // puts the address before them as it may be shown.
    explicit postgres_store(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str())) {
        if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
            // libpq's message names the host and the reason, never the password.
            const std::string why = conn_ ? postgres_message(PQerrorMessage(conn_)) : "out of memory";
            PQfinish(conn_);
            throw std::runtime_error("cannot connect to the PostgreSQL store: " + why);
        }
        try {
            run("SET client_min_messages = warning", {});
            // Workers starting together must not race to create the tables.
            run("SELECT pg_advisory_lock(724461)", {});
            try {
                open_schema();
            } catch (...) {
                if (PQtransactionStatus(conn_) != PQTRANS_IDLE) rollback();
                run("SELECT pg_advisory_unlock(724461)", {});
                throw;
            }
            run("SELECT pg_advisory_unlock(724461)", {});
        } catch (...) {
            PQfinish(conn_);  // no destructor runs for a constructor that throws
            throw;
        }
    }
    postgres_store(const postgres_store&) = delete;
    postgres_store& operator=(const postgres_store&) = delete;
    ~postgres_store() override { PQfinish(conn_); }

    std::size_t enqueue(const std::string& tenant, const std::vector<webhook_config>& webhooks,
                        const std::vector<keyhook::delivery_state>& deliveries,
                        keyhook::timestamp created_at = {}) override {
        run("BEGIN", {});
        std::size_t added = 0;
        try {
            std::map<std::string, std::string> endpoints;
            for (const auto& w : webhooks) {
                run(sql::upsert_webhook, {tenant, w.name, w.settings});
                endpoints[w.name] = w.endpoint;
            }
            for (const auto& d : deliveries) {
                const auto r =
                    run(sql::insert_delivery, {to_string(d.id), tenant, d.webhook, std::to_string(micros(*d.next_due)),
                                               keyhook::write_delivery_state(d), std::to_string(micros(created_at)),
                                               endpoints.count(d.webhook) ? endpoints[d.webhook] : std::string()});
                added += static_cast<std::size_t>(std::stoul(PQcmdTuples(r.get())));
            }
            run("COMMIT", {});
        } catch (...) {
            rollback();
            throw;
        }
        return added;
    }

    std::optional<webhook_row> webhook(const webhook_key& key) override {
        const auto r = run(sql::select_webhook, {key.tenant, key.name});
        if (PQntuples(r.get()) == 0) return std::nullopt;
        return webhook_row{PQgetvalue(r.get(), 0, 0), std::string(PQgetvalue(r.get(), 0, 1)) != "0"};
    }

    std::string delivery_id_key(const std::string& candidate) override {
        run(sql::insert_setting, {"deliveryIdKey", candidate});
        const auto r = run(sql::select_setting, {"deliveryIdKey"});
        return PQntuples(r.get()) == 0 ? std::string() : std::string(PQgetvalue(r.get(), 0, 0));
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
        const auto epoch = run(sql::select_setting, {"clockEpoch"});
        const auto scale = run(sql::select_setting, {"clockScale"});
        if (PQntuples(epoch.get()) == 0 || PQntuples(scale.get()) == 0) return std::nullopt;
        return kept_timeline{std::stoll(PQgetvalue(epoch.get(), 0, 0)),
                             std::strtod(PQgetvalue(scale.get(), 0, 0), nullptr)};
    }

    // B6: the setting `name` as the store has it, `candidate` when it had none
    // (the first writer wins).
    std::string keep_first_setting(const char* name, const std::string& candidate) {
        run(sql::insert_setting, {name, candidate});
        const auto r = run(sql::select_setting, {name});
        if (PQntuples(r.get()) == 0)
            throw std::runtime_error(std::string("PostgreSQL store: the setting ") + name + " was not kept");
        return PQgetvalue(r.get(), 0, 0);
    }

    std::uint64_t pending() override {
        const auto r = run(sql::count_pending, {});
        return std::stoull(PQgetvalue(r.get(), 0, 0));
    }

    std::uint64_t disabled_webhooks() override {
        const auto r = run(sql::count_disabled, {});
        return std::stoull(PQgetvalue(r.get(), 0, 0));
    }

    std::optional<std::int64_t> next_due(std::int64_t real_now) override {
        const auto r = run(sql::next_due, {std::to_string(real_now)});
        if (PQgetisnull(r.get(), 0, 0)) return std::nullopt;
        return std::stoll(PQgetvalue(r.get(), 0, 0));
    }

    std::vector<stored_delivery> claim(std::int64_t due_by, std::int64_t real_now, std::int64_t lease_until,
                                       const std::string& owner, std::size_t limit) override {
        char text[1024];
        std::snprintf(text, sizeof text, sql::claim_format, " FOR UPDATE SKIP LOCKED");
        const auto r = run(text, {owner, std::to_string(lease_until), std::to_string(due_by), std::to_string(real_now),
                                  std::to_string(limit)});
        std::vector<stored_delivery> out;
        for (int i = 0; i < PQntuples(r.get()); ++i) out.push_back(delivery_of(r.get(), i, 0));
        return out;
    }

    bool renew(const std::string& id, const std::string& owner, std::int64_t lease_until) override {
        const auto r = run(sql::renew, {id, owner, std::to_string(lease_until)});
        return std::string(PQcmdTuples(r.get())) == "1";
    }

    bool record(const stored_delivery& d, const std::string& owner, bool disable_webhook,
                const attempt_detail* made = nullptr) override {
        run("BEGIN", {});
        try {
            const auto ended = end_time(d);
            const std::vector<std::optional<std::string>> params{
                to_string(d.id),
                owner,
                keyhook::write_delivery_state(d),
                d.next_due ? std::optional<std::string>(std::to_string(micros(*d.next_due))) : std::nullopt,
                status_text(d.status),
                ended ? std::optional<std::string>(std::to_string(micros(*ended))) : std::nullopt};
            const auto r = run_nullable(sql::record, params);
            if (std::string(PQcmdTuples(r.get())) == "0") {
                rollback();
                return false;
            }
            if (made && !d.attempts.empty()) {
                const auto& a = d.attempts.back();
                run_nullable(sql::insert_attempt,
                             {to_string(d.id), std::to_string(d.sequence), std::to_string(d.attempts.size()),
                              std::to_string(micros(a.sent_at)), outcome_text(a.outcome),
                              a.outcome.status() ? std::optional<std::string>(std::to_string(*a.outcome.status()))
                                                 : std::nullopt,
                              retry_after_text(a.retry_after), std::to_string(made->duration.count()), made->error,
                              made->response, std::string(made->response_cut ? "1" : "0"), made->result});
            }
            if (disable_webhook) run(sql::disable_webhook, {d.tenant, d.webhook});
            run("COMMIT", {});
        } catch (...) {
            rollback();
            throw;
        }
        return true;
    }

    // H10, H11: keyhook_endpoints.
    endpoint_row endpoint(const webhook_key& key) override {
        const auto r = run(sql::select_endpoint, {key.tenant, key.name});
        if (PQntuples(r.get()) == 0) return {};
        return endpoint_row{PQgetvalue(r.get(), 0, 0), std::stoll(PQgetvalue(r.get(), 0, 1))};
    }

    bool put_endpoint(const webhook_key& key, const std::string& state, std::int64_t version) override {
        const auto r = version == 0 ? run(sql::insert_endpoint, {key.tenant, key.name, state})
                                    : run(sql::update_endpoint, {key.tenant, key.name, state, std::to_string(version)});
        return std::string(PQcmdTuples(r.get())) == "1";
    }

    using delivery_store::for_each;
    void for_each(const delivery_filter& filter, const std::function<void(const stored_delivery&)>& f) override {
        const auto statuses = status_parameters(filter);
        std::string after;
        for (;;) {
            const auto r =
                run_nullable(sql::page, {after, std::to_string(read_batch), statuses[0], statuses[1], statuses[2],
                                         statuses[3], filter.tenant, filter.webhook,
                                         filter.created_since
                                             ? std::optional<std::string>(std::to_string(micros(*filter.created_since)))
                                             : std::nullopt});
            const int n = PQntuples(r.get());
            if (n == 0) return;
            for (int i = 0; i < n; ++i) f(delivery_of(r.get(), i, 1));
            after = PQgetvalue(r.get(), n - 1, 0);
        }
    }

    found_delivery find(const std::string& id) override {
        const auto r = run(sql::find, {id});
        found_delivery out;
        if (PQntuples(r.get()) == 0) return out;
        if (std::string(PQgetvalue(r.get(), 0, 0)) == purged_status)
            out.purged = true;
        else
            out.delivery = delivery_of(r.get(), 0, 1);
        return out;
    }

    std::vector<attempt_record> history(const std::string& id) override {
        const auto r = run(sql::history, {id});
        std::vector<attempt_record> out;
        for (int i = 0; i < PQntuples(r.get()); ++i) {
            const auto text = [&](int c) { return std::string(PQgetvalue(r.get(), i, c)); };
            const auto null = [&](int c) { return PQgetisnull(r.get(), i, c) != 0; };
            attempt_record a;
            a.sequence = std::stoll(text(0));
            a.number = std::stoll(text(1));
            a.attempt.sent_at = from_micros(std::stoll(text(2)));
            a.attempt.outcome = outcome_of(text(3), null(4) ? std::nullopt : std::optional<int>(std::stoi(text(4))));
            a.attempt.retry_after = retry_after_of(text(5));
            if (!null(6)) {
                attempt_detail detail;
                detail.duration = std::chrono::microseconds(std::stoll(text(6)));
                detail.error = text(7);
                detail.response = text(8);
                detail.response_cut = text(9) == "1";
                detail.result = text(10);
                a.detail = std::move(detail);
            }
            out.push_back(std::move(a));
        }
        return out;
    }

    std::vector<std::string> requeue(const std::vector<requeue_item>& items, keyhook::timestamp due) override {
        std::vector<std::string> queued;
        run("BEGIN", {});
        try {
            for (const auto& item : items) {
                const auto next = requeued_state(item.was, due);
                // READ COMMITTED: a racing action's UPDATE of the row waits for
                // this one, then finds its status or sequence changed.
                const auto r =
                    run_nullable(sql::requeue, {to_string(item.was.id), status_text(item.was.status),
                                                std::to_string(item.was.sequence), keyhook::write_delivery_state(next),
                                                std::to_string(micros(due)), item.endpoint});
                if (std::string(PQcmdTuples(r.get())) == "1") queued.push_back(to_string(item.was.id));
            }
            run("COMMIT", {});
        } catch (...) {
            rollback();
            throw;
        }
        return queued;
    }

    enable_outcome enable_webhook(const webhook_key& key,
                                  const std::function<endpoint_enabling(const std::string&)>& read) override {
        char text[256];
        run("BEGIN", {});
        try {
            // Both rows locked: a racing enable waits, then reads them enabled;
            // a worker's compare-and-set waits, then finds the version moved.
            std::snprintf(text, sizeof text, sql::lock_webhook_format, " FOR UPDATE");
            const auto hook = run(text, {key.tenant, key.name});
            if (PQntuples(hook.get()) == 0) {
                rollback();
                return enable_outcome::unknown_webhook;
            }
            const bool flag = std::string(PQgetvalue(hook.get(), 0, 0)) != "0";
            std::snprintf(text, sizeof text, sql::lock_endpoint_format, " FOR UPDATE");
            const auto row = run(text, {key.tenant, key.name});
            const bool has_row = PQntuples(row.get()) == 1;
            const auto enabling = read(has_row ? std::string(PQgetvalue(row.get(), 0, 0)) : std::string());
            if (!flag && !enabling.disabled) {
                rollback();
                return enable_outcome::not_disabled;
            }
            run(sql::enable_webhook, {key.tenant, key.name});
            if (has_row)
                run(sql::update_endpoint,
                    {key.tenant, key.name, enabling.enabled_state, std::string(PQgetvalue(row.get(), 0, 1))});
            run("COMMIT", {});
        } catch (...) {
            rollback();
            throw;
        }
        return enable_outcome::enabled;
    }

    std::size_t purge(const delivery_filter& filter) override {
        if (!filter.ended_before) return 0;
        run("BEGIN", {});
        try {
            const auto r =
                run_nullable(sql::purge, {std::to_string(micros(*filter.ended_before)), filter.tenant, filter.webhook});
            const int n = PQntuples(r.get());
            for (int i = 0; i < n; ++i) run(sql::purge_history, {PQgetvalue(r.get(), i, 0)});
            run("COMMIT", {});
            return static_cast<std::size_t>(n);
        } catch (...) {
            rollback();
            throw;
        }
    }

private:
    // B6, under the advisory lock: a store of the current version is used as
    // it is; an empty one gets the tables and its version row in one
    // transaction; one of version 2 is migrated in one transaction (O5);
    // any other is refused (check_schema), and nothing is written.
    void open_schema() {
        const auto exists = [this](const char* table) {
            const auto r = run("SELECT to_regclass(?1) IS NOT NULL", {table});
            return std::string(PQgetvalue(r.get(), 0, 0)) == "t";
        };
        std::optional<std::int64_t> found;
        if (exists("keyhook_schema")) {
            const auto r = run(sql::select_schema, {});
            found = PQgetisnull(r.get(), 0, 0) ? 0 : std::stoll(PQgetvalue(r.get(), 0, 0));
        }
        bool old_tables = false;
        for (const char* table : sql::known_tables) old_tables = old_tables || exists(table);
        const auto step = check_schema(found, old_tables);
        if (step == schema_step::use) return;
        run("BEGIN", {});
        if (step == schema_step::create) {
            run(sql::create_schema, {});
            run(sql::insert_schema, {std::to_string(migrated_schema_version)});
            for (const char* text : {sql::create_webhooks, sql::create_deliveries, sql::create_due_index,
                                     sql::create_settings, sql::create_endpoints})
                run(text, {});
        }
        migrate_to_3();
        run("COMMIT", {});
    }

    // Version 2 to 3 (O5), in open_schema's transaction: the new columns and
    // the history table, then each delivery's columns from its state
    // (migrate_row) and its webhook's endpoint as stored now.
    void migrate_to_3() {
        for (const char* text : sql::to_version_3) run(text, {});
        std::map<webhook_key, std::string> endpoints;
        {
            const auto r = run(sql::all_webhooks, {});
            for (int i = 0; i < PQntuples(r.get()); ++i)
                endpoints[webhook_key{PQgetvalue(r.get(), i, 0), PQgetvalue(r.get(), i, 1)}] =
                    endpoint_of_settings(PQgetvalue(r.get(), i, 2));
        }
        std::string after;
        for (;;) {
            const auto r = run(sql::migrate_page, {after, std::to_string(read_batch)});
            const int n = PQntuples(r.get());
            if (n == 0) break;
            for (int i = 0; i < n; ++i) {
                const std::string id = PQgetvalue(r.get(), i, 0), tenant = PQgetvalue(r.get(), i, 2),
                                  webhook = PQgetvalue(r.get(), i, 3);
                const auto m = migrate_row(PQgetvalue(r.get(), i, 1), tenant, webhook);
                const auto endpoint = endpoints.find(webhook_key{tenant, webhook});
                run_nullable(sql::migrate_delivery,
                             {id, m.status, std::to_string(m.created_at),
                              m.ended_at ? std::optional<std::string>(std::to_string(*m.ended_at)) : std::nullopt,
                              endpoint == endpoints.end() ? std::string() : endpoint->second});
                for (const auto& a : m.attempts)
                    run_nullable(sql::insert_attempt,
                                 {id, std::to_string(a.sequence), std::to_string(a.number),
                                  std::to_string(micros(a.attempt.sent_at)), outcome_text(a.attempt.outcome),
                                  a.attempt.outcome.status()
                                      ? std::optional<std::string>(std::to_string(*a.attempt.outcome.status()))
                                      : std::nullopt,
                                  retry_after_text(a.attempt.retry_after), std::nullopt, std::nullopt, std::nullopt,
                                  std::nullopt, std::nullopt});
            }
            after = PQgetvalue(r.get(), n - 1, 0);
        }
        run(sql::update_schema, {std::to_string(schema_version)});
    }

    // The delivery of row `i`'s delivery columns from column `first` on
    // (sql::delivery_columns: state, tenant, webhook, sequence, created_at,
    // ended_at, endpoint).
    static stored_delivery delivery_of(const PGresult* r, int i, int first) {
        auto d = state_of_row(PQgetvalue(r, i, first), PQgetvalue(r, i, first + 1), PQgetvalue(r, i, first + 2));
        d.sequence = std::stoll(PQgetvalue(r, i, first + 3));
        d.created_at = from_micros(std::stoll(PQgetvalue(r, i, first + 4)));
        if (!PQgetisnull(r, i, first + 5)) d.ended_at = from_micros(std::stoll(PQgetvalue(r, i, first + 5)));
        d.endpoint = PQgetvalue(r, i, first + 6);
        return d;
    }

    struct result_free {
        void operator()(PGresult* r) const noexcept { PQclear(r); }
    };
    using result_ptr = std::unique_ptr<PGresult, result_free>;

    // ?N placeholders become $N.
    static std::string dialect(const char* text) {
        std::string s(text);
        for (auto& c : s)
            if (c == '?') c = '$';
        return s;
    }

    result_ptr run(const char* text, const std::vector<std::string>& params) {
        std::vector<std::optional<std::string>> p(params.begin(), params.end());
        return run_nullable(text, p);
    }

    result_ptr run_nullable(const char* text, const std::vector<std::optional<std::string>>& params) {
        std::vector<const char*> values;
        for (const auto& v : params) values.push_back(v ? v->c_str() : nullptr);
        result_ptr r(PQexecParams(conn_, dialect(text).c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                                  nullptr, nullptr, 0));
        const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
            throw std::runtime_error("PostgreSQL store: " + postgres_message(PQerrorMessage(conn_)));
        return r;
    }

    void rollback() noexcept { PQclear(PQexec(conn_, "ROLLBACK")); }

    PGconn* conn_;

public:
    // H9's replay table (replay_ids.hpp; webhook_receiver --store).
    void open_replay_ids(const std::string& scope) override {
        replay_scope_ = scope;
        // Receivers starting together must not race to create the table.
        run("SELECT pg_advisory_lock(724462)", {});
        run(sql::replay::create_table, {});
        run(sql::replay::create_index, {});
        run("SELECT pg_advisory_unlock(724462)", {});
    }

    bool claim_replay_id(const std::string& id, std::int64_t forget_after, std::int64_t now, std::int64_t pending_until,
                         std::size_t prune_limit, std::int64_t& held_until) override {
        char prune[256];
        std::snprintf(prune, sizeof prune, sql::replay::prune_format, " FOR UPDATE SKIP LOCKED");
        // A receiver outlives a restart of the server: a connection found
        // broken is made again. Only at BEGIN, where nothing was done yet: a
        // claim whose COMMIT was lost is not retried (it may have committed,
        // and a retry would take the id for a replay). Other failures throw,
        // and the receiver answers 503.
        if (PQstatus(conn_) == CONNECTION_BAD) PQreset(conn_);
        try {
            run("BEGIN", {});
        } catch (const std::runtime_error&) {
            if (PQstatus(conn_) != CONNECTION_BAD) throw;
            PQreset(conn_);
            run("BEGIN", {});
        }
        try {
            run(prune, {std::to_string(now), std::to_string(prune_limit)});
            const auto r = run(sql::replay::claim, {replay_scope_, id, std::to_string(forget_after),
                                                    std::to_string(now), std::to_string(pending_until)});
            const bool claimed = std::string(PQcmdTuples(r.get())) == "1";
            held_until = 0;
            if (!claimed) {
                const auto h = run(sql::replay::holder, {replay_scope_, id});
                if (PQntuples(h.get()) == 1) held_until = std::stoll(PQgetvalue(h.get(), 0, 0));
            }
            run("COMMIT", {});
            return claimed;
        } catch (...) {
            rollback();
            throw;
        }
    }

    // One statement each, its own transaction; a failure throws (the receiver logs it).
    void accept_replay_id(const std::string& id, std::int64_t token) override {
        run(sql::replay::accept, {replay_scope_, id, std::to_string(token)});
    }
    void release_replay_id(const std::string& id, std::int64_t token) override {
        run(sql::replay::release, {replay_scope_, id, std::to_string(token)});
    }

private:
    std::string replay_scope_;
};

}  // namespace examples::store
