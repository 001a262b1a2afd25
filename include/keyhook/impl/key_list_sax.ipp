// keyhook: the list call's SAX decoder (rules L2, J1 to J3), which reads a
// response straight into api_key records. Used by impl/key_list.ipp only.
// This file follows the document (envelope > data > result > record >
// groups) and hands each value to the part that reads it:
//   impl/key_list_envelope.ipp   status, data, count, page, pageSize (L2)
//   detail/sax_record_reader.hpp a record, from its member table (L2, J1)
//   impl/key_list_blocks.ipp     where the records go, J3's budget
//   detail/number_overflow.hpp   numbers no double holds (J2), which
//   impl/key_list_sax_numbers.ipp turns into a record's or the page's error
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/api_key.hpp"
#include "keyhook/impl/api_key.ipp"
#include "keyhook/detail/json_parser.hpp"
#include "keyhook/detail/sax_record_reader.hpp"
#include "keyhook/error.hpp"
#include "keyhook/impl/key_list_blocks.ipp"
#include "keyhook/impl/key_list_envelope.ipp"
#include "keyhook/key_list.hpp"

namespace keyhook::detail {

// A template (D is a deferred definition's parameter, config.hpp) so that its
// members, and the parser that runs them, are compiled only where a list is read.
template <class D>
class key_list_sax {
public:
    using json = nlohmann::json;
    using envelope = key_list_envelope<D>;
    using numeric = typename envelope::numeric;

    key_list_sax(const key_list_options& options, std::size_t input_bytes, const key_list_plan& plan)
        : options_(options),
          blocks_(input_bytes, options.mode, plan, pos_),
          record_("data.result", options.max_string_bytes, pos_),
          overflows_(plan.overflows) {}

    // nlohmann's SAX events
    bool null() { return scalar(json_kind::null); }
    bool boolean(bool) { return scalar(json_kind::boolean); }
    bool binary(json::binary_t&) { return scalar(json_kind::other); }
    bool number_integer(json::number_integer_t v) {
        if (const auto* o = overflows_.next()) return overflowed(o->text);
        return number(v, numeric::integer, {});
    }
    bool number_unsigned(json::number_unsigned_t v) {
        if (const auto* o = overflows_.next()) return overflowed(o->text);
        if (v <= static_cast<json::number_unsigned_t>(std::numeric_limits<std::int64_t>::max()))
            return number(static_cast<std::int64_t>(v), numeric::integer, {});
        return number(0, numeric::too_large, std::to_string(v));
    }
    bool number_float(json::number_float_t, const std::string& text) {
        if (const auto* o = overflows_.next()) return overflowed(o->text);
        // Integer syntax too large for 64 bits (J2: out of range, not a fraction).
        const bool integral = text.find_first_of(".eE") == std::string::npos;
        return number(0, integral ? numeric::too_large : numeric::floating, text);
    }

    bool string(std::string& val) {
        // A record is an object, whose frame in pos_ counts no values (only
        // an array's count is a path step).
        if (skip_ == 0 && where_ == place::record) {
            record_.string(val);
            return true;
        }
        value_done();
        return string_elsewhere(val);
    }

    bool key(std::string& k) {
        // Every object's names are recorded, skipped ones too (J1 everywhere);
        // a record's own names by its reader.
        if (skip_ == 0 && where_ == place::record) return record_.key(k) || names_too_long();
        return key_elsewhere(k);
    }

    bool start_object(std::size_t) {
        if (const auto o = enter(true); o != opened::read) return o == opened::skipped;
        if (where_ == place::result) {
            begin_record();
            return true;
        }
        if (where_ == place::root || (where_ == place::envelope && member_ == envelope::member::data)) {
            if (where_ == place::envelope) envelope_.data_opened();
            where_ = where_ == place::root ? place::envelope : place::data;
            member_ = envelope::member::ignore;
            return true;
        }
        return skip_container(json_kind::object);
    }

    bool start_array(std::size_t) {
        if (skip_ == 0 && where_ == place::record && record_.reads_list()) {
            if (++depth_ > options_.max_depth) return too_deep();
            record_.open_list();  // without a frame in pos_ (see list_position)
            where_ = place::groups;
            return true;
        }
        if (const auto o = enter(false); o != opened::read) return o == opened::skipped;
        if (where_ == place::data && member_ == envelope::member::result) {
            envelope_.result_opened();
            where_ = place::result;
            next_index_ = 0;
            blocks_.plan(envelope_.page_size());
            return true;
        }
        if (where_ == place::root) root_not_object(json_kind::array);
        return skip_container(json_kind::array);
    }

    bool end_object() {
        --depth_;
        // J1: a member name repeated in this object refuses the whole input. A
        // record whose names were all table rows, each once, is proven already.
        const bool proven = skip_ == 0 && where_ == place::record && record_.proven();
        if (auto repeated = pos_.close(!proven))
            return fail(error{errc::duplicate_member, std::move(*repeated), "member name repeated in one object"});
        if (skip_ > 0) {
            --skip_;
            return true;
        }
        if (where_ == place::record) {
            end_record();
            where_ = place::result;
            return !fatal_;
        }
        if (where_ == place::data || where_ == place::envelope) {
            where_ = where_ == place::data ? place::envelope : place::done;
            member_ = envelope::member::ignore;
        }
        return true;
    }

    bool end_array() {
        --depth_;
        if (skip_ == 0 && where_ == place::groups) {
            if (record_.close_list()) (void)pos_.close(false);
            where_ = place::record;
            return true;
        }
        (void)pos_.close(false);
        if (skip_ > 0) {
            --skip_;
            return true;
        }
        if (where_ == place::result) {
            where_ = place::data;
            member_ = envelope::member::ignore;
        }
        return true;
    }

    bool parse_error(std::size_t position, const std::string& token, const nlohmann::json::exception& ex) {
        if (ex.id != 406) return fail(json_syntax_error(position, ex.what()));
        // J2: a number no double holds ("1e400"). try_parse_key_list reads the text
        // again with such numbers zeroed, so that one inside a record rejects only it.
        stopped_at_overflow_ = true;
        return refuse_overflow(token);
    }

    // What the pass found. A failure found outside the parse (the parser's own throw).
    void refuse(error e) { (void)fail(std::move(e)); }

    [[nodiscard]] bool stopped_at_overflow() const noexcept { return stopped_at_overflow_; }
    [[nodiscard]] bool refused_for_planned_room() const noexcept { return refused_for_planned_room_; }
    [[nodiscard]] std::optional<std::size_t> needs_exact_capacity() const noexcept {
        return fatal_ ? std::nullopt : blocks_.needs_exact_capacity();
    }

    // The outcome, once the parse has returned.
    [[nodiscard]] result<key_list_page> finish() {
        if (fatal_) return std::move(*fatal_);
        if (root_error_) return std::move(*root_error_);
        if (auto e = envelope_.fault()) return std::move(*e);
        if (auto e = blocks_.strict_error()) return std::move(*e);
        key_list_page p;
        envelope_.fill(p);
        blocks_.gather_into(p);
        return p;
    }

private:
    // Where the reader is. Inside a value being skipped (skip_ > 0) it stays
    // where the skipped value began.
    enum class place : unsigned char {
        root,      // before the top-level value
        envelope,  // in the top-level object; member_ says which member is read
        data,      // in data; member_ likewise
        result,    // in data.result, between records
        record,    // in a record (record_ knows its member)
        groups,    // in a record's list of strings
        done,      // after the top-level object
    };

    // A string anywhere but as a record's member.
    KEYHOOK_DETAIL_COLD bool string_elsewhere(const std::string& val) {
        if (skip_ > 0) return true;
        switch (where_) {
            case place::groups: return add_to_list(val);
            case place::result: reject_element(json_kind::string); return true;
            case place::envelope:
            case place::data: envelope_.string(member_, val); return true;
            case place::root: return root_not_object(json_kind::string);
            case place::record:
            case place::done: return true;
        }
        return true;
    }

    // J3 may refuse the page while a record's list of strings grows.
    bool add_to_list(const std::string& val) {
        auto e = record_.list_string(val, [this](std::size_t extra) { return blocks_.over_budget(extra); });
        if (e) refuse_over_budget(std::move(*e));
        return !e;
    }

    // A member name anywhere but in a record.
    KEYHOOK_DETAIL_COLD bool key_elsewhere(std::string_view k) {
        if (!pos_.key(k)) return names_too_long();
        if (skip_ == 0 && where_ == place::envelope) member_ = envelope::of_envelope(k);
        if (skip_ == 0 && where_ == place::data) member_ = envelope::of_data(k);
        return true;
    }

    KEYHOOK_DETAIL_COLD bool names_too_long() {
        return fail(error{errc::limit_exceeded, pos_.container_path(), "member names longer than 4 GiB"});
    }

    // A container opens: too deep (the parse stops), inside a skipped value, or to be read.
    enum class opened : unsigned char { refused, skipped, read };

    opened enter(bool object) {
        if (++depth_ > options_.max_depth) return (void)too_deep(), opened::refused;
        if (skip_ == 0 && where_ == place::record) record_.sync_position();  // paths inside name the member
        if (skip_ == 0 && where_ == place::groups) record_.list_position();
        (void)pos_.open(object, std::numeric_limits<std::size_t>::max());
        if (skip_ == 0) return opened::read;
        ++skip_;
        return opened::skipped;
    }

    // A container where none is read: a wrong value where one was expected, skipped in any case.
    bool skip_container(json_kind k) {
        report_other(k);
        skip_ = 1;
        return true;
    }

    bool scalar(json_kind k) {
        value_done();
        if (skip_ > 0) return true;
        if (where_ == place::root) return root_not_object(k);
        report_other(k);
        return true;
    }

    // A value that is not a string (nor a container read) where the reader is.
    void report_other(json_kind k) {
        switch (where_) {
            case place::record: record_.other(k); break;
            case place::groups: record_.list_other(k); break;
            case place::result: reject_element(k); break;
            case place::envelope:
            case place::data: envelope_.other(member_, k); break;
            case place::root:
            case place::done: break;
        }
    }

    // Numbers (J2): impl/key_list_sax_numbers.ipp.
    bool number(std::int64_t v, numeric n, std::string_view text);
    bool overflowed(std::string_view token);
    bool refuse_overflow(std::string_view token);

    // The path of the value being read.
    std::string path_here() {
        if (skip_ == 0 && where_ == place::record) record_.sync_position();
        if (skip_ == 0 && where_ == place::groups) record_.list_position();
        return pos_.path();
    }

    // A value is done: counted in pos_'s innermost frame (a list without one counts its own).
    void value_done() {
        if (where_ != place::groups || record_.list_in_position()) pos_.value_done();
    }

    KEYHOOK_DETAIL_COLD bool too_deep() {
        return fail(error{errc::limit_exceeded, current_path(),
                          "nested deeper than " + std::to_string(options_.max_depth) + " levels"});
    }

    // The path of the container being read (for the depth limit).
    std::string current_path() const {
        if (where_ == place::data) return "data";
        if (where_ == place::result) return "data.result";
        if (where_ == place::record) return record_.path();
        return where_ == place::groups ? record_.list_path() : std::string();
    }

    // Noted, not fatal: malformed text after a root of the wrong type is reported as such.
    bool root_not_object(json_kind k) {
        if (!root_error_) root_error_ = wrong_type_error({}, "an object", json_kind_name(k));
        return true;
    }

    // ---- records

    void begin_record() {
        index_ = next_index_++;
        record_.begin(blocks_.place_record(), index_);
        where_ = place::record;
    }

    void end_record() {
        if (auto e = record_.end()) {
            blocks_.drop_record();
            return blocks_.reject(std::move(*e));
        }
        // J3 by construction: refuse an input whose records would take more.
        if (!blocks_.keep_record(record_.record()))
            refuse_over_budget(error{errc::limit_exceeded, record_.path(),
                                     "the records would take more than 4 times the input's size in memory (rule J3)"});
    }

    void reject_element(json_kind k) {
        index_ = next_index_++;
        blocks_.reject(wrong_type_error(path_index("data.result", index_), "an object", json_kind_name(k)));
    }

    // The first failure that stops the parse; false, for the SAX event to return.
    bool fail(error e) {
        if (!fatal_) fatal_ = std::move(e);
        return false;
    }

    // J3's refusal; noted when a first block planned from pageSize had room
    // to spare (the page is then read again without such a plan).
    void refuse_over_budget(error e) {
        if (!fatal_ && blocks_.planned_room_unused()) refused_for_planned_room_ = true;
        (void)fail(std::move(e));
    }

    const key_list_options& options_;
    json_position pos_;  // paths for J2, repeated names for J1
    key_list_blocks<D> blocks_;
    sax_record_reader<api_key> record_;
    key_list_envelope<D> envelope_;
    overflow_cursor<D> overflows_;

    place where_ = place::root;
    typename envelope::member member_ = envelope::member::ignore;
    std::size_t depth_ = 0;  // open containers, skipped ones included
    std::size_t skip_ = 0;   // open containers inside a value being skipped

    std::size_t next_index_ = 0;
    std::size_t index_ = 0;  // of the element being read
    std::optional<error> fatal_, root_error_;
    bool refused_for_planned_room_ = false;
    bool stopped_at_overflow_ = false;
};

}  // namespace keyhook::detail

#include "keyhook/impl/key_list_sax_numbers.ipp"
