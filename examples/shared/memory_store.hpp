// The in-memory store of webhook_deliver (B6's interface, one process): what
// the SQLite and PostgreSQL stores keep in tables, kept in maps, so that
// webhook_deliver without --store runs the one delivery loop the stores run
// (as leveldb's memenv stands in for its Env). Lost when the process ends.
//
// It behaves as the SQL stores do, row for row (tests/webhook_cli's store
// tests run the same cases on each): enqueueing by id adds nothing twice, a
// claim takes due deliveries no live lease holds, the earliest first (and of
// those due at once, the first enqueued first), a renewal or a record
// needs the lease's owner, the endpoint rows are written by compare-and-set,
// the settings keep their first value, the operator's actions (O5) change
// only deliveries in the status and sequence they were read in, and a purged
// delivery stays as a tombstone. One mutex makes each call one
// transaction, so threads may share it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "shared/delivery_store.hpp"

namespace examples::store {

class memory_store final : public delivery_store {
public:
    std::size_t enqueue(const std::string& tenant, const std::vector<webhook_config>& webhooks,
                        const std::vector<keyhook::delivery_state>& deliveries,
                        keyhook::timestamp created_at = {}) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::map<std::string, std::string> endpoints;
        for (const auto& w : webhooks) {
            webhooks_[webhook_key{tenant, w.name}].settings = w.settings;
            endpoints[w.name] = w.endpoint;
        }
        std::size_t added = 0;
        for (const auto& d : deliveries) {
            row r;
            static_cast<keyhook::delivery_state&>(r.delivery) = d;
            r.delivery.tenant = tenant;
            r.delivery.created_at = created_at;
            if (const auto e = endpoints.find(d.webhook); e != endpoints.end()) r.delivery.endpoint = e->second;
            r.order = next_order_++;
            added += deliveries_.emplace(to_string(d.id), std::move(r)).second ? 1 : 0;
        }
        return added;
    }

    std::optional<webhook_row> webhook(const webhook_key& key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = webhooks_.find(key);
        if (found == webhooks_.end()) return std::nullopt;
        return found->second;
    }

    std::string delivery_id_key(const std::string& candidate) override {
        return keep_first_setting("deliveryIdKey", candidate);
    }
    std::int64_t clock_epoch(std::int64_t candidate) override {
        return std::stoll(keep_first_setting("clockEpoch", std::to_string(candidate)));
    }
    double clock_scale(double candidate) override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!clock_scale_) clock_scale_ = candidate;
        return *clock_scale_;
    }
    std::optional<kept_timeline> timeline() override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto epoch = settings_.find("clockEpoch");
        if (epoch == settings_.end() || !clock_scale_) return std::nullopt;
        return kept_timeline{std::stoll(epoch->second), *clock_scale_};
    }

    std::uint64_t pending() override {
        std::lock_guard<std::mutex> lock(mutex_);
        return static_cast<std::uint64_t>(std::count_if(deliveries_.begin(), deliveries_.end(),
                                                        [](const auto& r) { return r.second.due().has_value(); }));
    }

    std::optional<std::int64_t> next_due(std::int64_t real_now) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::optional<std::int64_t> earliest;
        for (const auto& [id, r] : deliveries_)
            if (r.due() && r.lease_until < real_now && (!earliest || *r.due() < *earliest)) earliest = r.due();
        return earliest;
    }

    std::vector<stored_delivery> claim(std::int64_t due_by, std::int64_t real_now, std::int64_t lease_until,
                                       const std::string& owner, std::size_t limit) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<row*> due;
        for (auto& [id, r] : deliveries_)
            if (r.due() && *r.due() <= due_by && r.lease_until < real_now) due.push_back(&r);
        std::sort(due.begin(), due.end(), [](const row* a, const row* b) {
            return std::make_tuple(*a->due(), a->order) < std::make_tuple(*b->due(), b->order);
        });
        if (due.size() > limit) due.resize(limit);
        std::vector<stored_delivery> out;
        out.reserve(due.size());
        for (row* r : due) {
            r->owner = owner;
            r->lease_until = lease_until;
            out.push_back(r->delivery);
        }
        return out;
    }

    bool renew(const std::string& id, const std::string& owner, std::int64_t lease_until) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = deliveries_.find(id);
        if (found == deliveries_.end() || found->second.owner != owner || !found->second.due()) return false;
        found->second.lease_until = std::max(found->second.lease_until, lease_until);
        return true;
    }

    bool record(const stored_delivery& d, const std::string& owner, bool disable_webhook,
                const attempt_detail* made = nullptr) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = deliveries_.find(to_string(d.id));
        if (found == deliveries_.end() || found->second.owner != owner) return false;
        auto& r = found->second;
        // The row's tenant, sequence, creation and endpoint stay.
        static_cast<keyhook::delivery_state&>(r.delivery) = d;
        r.delivery.ended_at = d.ended_at;
        r.delivery.ended_at = end_time(r.delivery);
        r.owner.reset();
        r.lease_until = 0;
        if (made && !d.attempts.empty())
            r.history.push_back(attempt_record{r.delivery.sequence, static_cast<std::int64_t>(d.attempts.size()),
                                               d.attempts.back(), *made});
        if (disable_webhook)
            if (const auto hook = webhooks_.find(r.delivery.key()); hook != webhooks_.end())
                hook->second.disabled = true;
        return true;
    }

    endpoint_row endpoint(const webhook_key& key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = endpoints_.find(key);
        return found == endpoints_.end() ? endpoint_row{} : found->second;
    }

    bool put_endpoint(const webhook_key& key, const std::string& state, std::int64_t version) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = endpoints_.find(key);
        if (version == 0) {
            if (found != endpoints_.end()) return false;
            endpoints_.emplace(key, endpoint_row{state, 1});
            return true;
        }
        if (found == endpoints_.end() || found->second.version != version) return false;
        found->second = endpoint_row{state, version + 1};
        return true;
    }

    using delivery_store::for_each;
    void for_each(const delivery_filter& filter, const std::function<void(const stored_delivery&)>& f) override {
        // Copied in batches, the mutex released while `f` runs (it may call the store).
        std::string after;
        for (bool first = true;; first = false) {
            std::vector<stored_delivery> batch;
            bool last = false;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                auto at = first ? deliveries_.begin() : deliveries_.upper_bound(after);
                for (; at != deliveries_.end() && batch.size() < read_batch; ++at) {
                    after = at->first;
                    if (takes(filter, at->second)) batch.push_back(at->second.delivery);
                }
                last = at == deliveries_.end();
            }
            for (const auto& d : batch) f(d);
            if (last) return;
        }
    }

    found_delivery find(const std::string& id) override {
        std::lock_guard<std::mutex> lock(mutex_);
        found_delivery out;
        const auto found = deliveries_.find(id);
        if (found == deliveries_.end()) return out;
        if (found->second.purged)
            out.purged = true;
        else
            out.delivery = found->second.delivery;
        return out;
    }

    std::vector<attempt_record> history(const std::string& id) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = deliveries_.find(id);
        return found == deliveries_.end() ? std::vector<attempt_record>{} : found->second.history;
    }

    std::vector<std::string> requeue(const std::vector<requeue_item>& items, keyhook::timestamp due) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<std::string> queued;
        for (const auto& item : items) {
            const auto found = deliveries_.find(to_string(item.was.id));
            if (found == deliveries_.end()) continue;
            auto& r = found->second;
            // Only from the ended status and sequence it was read in.
            if (r.purged || r.delivery.status == keyhook::delivery_status::pending ||
                r.delivery.status != item.was.status || r.delivery.sequence != item.was.sequence)
                continue;
            auto next = requeued_state(r.delivery, due);
            if (item.endpoint) next.endpoint = *item.endpoint;
            r.delivery = std::move(next);
            r.owner.reset();
            r.lease_until = 0;
            queued.push_back(found->first);
        }
        return queued;
    }

    enable_outcome enable_webhook(const webhook_key& key,
                                  const std::function<endpoint_enabling(const std::string&)>& read) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto hook = webhooks_.find(key);
        if (hook == webhooks_.end()) return enable_outcome::unknown_webhook;
        const auto state = endpoints_.find(key);
        const auto enabling = read(state == endpoints_.end() ? std::string() : state->second.state);
        if (!hook->second.disabled && !enabling.disabled) return enable_outcome::not_disabled;
        hook->second.disabled = false;
        if (state != endpoints_.end()) state->second = endpoint_row{enabling.enabled_state, state->second.version + 1};
        return enable_outcome::enabled;
    }

    std::size_t purge(const delivery_filter& filter) override {
        if (!filter.ended_before) return 0;
        std::lock_guard<std::mutex> lock(mutex_);
        std::size_t purged = 0;
        for (auto& [id, r] : deliveries_) {
            const auto& d = r.delivery;
            if (r.purged || d.status == keyhook::delivery_status::pending || !d.ended_at ||
                *d.ended_at >= *filter.ended_before || (filter.tenant && d.tenant != *filter.tenant) ||
                (filter.webhook && d.webhook != *filter.webhook))
                continue;
            // A tombstone: the id (the map's key) and whose it was; no body, no history.
            r.purged = true;
            r.delivery.body.clear();
            r.delivery.attempts.clear();
            r.delivery.endpoint.clear();
            r.history.clear();
            ++purged;
        }
        return purged;
    }

private:
    struct row {
        stored_delivery delivery;          // its state (next_due: when it is due, none once ended)
        std::uint64_t order = 0;           // enqueue order: of deliveries due at once, the first enqueued first
        std::optional<std::string> owner;  // the lease's worker
        std::int64_t lease_until = 0;      // real time
        std::vector<attempt_record> history;
        bool purged = false;  // a tombstone (O5)
        [[nodiscard]] std::optional<std::int64_t> due() const {
            if (purged || !delivery.next_due) return std::nullopt;
            return micros(*delivery.next_due);
        }
    };

    static bool takes(const delivery_filter& f, const row& r) {
        const auto& d = r.delivery;
        if (r.purged) return false;
        if (!f.statuses.empty() && std::find(f.statuses.begin(), f.statuses.end(), d.status) == f.statuses.end())
            return false;
        if (f.tenant && d.tenant != *f.tenant) return false;
        if (f.webhook && d.webhook != *f.webhook) return false;
        return !f.created_since || d.created_at >= *f.created_since;
    }

    std::string keep_first_setting(const std::string& name, const std::string& candidate) {
        std::lock_guard<std::mutex> lock(mutex_);
        return settings_.emplace(name, candidate).first->second;
    }

    std::mutex mutex_;
    std::map<std::string, row> deliveries_;  // by id: for_each's order
    std::map<webhook_key, webhook_row> webhooks_;
    std::map<webhook_key, endpoint_row> endpoints_;
    std::map<std::string, std::string> settings_;
    std::optional<double> clock_scale_;
    std::uint64_t next_order_ = 0;
};

}  // namespace examples::store
