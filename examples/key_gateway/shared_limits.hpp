// key_gateway's shared limits (K17): the calls of keys with a rate limit or
// credits, decided by the store (a database, on its clock) a batch at a
// time. A call that reaches this point has passed every other check in the
// gateway's memory (K15's order: the limits come last); it waits, holding no
// server thread (http_server's deferred handler), for the batch it falls
// into. One thread sends the batches: while one is in the database the next
// gathers, so a batch holds what arrived during the last round trip and the
// database sees one transaction per round trip, however many calls.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "shared/key_store.hpp"

namespace gateway {

class shared_limits {
public:
    // Called once per call, on the batch thread, with the store's outcome
    // or its error (the database unreachable: the gateway answers 503).
    using done_fn = std::function<void(const keyhook::result<key_store::limits_outcome>&)>;

    // Told of each batch the store decided (true) or failed (with its error),
    // before its calls are answered; on the batch thread.
    using batch_fn = std::function<void(const keyhook::error* failed)>;

    // `store` is this thread's own connection to the gateway's store.
    shared_limits(std::unique_ptr<key_store::key_store> store, batch_fn told)
        : store_(std::move(store)), told_(std::move(told)) {
        thread_ = std::thread([this] { run(); });
    }
    ~shared_limits() { stop(); }
    shared_limits(const shared_limits&) = delete;
    shared_limits& operator=(const shared_limits&) = delete;

    void ask(key_store::limits_call call, done_fn done) {
        {
            std::lock_guard<std::mutex> hold(mutex_);
            if (!stopping_) {
                queue_.push_back(waiting{std::move(call), std::move(done)});
                // The thread waits only on an empty queue: one wake-up for the first call of a batch.
                if (queue_.size() == 1) wake_.notify_one();
                return;
            }
        }
        done(keyhook::error{keyhook::errc::host_failure, store_->path(), "the gateway is stopping"});
    }

    // Decides what is queued, then stops; later calls are refused.
    void stop() {
        {
            std::lock_guard<std::mutex> hold(mutex_);
            if (stopping_) return;
            stopping_ = true;
            wake_.notify_one();
        }
        thread_.join();
    }

    // The size of the largest batch so far (how much the round trips gather).
    [[nodiscard]] std::size_t largest_batch() const {
        std::lock_guard<std::mutex> hold(mutex_);
        return largest_;
    }

private:
    struct waiting {
        key_store::limits_call call;
        done_fn done;
    };

    void run() {
        std::vector<waiting> batch;
        std::vector<key_store::limits_call> calls;
        for (;;) {
            {
                std::unique_lock<std::mutex> hold(mutex_);
                wake_.wait(hold, [this] { return stopping_ || !queue_.empty(); });
                if (queue_.empty()) return;  // stopping, and nothing left
                batch.swap(queue_);
                largest_ = std::max(largest_, batch.size());
            }
            calls.clear();
            calls.reserve(batch.size());
            for (auto& w : batch) calls.push_back(std::move(w.call));
            const auto decided = store_->decide_limits(calls);
            if (told_) told_(decided ? nullptr : &decided.error());
            if (!decided) {
                // The calls that queued while this batch failed have waited a
                // statement's deadline already: answered with it, not after another.
                std::lock_guard<std::mutex> hold(mutex_);
                std::move(queue_.begin(), queue_.end(), std::back_inserter(batch));
                queue_.clear();
            }
            for (std::size_t i = 0; i < batch.size(); ++i) {
                if (decided)
                    batch[i].done((*decided)[i]);
                else
                    batch[i].done(decided.error());
            }
            batch.clear();
        }
    }

    std::unique_ptr<key_store::key_store> store_;
    batch_fn told_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<waiting> queue_;
    bool stopping_ = false;
    std::size_t largest_ = 0;
    std::thread thread_;  // last: started once the members above exist
};

}  // namespace gateway
