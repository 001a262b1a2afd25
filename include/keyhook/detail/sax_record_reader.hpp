// keyhook internal: a SAX reader of one flat record (string members and
// lists of strings), driven by the record's member table
// (detail::member_index<Record>, detail/members.hpp). The document reader
// around it (for the list call, impl/key_list_sax.ipp) decides where records
// are and where they go; this reader stores one record's members, checks J1
// for its names, and gives the record's fault in the order of the table
// (try_api_key_from_json's order). Needs no JSON library.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/detail/json_kind.hpp"
#include "keyhook/detail/json_position.hpp"
#include "keyhook/detail/member_lookup.hpp"
#include "keyhook/detail/members.hpp"
#include "keyhook/error.hpp"

// Keeps a rarely taken path (an error's wording) out of the hot function
// that calls it, so that the hot path stays small.
#if defined(__GNUC__)
#define KEYHOOK_DETAIL_COLD __attribute__((noinline, cold))
#elif defined(_MSC_VER)
#define KEYHOOK_DETAIL_COLD __declspec(noinline)
#else
#define KEYHOOK_DETAIL_COLD
#endif

namespace keyhook::detail {

template <class Record>
class sax_record_reader {
public:
    using fields = member_index<Record>;  // the record's member table, by row

    // `array_path`: the array whose elements the records are ("data.result").
    // `pos`: the document reader's position, which holds the record's frame.
    sax_record_reader(std::string_view array_path, std::size_t max_string_bytes, json_position& pos) noexcept
        : array_path_(array_path), max_string_bytes_(max_string_bytes), pos_(pos) {}

    // A record object opened (pos has its frame): read it into `out`, element `index`.
    void begin(Record& out, std::size_t index) {
        rec_ = &out;
        index_ = index;
        row_ = fields::none;
        previous_ = fields::none;
        present_ = 0;
        named_ = 0;
        in_position_ = 0;
        unproven_ = false;
        field_errors_.clear();
    }

    [[nodiscard]] Record& record() noexcept { return *rec_; }
    [[nodiscard]] std::string path() const { return path_index(array_path_, index_); }
    // The path of the list being read ("data.result[3].groups").
    [[nodiscard]] std::string list_path() const { return path_member(path(), fields::names[list_]); }

    // ---- member names and J1
    //
    // A record whose names are all rows of the table, each once, cannot
    // repeat one: its names are then only marked in `named_`, not recorded in
    // pos (most of the cost of J1). The first unknown or repeated name hands
    // every name so far to pos, whose general check then decides and reports
    // the earliest repeat. The name a nested value or a path needs is handed
    // to pos just before (sync_position).

    // The next member's name; false when pos refused it (names past 4 GiB).
    bool key(std::string_view k) {
        // The records of a page name their members in one order: the row that
        // followed the previous one in the record before is tried first.
        const std::size_t guess = follows_[previous_];
        row_ = guess != fields::none && member_lookup<Record>::is(guess, k) ? guess : find(k);
        follows_[previous_] = row_;
        previous_ = row_;
        if (unproven_) return pos_.key(k);
        if (row_ != fields::none && (named_ & fields::bit(row_)) == 0) {
            named_ |= fields::bit(row_);
            return true;
        }
        return hand_names_to_position(k);
    }

    // The first unknown or repeated name: pos gets every name so far, then k.
    // The names so far are distinct, so their order does not change which
    // repeat pos reports (the earliest second occurrence comes after them).
    KEYHOOK_DETAIL_COLD bool hand_names_to_position(std::string_view k) {
        unproven_ = true;
        for (std::size_t f = 0; f < fields::count; ++f)
            if ((named_ & ~in_position_ & fields::bit(f)) != 0) (void)pos_.key(fields::names[f]);
        return pos_.key(k);
    }

    // A name the guess missed.
    KEYHOOK_DETAIL_COLD static std::size_t find(std::string_view k) noexcept { return member_lookup<Record>::find(k); }

    // True when the names read so far are table rows, each once (J1 holds).
    [[nodiscard]] bool proven() const noexcept { return !unproven_; }

    // Makes pos's path end at the member being read (before pos opens its
    // value or gives a path inside the record).
    void sync_position() {
        if (unproven_ || row_ == fields::none || (in_position_ & fields::bit(row_)) != 0) return;
        in_position_ |= fields::bit(row_);
        (void)pos_.key(fields::names[row_]);
    }

    // ---- values of the record's members

    void string(const std::string& val) {
        const std::size_t f = row_;
        if (f == fields::none) return;  // an unknown member: skipped
        if (fields::kinds[f] == form_kind::string_list) return wrong_type(json_kind::string);
        if (fields::keeps_text[f] && !keepable(f, val)) return;
        if (auto e = fields::store(*rec_, f, val)) return store_error(f, std::move(*e));
        present_ |= fields::bit(f);
    }

    // A value of any other kind (a container is skipped by the caller).
    void other(json_kind k) {
        if (row_ == fields::none) return;
        if (k == json_kind::null) {
            // null stands for a missing member (L2): a required one is reported when the record ends.
            present_ &= ~fields::bit(row_);
            fields::reset(*rec_, row_);
            return;
        }
        wrong_type(k);
    }

    // Is the member being read a list of strings?
    [[nodiscard]] bool reads_list() const noexcept {
        return row_ != fields::none && fields::kinds[row_] == form_kind::string_list;
    }

    // The member's array opens (reads_list()): its elements follow. pos gets
    // no frame for it until a path inside it is needed (list_position), as
    // its elements are nearly always strings.
    void open_list() {
        list_ = row_;
        list_in_position_ = false;
        list_values_ = &fields::list(*rec_, list_);
        list_values_->clear();
        list_bytes_ = 0;
        list_index_ = 0;
        list_failed_ = false;
    }

    // Gives pos the list's frame, once: the member's name, the array, the
    // elements so far. Before a path inside the list or a container in it.
    void list_position() {
        if (list_in_position_) return;
        list_in_position_ = true;
        sync_position();
        (void)pos_.open(false, std::numeric_limits<std::size_t>::max());
        for (std::size_t i = 0; i < list_index_; ++i) pos_.value_done();
    }
    [[nodiscard]] bool list_in_position() const noexcept { return list_in_position_; }

    // The list ends; true when pos has its frame, to be closed.
    bool close_list() noexcept {
        row_ = fields::none;
        return list_in_position_;
    }

    // ---- elements of the list being read

    // A string element. `over_budget(extra)` says whether `extra` bytes more
    // would pass J3's budget; the error is then J3's refusal of the page.
    template <class OverBudget>
    std::optional<error> list_string(const std::string& val, OverBudget&& over_budget) {
        if (val.size() > max_string_bytes_) {
            if (!list_failed_) too_long(list_, list_element_path(), val);
            list_failed_ = true;
        } else {
            auto& values = *list_values_;
            // J3: 32 bytes a string for as few as 3 bytes of input (""): checked
            // before growing (the new buffer, twice the old, and the old).
            if (values.size() == values.capacity() &&
                over_budget(3 * std::max<std::size_t>(values.capacity(), 2) * sizeof(std::string) + list_bytes_ +
                            val.size()))
                return error{errc::limit_exceeded, list_element_path(),
                             "the " + std::string(fields::names[list_]) +
                                 " would take more than 4 times the input's size in memory (rule J3)"};
            // Records carry one to a few: one allocation instead of growing.
            if (values.empty()) values.reserve(4);
            values.push_back(val);
            list_bytes_ += string_heap_bytes(values.back());
        }
        ++list_index_;
        return std::nullopt;
    }

    // An element of another kind; the first bad one is reported, as try_api_key_from_json does.
    KEYHOOK_DETAIL_COLD void list_other(json_kind k) {
        if (!list_failed_)
            field_error(list_, errc::wrong_type, list_element_path(),
                        wrong_type_error({}, "a string", json_kind_name(k)).message);
        list_failed_ = true;
        ++list_index_;
    }

    // J2: a number no double holds, `e` at its path: in a list element, a
    // member's value, or (`nested`) deeper inside a value being skipped.
    KEYHOOK_DETAIL_COLD void overflowed(error e, bool in_list, bool nested) {
        if (in_list && !nested) {
            if (!list_failed_) field_error(list_, e.code, std::move(e.path), std::move(e.message));
            list_failed_ = true;
            ++list_index_;
        } else {
            field_error(nested || in_list ? fields::none : row_, e.code, std::move(e.path), std::move(e.message));
        }
    }

    // ---- the end

    // The record's fault, or none when it is valid: the earliest member in
    // the table's order, the first found on a tie.
    std::optional<error> end() {
        if ((present_ & fields::required_mask) != fields::required_mask) {
            for (std::size_t f = 0; f < fields::count; ++f) {
                if (!fields::required(f) || (present_ & fields::bit(f)) != 0) continue;
                const bool reported = std::any_of(field_errors_.begin(), field_errors_.end(),
                                                  [f](const auto& fe) { return fe.first == f; });
                if (!reported) field_errors_.push_back({f, missing_member_error(member_path(f))});
            }
        }
        if (field_errors_.empty()) return std::nullopt;
        auto worst = field_errors_.begin();
        for (auto it = field_errors_.begin(); it != field_errors_.end(); ++it)
            if (it->first < worst->first) worst = it;
        return std::move(worst->second);
    }

private:
    // The path of row f (none's: the record's path and an empty name).
    std::string member_path(std::size_t f) const {
        return path_member(path(), f < fields::count ? fields::names[f] : std::string_view());
    }
    std::string list_element_path() const { return path_index(list_path(), list_index_); }

    KEYHOOK_DETAIL_COLD void store_error(std::size_t f, error e) { field_error(f, e.code, std::move(e.message)); }

    void field_error(std::size_t f, errc code, std::string path, std::string message) {
        field_errors_.push_back({f, error{code, std::move(path), std::move(message)}});
    }
    void field_error(std::size_t f, errc code, std::string message) {
        field_error(f, code, member_path(f), std::move(message));
    }

    KEYHOOK_DETAIL_COLD void wrong_type(json_kind k) {
        field_error(row_, errc::wrong_type, wrong_type_error({}, fields::expected[row_], json_kind_name(k)).message);
    }

    KEYHOOK_DETAIL_COLD void too_long(std::size_t f, std::string path, std::string_view val) {
        field_error(f, errc::limit_exceeded, std::move(path),
                    "a string of " + std::to_string(val.size()) + " bytes, more than the limit of " +
                        std::to_string(max_string_bytes_));
    }

    // A string kept in the record must respect max_string_bytes.
    bool keepable(std::size_t f, const std::string& val) {
        if (val.size() <= max_string_bytes_) return true;
        too_long(f, member_path(f), val);
        return false;
    }

    std::string_view array_path_;
    std::size_t max_string_bytes_;
    json_position& pos_;

    Record* rec_ = nullptr;
    std::size_t index_ = 0;
    std::size_t row_ = fields::none;  // the row of the member being read
    // The row named after each row (none: first, or after an unknown name) in
    // the records read so far, and the row named last.
    std::array<std::size_t, fields::count + 1> follows_ = make_follows();
    std::size_t previous_ = fields::none;
    static constexpr std::array<std::size_t, fields::count + 1> make_follows() noexcept {
        std::array<std::size_t, fields::count + 1> f{};
        for (auto& r : f) r = fields::none;
        return f;
    }
    std::uint64_t present_ = 0;                                // one bit per row that came
    std::vector<std::pair<std::size_t, error>> field_errors_;  // of this record, by row

    // J1: the rows named so far, and those whose names pos holds.
    std::uint64_t named_ = 0;
    std::uint64_t in_position_ = 0;
    bool unproven_ = false;

    // The list of strings being read.
    std::size_t list_ = fields::none;
    std::vector<std::string>* list_values_ = nullptr;
    std::size_t list_index_ = 0;
    std::size_t list_bytes_ = 0;  // heap bytes of its strings
    bool list_failed_ = false;
    bool list_in_position_ = false;  // pos has its frame
};

}  // namespace keyhook::detail
