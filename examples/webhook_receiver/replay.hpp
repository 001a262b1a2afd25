// H9's replay table: the webhook-ids accepted within the tolerance window.
// The receiver talks to it through `replay_table`, so a store shared by
// several receivers (B6) can stand in for the in-memory one.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "keyhook/timestamps.hpp"

namespace webhook_receiver {

// H9 and B6: an id is *pending* from its claim until its delivery's line is
// written (accept), *accepted* after. Only an accepted id is answered
// "already accepted"; a copy arriving while the id is pending gets 503 with
// Retry-After, never 200, so a receiver that dies between its claim and its
// line loses nothing: the sender retries.
class replay_table {
public:
    enum class outcome {
        claimed,      // not seen before (or its pending claim was taken over): now pending
                      // here; the caller writes the line, then calls accept (or release)
        replay,       // accepted before within the window: answer 2xx, process nothing
        pending,      // pending at another receiver (or request): 503, Retry-After
        full,         // not seen, and no room: answer 503 (nothing recorded)
        unavailable,  // the store could not answer: 503 (nothing processed)
    };
    replay_table() = default;
    replay_table(const replay_table&) = delete;
    replay_table& operator=(const replay_table&) = delete;
    virtual ~replay_table() = default;

    // One step, atomic for concurrent callers (and, in a store, for
    // concurrent receivers): two claims of one id never both see `claimed`
    // (but for a takeover of a claim pending past its bound). For `pending`,
    // `retry_after` is when to try again: at least 1 s, at most the bound.
    virtual outcome claim(const std::string& id, keyhook::timestamp signed_at, keyhook::timestamp now,
                          std::chrono::seconds& retry_after) = 0;
    outcome claim(const std::string& id, keyhook::timestamp signed_at, keyhook::timestamp now) {
        std::chrono::seconds ignored{0};
        return claim(id, signed_at, now, ignored);
    }

    // The id this caller claimed is accepted: its line is written.
    virtual void accept(const std::string& id) = 0;

    // Gives back an id claimed for a delivery that was then not processed
    // (its line could not be written): the sender's retry is processed, not
    // taken for a replay. Nothing when the id is not held.
    virtual void release(const std::string& id) = 0;
};

// In memory, O(log n) per claim: the ids in a hash map, and an index by the
// time each is forgotten, so pruning visits only ids that have expired. An id
// is kept until two windows past its signing time (a delivery signed up to a
// window in the future is still fresh a window later); older ones would be
// refused as stale anyway. A full table answers `full` rather than forget an
// id early (which would let a replay through).
class memory_replay_table final : public replay_table {
public:
    memory_replay_table(std::chrono::seconds window, std::size_t capacity) : window_(window), capacity_(capacity) {}

    using replay_table::claim;
    // A pending id is held by a request of this process, which either
    // accepts or releases it (it has no bound: the process is alive).
    outcome claim(const std::string& id, keyhook::timestamp signed_at, keyhook::timestamp now,
                  std::chrono::seconds& retry_after) override {
        std::lock_guard<std::mutex> lock(mutex_);
        prune(now);
        if (const auto held = ids_.find(id); held != ids_.end()) {
            if (pending_.count(id) == 0) return outcome::replay;
            retry_after = std::chrono::seconds(1);
            return outcome::pending;
        }
        if (ids_.size() >= capacity_) return outcome::full;
        // Saturating: a window of seconds::max() keeps every id, never wraps.
        const auto forget_after = keyhook::add_saturating(keyhook::add_saturating(signed_at, window_), window_);
        const auto at = ids_.emplace(id, by_expiry_.end()).first;
        at->second = by_expiry_.emplace(forget_after, &at->first);
        pending_.insert(id);
        return outcome::claimed;
    }

    void accept(const std::string& id) override {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_.erase(id);
    }

    void release(const std::string& id) override {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_.erase(id);
        const auto at = ids_.find(id);
        if (at == ids_.end()) return;
        by_expiry_.erase(at->second);  // O(1): the id holds its place in the index
        ids_.erase(at);
    }

    [[nodiscard]] std::size_t size() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return ids_.size();
    }
    // Ids examined by pruning since construction: each is examined once, when
    // it is forgotten (tests check that filling the table is not quadratic).
    [[nodiscard]] std::size_t examined() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return examined_;
    }

private:
    void prune(keyhook::timestamp now) {
        while (!by_expiry_.empty() && by_expiry_.begin()->first < now) {
            ++examined_;
            pending_.erase(*by_expiry_.begin()->second);
            ids_.erase(ids_.find(*by_expiry_.begin()->second));
            by_expiry_.erase(by_expiry_.begin());
        }
    }

    std::chrono::seconds window_;
    std::size_t capacity_;
    mutable std::mutex mutex_;
    // Keys of an unordered_map stay where they are until erased: the index
    // points at them rather than copying each id.
    // Each id holds its entry in the index, so giving one back costs O(1)
    // however many ids share its expiry (signing times are whole seconds).
    using expiry_index = std::multimap<keyhook::timestamp, const std::string*>;
    expiry_index by_expiry_;
    std::unordered_map<std::string, expiry_index::iterator> ids_;
    std::unordered_set<std::string> pending_;  // claimed, line not yet written
    std::size_t examined_ = 0;
};

}  // namespace webhook_receiver
