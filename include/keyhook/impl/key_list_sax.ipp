// keyhook: the list call's SAX decoder (rules L2, J1 to J3), which reads a
// response straight into api_key records. Used by key_list.hpp's definitions
// only (impl/key_list.ipp includes it). The record's members come from its
// table (api_key.hpp, detail/members.hpp); this file has the envelope and the
// record flow.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/api_key.hpp"
#include "keyhook/impl/api_key.ipp"
#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/json_parser.hpp"
#include "keyhook/error.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook::detail {

// A number token no double holds ("1e400"), by its place among the input's
// number tokens in document order. nlohmann's parser stops at such a number,
// which in lenient mode would lose the page's valid records (J2: it is a wrong
// value like any other); try_parse_key_list parses a copy in which each is a
// zero of the same length, and the handler recognizes it by its place.
struct overflowing_number {
    std::size_t ordinal;
    std::string_view text;
};

// Does this well-formed-looking number token exceed a double's range? Only
// tokens with an exponent or over 300 bytes can; underflow ("1e-400") reads
// as zero, as nlohmann reads it.
inline bool number_overflows(std::string_view token) {
    if (token.size() <= 300 && token.find_first_of("eE") == std::string_view::npos) return false;
    double value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc::result_out_of_range) return false;
    (void)end;
    // Out of range both ways: overflow when the first significant digit sits at a positive power of ten.
    const std::size_t e = token.find_first_of("eE");
    const std::string_view mantissa = token.substr(0, e);
    long long exponent = 0;
    if (e != std::string_view::npos) {
        std::size_t i = e + 1;
        bool negative = false;
        if (i < token.size() && (token[i] == '+' || token[i] == '-')) negative = token[i++] == '-';
        for (; i < token.size(); ++i) exponent = std::min(exponent * 10 + (token[i] - '0'), 1000000000LL);
        if (negative) exponent = -exponent;
    }
    // The power of ten of the first significant digit.
    const std::size_t dot = mantissa.find('.');
    const std::string_view whole = mantissa.substr(0, dot);
    long long power = 0;
    if (const std::size_t first = whole.find_first_not_of("-0"); first != std::string_view::npos) {
        power = exponent + static_cast<long long>(whole.size() - first) - 1;
    } else {
        const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
        power = exponent - static_cast<long long>(std::min(fraction.find_first_not_of('0'), fraction.size())) - 1;
    }
    return power > 0;
}

// The number tokens outside strings that overflow a double; none for almost every input.
inline std::vector<overflowing_number> find_overflowing_numbers(std::string_view json) {
    std::vector<overflowing_number> found;
    std::size_t ordinal = 0;
    for (std::size_t i = 0; i < json.size();) {
        const char c = json[i];
        if (c == '"') {
            for (++i; i < json.size() && json[i] != '"'; ++i)
                if (json[i] == '\\') ++i;
            ++i;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            const std::size_t start = i;
            while (i < json.size() && std::strchr("0123456789+-.eE", json[i]) != nullptr && json[i] != '\0') ++i;
            const std::string_view token = json.substr(start, i - start);
            if (number_overflows(token)) found.push_back({ordinal, token});
            ++ordinal;
        } else {
            ++i;
        }
    }
    return found;
}

// The copy nlohmann parses: each overflowing number becomes 0e00... of its length.
inline std::string with_overflows_zeroed(std::string_view json, const std::vector<overflowing_number>& found) {
    std::string copy(json);
    for (const auto& n : found) {
        const auto at = static_cast<std::size_t>(n.text.data() - json.data());
        const std::size_t sign = n.text.front() == '-' ? 1 : 0;
        copy.replace(at + sign, n.text.size() - sign, "0e" + std::string(n.text.size() - sign - 2, '0'));
    }
    return copy;
}

// Decodes a list-call response event by event. The structure is fixed
// (envelope > data > result > record > groups), so the position is known from
// `where_` alone; anything else is skipped by counting its nesting.
class key_list_sax {
public:
    using json = nlohmann::json;
    using fields = member_index<api_key>;  // the record's member table, by row

    // `exact_capacity`: the number of valid records, when a first pass found
    // more than it had room for (see try_parse_key_list).
    // `plan_from_page_size`: size the first block from pageSize as far as
    // a quarter of J3's budget allows (see plan_records).
    key_list_sax(const key_list_options& options, std::size_t input_bytes,
                 std::optional<std::size_t> exact_capacity = std::nullopt, bool plan_from_page_size = true) noexcept
        : options_(options),
          input_bytes_(input_bytes),
          exact_capacity_(exact_capacity),
          plan_from_page_size_(plan_from_page_size) {}

    // True when J3's budget refused the page while a first block sized from
    // pageSize still had room: the page is read again with small blocks, so
    // that room reserved on the word of pageSize never refuses a page.
    [[nodiscard]] bool refused_for_planned_room() const noexcept { return refused_for_planned_room_; }

    bool null() { return scalar(kind::null); }
    bool boolean(bool) { return scalar(kind::boolean); }
    bool number_integer(json::number_integer_t v) {
        if (const auto* o = next_is_overflow()) return overflowed(o->text);
        return number(v, numeric::integer, {});
    }
    bool number_unsigned(json::number_unsigned_t v) {
        if (const auto* o = next_is_overflow()) return overflowed(o->text);
        if (v > static_cast<json::number_unsigned_t>(std::numeric_limits<std::int64_t>::max()))
            return number(0, numeric::too_large, std::to_string(v));
        return number(static_cast<std::int64_t>(v), numeric::integer, {});
    }
    bool number_float(json::number_float_t, const std::string& text) {
        if (const auto* o = next_is_overflow()) return overflowed(o->text);
        // Integer syntax too large for 64 bits (J2: out of range, not a fraction).
        const bool integral = text.find_first_of(".eE") == std::string::npos;
        return number(0, integral ? numeric::too_large : numeric::floating, text);
    }

    // The numbers find_overflowing_numbers found, which the parsed copy holds as zeros.
    void expect_overflows(const std::vector<overflowing_number>* found) noexcept { overflows_ = found; }
    bool binary(json::binary_t&) { return scalar(kind::other); }

    bool string(std::string& val) {
        pos_.value_done();
        if (skip_ > 0) return true;
        switch (slot_) {
            case slot::field: field_string(val); return true;
            case slot::group: group_string(val); return !fatal_;
            case slot::record: reject_element(kind::string); return true;
            case slot::status:
                status_seen_ = true;
                status_ok_ = ascii_iequal(val, "success");
                if (!status_ok_) status_text_ = quote_input(val);
                return true;
            case slot::message: message_ = quote_input(val); return true;
            case slot::error_code: error_code_ = quote_input(val); return true;
            case slot::root: return root_not_object(kind::string);
            case slot::data:
            case slot::result:
            case slot::count:
            case slot::page:
            case slot::page_size: envelope_wrong_type(kind::string); return true;
            case slot::ignore: return true;
        }
        return true;
    }

    bool start_object(std::size_t) {
        if (const auto o = enter(true); o != opened::read) return o == opened::skipped;
        switch (slot_) {
            case slot::root:
                where_ = place::envelope;
                slot_ = slot::ignore;
                return true;
            case slot::data:
                data_seen_ = true;
                where_ = place::data;
                slot_ = slot::ignore;
                return true;
            case slot::record: begin_record(); return true;
            default: return skip_container(kind::object);
        }
    }

    bool start_array(std::size_t) {
        if (const auto o = enter(false); o != opened::read) return o == opened::skipped;
        switch (slot_) {
            case slot::root: root_not_object(kind::array); return skip_container(kind::array);
            case slot::result:
                result_seen_ = true;
                where_ = place::result;
                slot_ = slot::record;
                next_index_ = 0;
                plan_records();
                return true;
            case slot::field:
                if (fields::kinds[field_] == form_kind::string_list) {
                    list_ = field_;
                    fields::list(rec(), list_).clear();
                    group_bytes_ = 0;
                    where_ = place::groups;
                    slot_ = slot::group;
                    group_index_ = 0;
                    group_failed_ = false;
                    return true;
                }
                return skip_container(kind::array);
            default: return skip_container(kind::array);
        }
    }

    bool key(std::string& k) {
        // Every object's names are recorded, skipped ones too (J1 everywhere).
        if (!pos_.key(k)) {
            fail(error{errc::limit_exceeded, pos_.container_path(), "member names longer than 4 GiB"});
            return false;
        }
        if (skip_ > 0) return true;
        switch (where_) {
            case place::record:
                field_ = fields::find(k);
                if (field_ == fields::none) {
                    slot_ = slot::ignore;
                    names_unproven_ = true;  // only the general J1 check covers unknown names
                } else {
                    slot_ = slot::field;
                    names_unproven_ |= (named_ & fields::bit(field_)) != 0;
                    named_ |= fields::bit(field_);
                }
                return true;
            case place::envelope: slot_ = slot_of(k, envelope_members); return true;
            case place::data: slot_ = slot_of(k, data_members); return true;
            case place::root:
            case place::result:
            case place::groups: return true;
        }
        return true;
    }

    bool end_object() {
        --depth_;
        // J1: a member name repeated in this object refuses the whole input. A
        // record whose names were all table rows, each once, is proven already.
        const bool proven = skip_ == 0 && where_ == place::record && !names_unproven_;
        if (auto repeated = pos_.close(!proven)) {
            fail(error{errc::duplicate_member, std::move(*repeated), "member name repeated in one object"});
            return false;
        }
        if (skip_ > 0) {
            --skip_;
            return true;
        }
        switch (where_) {
            case place::record:
                end_record();
                where_ = place::result;
                slot_ = slot::record;
                return !fatal_;
            case place::data:
                where_ = place::envelope;
                slot_ = slot::ignore;
                return true;
            case place::envelope:
                where_ = place::root;
                slot_ = slot::ignore;
                return true;
            case place::root:
            case place::result:
            case place::groups: return true;
        }
        return true;
    }

    bool end_array() {
        --depth_;
        (void)pos_.close(false);
        if (skip_ > 0) {
            --skip_;
            return true;
        }
        if (where_ == place::groups) {
            where_ = place::record;
            slot_ = slot::ignore;
        } else if (where_ == place::result) {
            where_ = place::data;
            slot_ = slot::ignore;
        }
        return true;
    }

    bool parse_error(std::size_t position, const std::string& token, const nlohmann::json::exception& ex) {
        if (ex.id != 406) {
            fail(json_syntax_error(position, ex.what()));
            return false;
        }
        // J2: a number no double holds ("1e400"). try_parse_key_list parses again
        // with such numbers zeroed, so that one inside a record rejects only it.
        stopped_at_overflow_ = true;
        return refuse_overflow(token);
    }

    [[nodiscard]] bool stopped_at_overflow() const noexcept { return stopped_at_overflow_; }

    // The page-level refusal of a number no double holds, with its path and the reason.
    bool refuse_overflow(std::string_view token) {
        if (skip_ == 0 && (slot_ == slot::count || slot_ == slot::page || slot_ == slot::page_size))
            fail(error{errc::out_of_range, std::string(slot_path()),
                       "expected a non-negative 64-bit integer, got " + quote_input(token)});
        else
            fail(number_overflow_error(pos_.path(), token));
        return false;
    }

    const overflowing_number* next_is_overflow() noexcept {
        const std::size_t ordinal = numbers_seen_++;
        if (overflows_ == nullptr || next_overflow_ >= overflows_->size()) return nullptr;
        const auto& o = (*overflows_)[next_overflow_];
        if (o.ordinal != ordinal) return nullptr;
        ++next_overflow_;
        return &o;
    }

    // J2 for a number no double holds: in a record (or as an element of
    // data.result) it rejects that record like any wrong value; in the
    // envelope it refuses the page.
    bool overflowed(std::string_view token) {
        const bool in_record = where_ == place::record || where_ == place::groups;
        const bool as_element = where_ == place::result && slot_ == slot::record && skip_ == 0;
        if (!in_record && !as_element) return refuse_overflow(token);
        auto e = number_overflow_error(pos_.path(), token);
        pos_.value_done();
        if (as_element) {
            index_ = next_index_++;
            reject(std::move(e));
        } else if (skip_ == 0 && slot_ == slot::group) {
            if (!group_failed_) field_error(list_, e.code, std::move(e.path), std::move(e.message));
            group_failed_ = true;
            ++group_index_;
        } else {
            field_error(skip_ == 0 && slot_ == slot::field ? field_ : fields::none, e.code, std::move(e.path),
                        std::move(e.message));
        }
        return true;
    }

    // A failure found outside the parse (a NUL byte, the parser's own throw).
    void refuse(error e) { fail(std::move(e)); }

    // The outcome, once sax_parse has returned.
    [[nodiscard]] result<key_list_page> finish() {
        if (fatal_) return std::move(*fatal_);
        if (root_error_) return std::move(*root_error_);
        if (!status_seen_) {
            if (status_error_) return std::move(*status_error_);
            return missing_member_error("status");
        }
        if (!status_ok_) {
            std::string m = "expected \"success\", got " + status_text_;
            if (!error_code_.empty()) m += ", errorCode " + error_code_;
            if (!message_.empty()) m += ", message " + message_;
            return error{errc::not_success, "status", std::move(m)};
        }
        if (envelope_error_) return std::move(*envelope_error_);
        if (!data_seen_) return missing_member_error("data");
        if (!count_) return missing_member_error("data.count");
        if (!page_) return missing_member_error("data.page");
        if (!page_size_) return missing_member_error("data.pageSize");
        if (!result_seen_) return missing_member_error("data.result");
        if (first_record_error_) return std::move(*first_record_error_);
        key_list_page p;
        p.count = *count_;
        p.page = *page_;
        p.page_size = *page_size_;
        p.records = gather_records();
        p.rejected = std::move(rejected_);
        p.rejected_count = rejected_count_;
        return p;
    }

    // When the records could not all be kept within J3's budget (more chunks,
    // or gathering them into one vector, would pass it: records of nearly the
    // smallest size), they were counted, and a second pass with this exact
    // capacity keeps them. Ordinary pages never need it.
    [[nodiscard]] std::optional<std::size_t> needs_exact_capacity() const noexcept {
        if (fatal_) return std::nullopt;
        if (overflowed_ || (!chunks_.empty() && over_budget(valid_records_ * sizeof(api_key)))) return valid_records_;
        return std::nullopt;
    }

    // J3: the fewest bytes a record that decodes can take in the input.
    static constexpr std::size_t min_record_bytes = key_list_min_record_bytes;
    // Without a plan from pageSize (or past it), the first block holds at
    // most this many records (finding 6); records past it go to blocks of
    // chunk_records, gathered into one vector at the end.
    static constexpr std::size_t single_pass_records = 1024;
    static constexpr std::size_t chunk_records = 256;
    // J3: what a decode may keep besides 4 bytes per input byte.
    static constexpr std::size_t memory_allowance = std::size_t{1} << 20;

private:
    enum class place : unsigned char { root, envelope, data, result, record, groups };
    // What the next value is: a member of a known container, or to be ignored.
    enum class slot : unsigned char {
        root,
        ignore,
        status,
        message,
        error_code,
        data,
        count,
        page,
        page_size,
        result,
        record,
        field,
        group,
    };
    enum class kind : unsigned char { null, boolean, number, string, object, array, other };

    // The members of the envelope and of data the decoder reads; others are skipped.
    struct named_slot {
        std::string_view name;
        slot value;
    };
    static constexpr named_slot envelope_members[] = {
        {"status", slot::status}, {"data", slot::data}, {"message", slot::message}, {"errorCode", slot::error_code}};
    static constexpr named_slot data_members[] = {
        {"result", slot::result}, {"count", slot::count}, {"page", slot::page}, {"pageSize", slot::page_size}};

    template <std::size_t N>
    static slot slot_of(std::string_view name, const named_slot (&members)[N]) noexcept {
        for (const auto& m : members)
            if (m.name == name) return m.value;
        return slot::ignore;
    }

    static std::string_view kind_name(kind k) noexcept {
        switch (k) {
            case kind::null: return "null";
            case kind::boolean: return "boolean";
            case kind::number: return "number";
            case kind::string: return "string";
            case kind::object: return "object";
            case kind::array: return "array";
            case kind::other: return "binary";
        }
        return "binary";
    }

    api_key& rec() noexcept { return *rec_; }

    // A container opens: too deep (the parse stops), inside a skipped value, or to be read.
    enum class opened : unsigned char { refused, skipped, read };

    opened enter(bool object) {
        if (++depth_ > options_.max_depth) {
            fail(error{errc::limit_exceeded, current_path(),
                       "nested deeper than " + std::to_string(options_.max_depth) + " levels"});
            return opened::refused;
        }
        (void)pos_.open(object, std::numeric_limits<std::size_t>::max());
        if (skip_ == 0) return opened::read;
        ++skip_;
        return opened::skipped;
    }

    void fail(error e) {
        if (!fatal_) fatal_ = std::move(e);
    }

    // J3's refusal; noted when a first block planned from pageSize had room
    // to spare (the page is then read again without such a plan).
    void refuse_over_budget(error e) {
        if (!fatal_ && plan_from_page_size_ && !exact_capacity_ && capacity_ > single_pass_records &&
            records_.size() < capacity_)
            refused_for_planned_room_ = true;
        fail(std::move(e));
    }

    std::string record_path() const { return path_index("data.result", index_); }

    std::string current_path() const {
        switch (where_) {
            case place::root:
            case place::envelope: return {};
            case place::data: return "data";
            case place::result: return "data.result";
            case place::record: return record_path();
            case place::groups: return path_member(record_path(), fields::names[list_]);
        }
        return {};
    }

    // Noted, not fatal: the rest of the text is still read, so that malformed
    // text after a root of the wrong type is reported as such.
    bool root_not_object(kind k) {
        if (!root_error_) root_error_ = wrong_type_error({}, "an object", kind_name(k));
        return true;
    }

    std::string_view slot_path() const noexcept {
        switch (slot_) {
            case slot::status: return "status";
            case slot::data: return "data";
            case slot::count: return "data.count";
            case slot::page: return "data.page";
            case slot::page_size: return "data.pageSize";
            case slot::result: return "data.result";
            default: return {};
        }
    }

    void envelope_error(error e) {
        if (slot_ == slot::status) {
            if (!status_error_) status_error_ = std::move(e);
            return;
        }
        if (!envelope_error_) envelope_error_ = std::move(e);
    }

    void envelope_wrong_type(kind k) {
        std::string_view expected = "an integer";
        if (slot_ == slot::status)
            expected = "a string";
        else if (slot_ == slot::data)
            expected = "an object";
        else if (slot_ == slot::result)
            expected = "an array of records";
        envelope_error(wrong_type_error(std::string(slot_path()), expected, kind_name(k)));
    }

    // A container where none is read: a wrong value where one was expected,
    // skipped in any case.
    bool skip_container(kind k) {
        switch (slot_) {
            case slot::field: field_wrong_type(k); break;
            case slot::group: group_wrong_type(k); break;
            case slot::record: reject_element(k); break;
            case slot::status:
            case slot::data:
            case slot::result:
            case slot::count:
            case slot::page:
            case slot::page_size: envelope_wrong_type(k); break;
            case slot::root:
            case slot::message:
            case slot::error_code:
            case slot::ignore: break;
        }
        skip_ = 1;
        return true;
    }

    bool scalar(kind k) {
        pos_.value_done();
        if (skip_ > 0) return true;
        switch (slot_) {
            case slot::field: field_scalar(k); return true;
            case slot::group: group_wrong_type(k); return true;
            case slot::record: reject_element(k); return true;
            case slot::root: return root_not_object(k);
            case slot::status:
            case slot::data:
            case slot::result:
            case slot::count:
            case slot::page:
            case slot::page_size:
                // null stands for a missing member, as in try_api_key_from_json.
                if (k != kind::null) envelope_wrong_type(k);
                return true;
            case slot::message:
            case slot::error_code:
            case slot::ignore: return true;
        }
        return true;
    }

    // Integers carry their value; the others their text.
    enum class numeric : unsigned char { integer, too_large, floating };

    bool number(std::int64_t v, numeric n, std::string_view text) {
        if (skip_ > 0) {
            pos_.value_done();
            return true;
        }
        switch (slot_) {
            case slot::count:
            case slot::page:
            case slot::page_size: {
                if (n == numeric::floating) {
                    envelope_error(error{errc::wrong_type, std::string(slot_path()),
                                         "expected an integer, got " + quote_input(text)});
                } else if (n == numeric::too_large || v < 0) {
                    envelope_error(error{errc::out_of_range, std::string(slot_path()),
                                         "expected a non-negative 64-bit integer, got " +
                                             (n == numeric::integer ? std::to_string(v) : std::string(text))});
                } else if (slot_ == slot::count) {
                    count_ = v;
                } else if (slot_ == slot::page) {
                    page_ = v;
                } else {
                    page_size_ = v;
                }
                pos_.value_done();
                return true;
            }
            case slot::error_code:
                pos_.value_done();
                error_code_ = n == numeric::integer ? std::to_string(v) : quote_input(text);
                return true;
            case slot::message: pos_.value_done(); return true;
            default: return scalar(kind::number);
        }
    }

    // ---- records

    void begin_record() {
        index_ = next_index_++;
        // Read in place at the end of a block (no reallocation moves it; a
        // rejected record is popped), or, once no block has room within J3's
        // budget, into a scratch record that is only counted.
        block_ = overflowed_ ? nullptr : block_with_room();
        if (block_ != nullptr) {
            rec_ = &block_->emplace_back();
        } else {
            scratch_ = api_key{};
            rec_ = &scratch_;
        }
        where_ = place::record;
        slot_ = slot::ignore;
        present_ = 0;
        named_ = 0;
        names_unproven_ = false;
        field_errors_.clear();
    }

    void reject_element(kind k) {
        index_ = next_index_++;
        reject(wrong_type_error(record_path(), "an object", kind_name(k)));
    }

    void reject(error e) {
        if (options_.mode == key_list_mode::strict) {
            if (!first_record_error_) first_record_error_ = std::move(e);
            return;
        }
        // J3: the first 100 errors are kept, the others only counted.
        ++rejected_count_;
        if (rejected_.size() < key_list_max_rejected) {
            kept_bytes_ += e.path.capacity() + e.message.capacity() + 2;
            if (rejected_.empty()) {
                rejected_.reserve(key_list_max_rejected);
                kept_bytes_ += key_list_max_rejected * sizeof(error);
            }
            rejected_.push_back(std::move(e));
        }
    }

    // J3: room for the records without trusting a declared size: never more
    // than the input could hold (min_record_bytes each), than pageSize (100
    // when none came before data.result), or than single_pass_records; a
    // second pass with the exact count fixes a short plan.
    void plan_records() {
        if (planned_) return;
        planned_ = true;
        // A pageSize is trusted up to the records the input could hold, and
        // up to a quarter of the budget (input_bytes_ of api_key); without
        // that trust, up to single_pass_records.
        const std::size_t can_hold = input_bytes_ / min_record_bytes + 1;
        const std::size_t cap = plan_from_page_size_
                                    ? std::min(can_hold, std::max(single_pass_records, input_bytes_ / sizeof(api_key)))
                                    : std::min(can_hold, single_pass_records);
        std::size_t plan = std::min(
            cap, page_size_ ? static_cast<std::size_t>(*page_size_) : static_cast<std::size_t>(default_list_page_size));
        if (exact_capacity_) plan = *exact_capacity_;
        records_.reserve(plan);
        capacity_ = plan;
        kept_bytes_ += plan * sizeof(api_key);
    }

    // J3: would the page, with `extra` bytes more, pass 4 bytes an input byte
    // plus the allowance?
    bool over_budget(std::size_t extra) const noexcept {
        const std::size_t budget = input_bytes_ * 4 + memory_allowance;
        return kept_bytes_ + pos_.capacity_bytes() + extra > budget;
    }

    // The block the next record goes to: records_, then chunks_ (no record is
    // ever moved while the page is read). Null when a new block would pass
    // J3's budget: the record is then counted for a second pass.
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

    // The page's records in one vector: the first block, then each chunk moved
    // in and freed (needs_exact_capacity said the budget holds the vector).
    std::vector<api_key> gather_records() {
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

    void keep_record() {
        ++valid_records_;
        if (block_ == nullptr) {
            overflowed_ = true;  // counted; the second pass keeps it
            return;
        }
        kept_bytes_ += members_heap_bytes(*rec_);
        // J3 by construction: refuse an input whose records would take more.
        if (over_budget(0))
            refuse_over_budget(error{errc::limit_exceeded, record_path(),
                                     "the records would take more than 4 times the input's size in memory (rule J3)"});
    }

    // The JSON name of row f, or none's empty name.
    static std::string_view field_name(std::size_t f) noexcept {
        return f < fields::count ? fields::names[f] : std::string_view();
    }

    void field_error(std::size_t f, errc code, std::string path, std::string message) {
        field_errors_.push_back({f, error{code, std::move(path), std::move(message)}});
    }

    void field_error(std::size_t f, errc code, std::string message) {
        field_error(f, code, path_member(record_path(), field_name(f)), std::move(message));
    }

    void field_wrong_type(kind k) {
        if (k == kind::null) return field_null();
        field_error(field_, errc::wrong_type, wrong_type_error({}, fields::expected[field_], kind_name(k)).message);
    }

    void field_scalar(kind k) { field_wrong_type(k); }

    // null stands for a missing member (L2): a required one is reported when the record ends.
    void field_null() {
        present_ &= ~fields::bit(field_);
        fields::reset(rec(), field_);
    }

    void too_long(std::size_t f, std::string path, std::string_view val) {
        field_error(f, errc::limit_exceeded, std::move(path),
                    "a string of " + std::to_string(val.size()) + " bytes, more than the limit of " +
                        std::to_string(options_.max_string_bytes));
    }

    // A string kept in the record must respect max_string_bytes.
    bool keepable(std::size_t f, const std::string& val) {
        if (val.size() <= options_.max_string_bytes) return true;
        too_long(f, path_member(record_path(), field_name(f)), val);
        return false;
    }

    void field_string(const std::string& val) {
        const std::size_t f = field_;
        if (fields::kinds[f] == form_kind::string_list) {
            field_error(f, errc::wrong_type,
                        wrong_type_error({}, fields::expected[f], kind_name(kind::string)).message);
            return;
        }
        if (fields::keeps_text[f] && !keepable(f, val)) return;
        if (auto e = fields::store(rec(), f, val))
            field_error(f, e->code, std::move(e->message));
        else
            present_ |= fields::bit(f);
    }

    std::string group_path() const {
        return path_index(path_member(record_path(), fields::names[list_]), group_index_);
    }

    void group_string(const std::string& val) {
        if (val.size() > options_.max_string_bytes) {
            if (!group_failed_) too_long(list_, group_path(), val);
            group_failed_ = true;
        } else {
            auto& groups = fields::list(rec(), list_);
            // J3: 32 bytes a group for as few as 3 bytes of input (""): checked
            // before growing (the new buffer, twice the old, and the old).
            if (groups.size() == groups.capacity() &&
                over_budget(3 * std::max<std::size_t>(groups.capacity(), 2) * sizeof(std::string) + group_bytes_ +
                            val.size())) {
                refuse_over_budget(
                    error{errc::limit_exceeded, group_path(),
                          "the groups would take more than 4 times the input's size in memory (rule J3)"});
                return;
            }
            // Records carry one to a few groups: one allocation instead of growing.
            if (groups.empty()) groups.reserve(4);
            groups.push_back(val);
            group_bytes_ += string_heap_bytes(groups.back());
        }
        ++group_index_;
    }

    void group_wrong_type(kind k) {
        // The first bad element is the one reported, as try_api_key_from_json does.
        if (!group_failed_)
            field_error(list_, errc::wrong_type, group_path(), wrong_type_error({}, "a string", kind_name(k)).message);
        group_failed_ = true;
        ++group_index_;
    }

    void end_record() {
        if ((present_ & fields::required_mask) != fields::required_mask) {
            for (std::size_t f = 0; f < fields::count; ++f) {
                if (!fields::required(f) || (present_ & fields::bit(f)) != 0) continue;
                const bool reported = std::any_of(field_errors_.begin(), field_errors_.end(),
                                                  [f](const auto& fe) { return fe.first == f; });
                if (!reported)
                    field_errors_.push_back({f, missing_member_error(path_member(record_path(), field_name(f)))});
            }
        }
        if (field_errors_.empty()) return keep_record();
        // The earliest member in try_api_key_from_json's order; the first found on a tie.
        auto worst = field_errors_.begin();
        for (auto it = field_errors_.begin(); it != field_errors_.end(); ++it)
            if (it->first < worst->first) worst = it;
        if (block_ != nullptr) block_->pop_back();
        reject(std::move(worst->second));
    }

    const key_list_options& options_;
    std::size_t input_bytes_;
    std::optional<std::size_t> exact_capacity_;
    bool plan_from_page_size_;
    bool refused_for_planned_room_ = false;
    json_position pos_;  // paths for J2, repeated names for J1

    place where_ = place::root;
    slot slot_ = slot::root;
    std::size_t field_ = fields::none;  // the row of the member being read
    std::size_t list_ = fields::none;   // the row of the array member being read
    std::size_t depth_ = 0;             // open containers, skipped ones included
    std::size_t skip_ = 0;              // open containers inside a value being skipped

    // envelope
    bool status_seen_ = false;
    bool status_ok_ = false;
    bool data_seen_ = false;
    bool result_seen_ = false;
    std::string status_text_;  // quoted, only when not "success"
    std::string message_;      // quoted
    std::string error_code_;   // quoted, or the number
    std::optional<std::int64_t> count_, page_, page_size_;
    std::optional<error> status_error_, envelope_error_, fatal_, root_error_;

    // records
    std::vector<api_key> records_;              // the first block
    std::vector<std::vector<api_key>> chunks_;  // the blocks after it
    api_key scratch_;
    api_key* rec_ = nullptr;                 // the record being read: in block_, or scratch_
    std::vector<api_key>* block_ = nullptr;  // where rec_ is, if not scratch_
    std::vector<error> rejected_;
    std::size_t rejected_count_ = 0;
    bool planned_ = false;
    bool overflowed_ = false;
    std::size_t capacity_ = 0;                 // records_ may hold this many
    std::size_t valid_records_ = 0;            // kept or not
    std::size_t kept_bytes_ = 0;               // J3: heap bytes of what the page will hold
    std::size_t group_bytes_ = 0;              // heap bytes of the group names of the record being read
    std::optional<error> first_record_error_;  // strict mode
    std::size_t next_index_ = 0;
    std::size_t index_ = 0;      // of the element being read
    std::uint64_t present_ = 0;  // one bit per row that came
    // J1 in a record: the rows named so far, and whether a name was unknown or
    // repeated (then the general check of json_position decides and reports).
    std::uint64_t named_ = 0;
    bool names_unproven_ = false;
    std::size_t group_index_ = 0;
    bool group_failed_ = false;
    std::vector<std::pair<std::size_t, error>> field_errors_;  // of the record being read, by row

    const std::vector<overflowing_number>* overflows_ = nullptr;
    std::size_t numbers_seen_ = 0;
    std::size_t next_overflow_ = 0;
    bool stopped_at_overflow_ = false;
};

}  // namespace keyhook::detail
