// keyhook: where the list decoder keeps a page's records under rule J3
// (memory at most 4 bytes a byte of input, plus an allowance, without
// trusting a declared size). Used by impl/key_list_sax.ipp: records are read
// in place at the end of a block and never moved while the page is read; the
// blocks are gathered into one vector at the end.
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
#include "keyhook/key_list.hpp"
#include "keyhook/key_list_request.hpp"

namespace keyhook::detail {

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

    // `exact_capacity`: the number of valid records, when an earlier pass
    // found more than it had room for. `plan_from_page_size`: size the first
    // block from pageSize as far as a quarter of the budget allows. `pos`:
    // the reader's bookkeeping, which counts against the budget too.
    key_list_blocks(std::size_t input_bytes, std::optional<std::size_t> exact_capacity, bool plan_from_page_size,
                    const json_position& pos) noexcept
        : input_bytes_(input_bytes),
          exact_capacity_(exact_capacity),
          plan_from_page_size_(plan_from_page_size),
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

    // Where the next record is read: at the end of a block, or null once no
    // block has room within the budget (the record is then only counted).
    api_key* place_record() {
        block_ = overflowed_ ? nullptr : block_with_room();
        return block_ != nullptr ? &block_->emplace_back() : nullptr;
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

    // Other heap bytes the page will hold (the errors of rejected records).
    void charge(std::size_t bytes) noexcept { kept_bytes_ += bytes; }

    // Would the page, with `extra` bytes more, pass 4 bytes an input byte plus the allowance?
    [[nodiscard]] bool over_budget(std::size_t extra) const noexcept {
        const std::size_t budget = input_bytes_ * 4 + memory_allowance;
        return kept_bytes_ + pos_.capacity_bytes() + extra > budget;
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

private:
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
    std::optional<std::size_t> exact_capacity_;
    bool plan_from_page_size_;
    const json_position& pos_;

    std::vector<api_key> records_;              // the first block
    std::vector<std::vector<api_key>> chunks_;  // the blocks after it
    std::vector<api_key>* block_ = nullptr;     // where the record being read is, if in a block
    bool planned_ = false;
    bool overflowed_ = false;           // a valid record found no block
    std::size_t capacity_ = 0;          // records_ may hold this many
    std::size_t valid_records_ = 0;     // kept or only counted
    std::size_t kept_bytes_ = 0;        // heap bytes of what the page will hold
};

}  // namespace keyhook::detail
