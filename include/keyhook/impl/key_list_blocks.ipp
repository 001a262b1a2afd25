// keyhook: where the list decoder keeps a page's records, and the errors of
// those it rejects, under rule J3 (memory at most 4 bytes a byte of input,
// plus an allowance, without trusting a declared size). Used by
// impl/key_list_sax.ipp: records are read in place at the end of a block and
// never moved while the page is read; the blocks are gathered into one vector
// at the end.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "keyhook/api_key.hpp"
#include "keyhook/detail/json_position.hpp"
#include "keyhook/detail/key_list_defaults.hpp"
#include "keyhook/detail/number_overflow.hpp"
#include "keyhook/error.hpp"
#include "keyhook/key_list.hpp"

namespace keyhook::detail {

// How one pass of the list decoder reads the text; try_parse_key_list
// changes it when a pass asks (impl/key_list.ipp).
struct key_list_plan {
    std::optional<std::size_t> exact_capacity;  // J3: reserve exactly this many records
    bool plan_from_page_size = true;            // J3: size the first block from pageSize
    const std::vector<overflowing_number>* overflows = nullptr;  // J2: the numbers zeroed in the text
    std::size_t held_bytes = 0;  // J3: what the decoder holds beside the records (J2's zeroed copy)
};

// A template only so that its member functions are compiled where they are
// used (a deferred definition, config.hpp), not in every translation unit that
// includes the JSON readers.
template <class D = void>
class key_list_blocks {
public:
    // J3: the fewest bytes a record that decodes can take in the input.
    static constexpr std::size_t min_record_bytes = key_list_min_record_bytes;
    // Without a plan from pageSize (or past it), the first block holds at
    // most this many records; records past it go to blocks of chunk_records.
    static constexpr std::size_t single_pass_records = 1024;
    static constexpr std::size_t chunk_records = 256;
    // J3: what a decode may keep besides 4 bytes per input byte.
    static constexpr std::size_t memory_allowance = std::size_t{1} << 20;

    // plan.exact_capacity: the number of valid records, when an earlier pass
    // found more than it had room for. plan.plan_from_page_size: size the
    // first block from pageSize as far as a quarter of the budget allows.
    // `pos`: the reader's bookkeeping, which counts against the budget too.
    key_list_blocks(std::size_t input_bytes, key_list_mode mode, const key_list_plan& plan,
                    const json_position& pos) noexcept
        : input_bytes_(input_bytes),
          mode_(mode),
          exact_capacity_(plan.exact_capacity),
          plan_from_page_size_(plan.plan_from_page_size),
          held_bytes_(plan.held_bytes),
          pos_(pos) {}

    // Room for the records, once, when data.result opens: never more than the
    // input could hold (min_record_bytes each), than pageSize (100 when none
    // came before data.result), or than single_pass_records; an exact
    // capacity from an earlier pass replaces the plan.
    void plan(const std::optional<std::int64_t>& page_size) {
        if (planned_) return;
        planned_ = true;
        // A pageSize is trusted up to the records the input could hold, and
        // up to a quarter of the budget (input_bytes_ of api_key); without
        // that trust, up to single_pass_records.
        const std::size_t can_hold = input_bytes_ / min_record_bytes + 1;
        const std::size_t cap = plan_from_page_size_
                                    ? std::min(can_hold, std::max(single_pass_records, input_bytes_ / sizeof(api_key)))
                                    : std::min(can_hold, single_pass_records);
        std::size_t planned = std::min(
            cap, page_size ? static_cast<std::size_t>(*page_size) : static_cast<std::size_t>(default_list_page_size));
        if (exact_capacity_) planned = *exact_capacity_;
        records_.reserve(planned);
        capacity_ = planned;
        kept_bytes_ += planned * sizeof(api_key);
    }

    // Where the next record is read: at the end of a block, or, once no
    // block has room within the budget, a scratch record only counted.
    api_key& place_record() {
        block_ = overflowed_ ? nullptr : block_with_room();
        if (block_ != nullptr) return block_->emplace_back();
        scratch_ = api_key{};
        return scratch_;
    }

    // The record just placed was rejected.
    void drop_record() {
        if (block_ != nullptr) block_->pop_back();
    }

    // The record just placed is valid; false when keeping it passes the budget.
    bool keep_record(const api_key& r) {
        ++valid_records_;
        if (block_ == nullptr) {
            overflowed_ = true;  // counted; a pass with the exact capacity keeps it
            return true;
        }
        kept_bytes_ += members_heap_bytes(r);
        return !over_budget(0);
    }

    // A record that cannot be read: the page fails in strict mode (with the
    // first such error); in lenient mode the first 100 errors are kept, the
    // others only counted.
    void reject(error e) {
        if (mode_ == key_list_mode::strict) {
            if (!strict_error_) strict_error_ = std::move(e);
            return;
        }
        ++rejected_count_;
        if (rejected_.size() >= key_list_max_rejected) return;
        kept_bytes_ += e.path.capacity() + e.message.capacity() + 2;
        if (rejected_.empty()) {
            rejected_.reserve(key_list_max_rejected);
            kept_bytes_ += key_list_max_rejected * sizeof(error);
        }
        rejected_.push_back(std::move(e));
    }

    // Would the page, with `extra` bytes more, pass 4 bytes an input byte plus the allowance?
    [[nodiscard]] bool over_budget(std::size_t extra) const noexcept {
        const std::size_t budget = input_bytes_ * 4 + memory_allowance;
        return kept_bytes_ + pos_.capacity_bytes() + held_bytes_ + extra > budget;
    }

    // At a refusal by the budget: did a first block planned from pageSize
    // still have room? The page is then read again without such a plan, so
    // that room reserved on pageSize's word never refuses a page.
    [[nodiscard]] bool planned_room_unused() const noexcept {
        return plan_from_page_size_ && !exact_capacity_ && capacity_ > single_pass_records &&
               records_.size() < capacity_;
    }

    // When the records could not all be kept (more blocks, or gathering them
    // into one vector, would pass the budget: records of nearly the smallest
    // size), the number of valid records, for a pass that reserves exactly
    // that many. Ordinary pages never need it.
    [[nodiscard]] std::optional<std::size_t> needs_exact_capacity() const noexcept {
        if (overflowed_ || (!chunks_.empty() && over_budget(valid_records_ * sizeof(api_key)))) return valid_records_;
        return std::nullopt;
    }

    [[nodiscard]] std::optional<error>& strict_error() noexcept { return strict_error_; }

    // The records and the rejected records' errors, into the page.
    void gather_into(key_list_page& p) {
        p.records = gather();
        p.rejected = std::move(rejected_);
        p.rejected_count = rejected_count_;
    }

private:
    // The page's records in one vector: the first block, then each chunk
    // moved in and freed (needs_exact_capacity said the budget holds it).
    std::vector<api_key> gather() {
        if (chunks_.empty()) return std::move(records_);
        std::vector<api_key> all;
        all.reserve(valid_records_);
        std::move(records_.begin(), records_.end(), std::back_inserter(all));
        records_ = {};
        for (auto& c : chunks_) {
            std::move(c.begin(), c.end(), std::back_inserter(all));
            c = {};
        }
        chunks_ = {};
        return all;
    }

    // The first block, then the last chunk, then a new chunk if the budget
    // allows it (and the growth of the list of chunks).
    std::vector<api_key>* block_with_room() {
        if (records_.size() < capacity_) return &records_;
        if (!chunks_.empty() && chunks_.back().size() < chunks_.back().capacity()) return &chunks_.back();
        const std::size_t bytes = chunk_records * sizeof(api_key) + sizeof(std::vector<api_key>);
        if (exact_capacity_ || over_budget(bytes)) return nullptr;
        if (chunks_.size() == chunks_.capacity() &&
            over_budget(bytes + 3 * std::max<std::size_t>(chunks_.capacity(), 4) * sizeof(std::vector<api_key>)))
            return nullptr;
        kept_bytes_ += bytes;
        chunks_.emplace_back().reserve(chunk_records);
        return &chunks_.back();
    }

    std::size_t input_bytes_;
    key_list_mode mode_;
    std::optional<std::size_t> exact_capacity_;
    bool plan_from_page_size_;
    std::size_t held_bytes_;
    const json_position& pos_;

    std::vector<api_key> records_;              // the first block
    std::vector<std::vector<api_key>> chunks_;  // the blocks after it
    std::vector<api_key>* block_ = nullptr;     // where the record being read is, if in a block
    bool planned_ = false;
    bool overflowed_ = false;           // a valid record found no block
    std::size_t capacity_ = 0;          // records_ may hold this many
    std::size_t valid_records_ = 0;     // kept or only counted
    std::size_t kept_bytes_ = 0;        // heap bytes of what the page will hold
    std::vector<error> rejected_;
    std::size_t rejected_count_ = 0;
    std::optional<error> strict_error_;
    api_key scratch_;  // a record only counted
};

}  // namespace keyhook::detail
