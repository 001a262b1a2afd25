// keyhook: the strict JSON reader every keyhook parser of JSON text uses
// (rules J1 to J3). try_parse_json builds an nlohmann::json DOM from one SAX
// pass that refuses what nlohmann alone accepts or misreports: a member name
// repeated in one object (J1), a number a double cannot hold (J2, reported
// with its JSON path), a raw NUL byte, nesting deeper than a limit (checked
// before each container is opened, so nothing recursive ever sees deep input)
// and a document whose DOM would take more memory than J3 allows.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/error.hpp"

namespace keyhook {

// Bounds on what try_parse_json reads. A larger, deeper or (as a DOM) bigger
// document is refused with errc::limit_exceeded before or while it is parsed.
struct json_limits {
    std::size_t max_bytes = std::size_t{64} << 20;  // 64 MiB of text
    std::size_t max_depth = 64;                     // the root container is depth 1
    // J3: the DOM's heap bytes may reach memory_factor x the text's bytes plus
    // memory_allowance; a document that needs more is refused while it is read.
    std::size_t memory_factor = 4;
    std::size_t memory_allowance = std::size_t{1} << 20;
};

namespace detail {

// A member name as a path step: ".name" for plain names, else ["quoted"]
// (quote_input escapes control characters and bounds the length).
inline void append_member_step(std::string& path, std::string_view name) {
    const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == '$' || c == '@';
    });
    if (plain) {
        if (!path.empty()) path += '.';
        path.append(name);
    } else {
        path += '[';
        path += quote_input(name);
        path += ']';
    }
}

// Where a SAX handler is, for error paths, and the J1 check. Each open object
// keeps its member names back to back in one arena; when the object closes,
// its names are sorted once (n log n) and a repeated one is reported, then
// dropped. Memory: the names of the open objects plus 8 bytes a member.
class json_position {
public:
    // Opens a container; false when that would nest deeper than max_depth.
    bool open(bool object, std::size_t max_depth) {
        if (frames_.size() >= max_depth) return false;
        frames_.push_back(frame{object, 0, names_.size(), refs_.size()});
        return true;
    }

    // The member name just read in the innermost object. False when the
    // names of the open objects would pass 4 GiB (offsets are 32-bit).
    bool key(std::string_view name) {
        const std::size_t at = names_.size();
        if (at + name.size() > std::numeric_limits<std::uint32_t>::max()) return false;
        names_.append(name);
        refs_.push_back(name_ref{static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(name.size())});
        return true;
    }

    // After a value inside the innermost container (arrays count elements).
    void value_done() noexcept {
        if (!frames_.empty()) ++frames_.back().count;
    }

    // Closes the innermost container. For an object with check_repeats, the
    // path of its first repeated member (the earliest second occurrence).
    std::optional<std::string> close(bool check_repeats) {
        std::optional<std::string> repeated;
        const frame f = frames_.back();
        if (f.object && check_repeats && refs_.size() - f.refs_begin > 1) {
            const auto first = refs_.begin() + static_cast<std::ptrdiff_t>(f.refs_begin);
            // Sorted by name, then by position: equal names are adjacent, in order.
            std::sort(first, refs_.end(), [this](const name_ref& a, const name_ref& b) {
                const int c = name(a).compare(name(b));
                return c != 0 ? c < 0 : a.offset < b.offset;
            });
            const name_ref* found = nullptr;
            for (auto it = first + 1; it != refs_.end(); ++it)
                if (name(*it) == name(*(it - 1)) && (found == nullptr || it->offset < found->offset)) found = &*it;
            if (found != nullptr) {
                std::string p = path_of(frames_.size() - 1);
                append_member_step(p, name(*found));
                repeated = std::move(p);
            }
        }
        names_.resize(f.names_begin);
        refs_.resize(f.refs_begin);
        frames_.pop_back();
        value_done();
        return repeated;
    }

    [[nodiscard]] std::size_t depth() const noexcept { return frames_.size(); }

    // The path of the value being read: "data.result[3].expireAt"; empty at the root.
    [[nodiscard]] std::string path() const { return path_of(frames_.size()); }

    // The path of the innermost open container itself.
    [[nodiscard]] std::string container_path() const {
        return frames_.empty() ? std::string() : path_of(frames_.size() - 1);
    }

    // The last member name read in the innermost object.
    [[nodiscard]] std::string_view last_key() const noexcept {
        return refs_.empty() ? std::string_view() : name(refs_.back());
    }

    // Heap bytes this bookkeeping holds (for J3 accounting).
    [[nodiscard]] std::size_t capacity_bytes() const noexcept {
        return names_.capacity() + refs_.capacity() * sizeof(name_ref) + frames_.capacity() * sizeof(frame);
    }

private:
    struct frame {
        bool object;
        std::size_t count;  // elements done (arrays) or members read (objects)
        std::size_t names_begin;
        std::size_t refs_begin;
    };
    struct name_ref {
        std::uint32_t offset;
        std::uint32_t size;
    };

    std::string_view name(const name_ref& r) const noexcept {
        return std::string_view(names_.data() + r.offset, r.size);
    }

    // The steps of the first `levels` frames: each one's member or element
    // being read. All frames: the value being read; one fewer: its container.
    std::string path_of(std::size_t levels) const {
        std::string p;
        for (std::size_t i = 0; i < levels; ++i) {
            const frame& f = frames_[i];
            if (f.object) {
                // The member being read is the last name recorded in this frame.
                const std::size_t end = i + 1 < frames_.size() ? frames_[i + 1].refs_begin : refs_.size();
                if (end > f.refs_begin) append_member_step(p, name(refs_[end - 1]));
            } else {
                p += '[';
                p += std::to_string(f.count);
                p += ']';
            }
        }
        return p;
    }

    std::vector<frame> frames_;
    std::string names_;
    std::vector<name_ref> refs_;
};

// nlohmann's message reads "[json.exception.parse_error.101] parse error at
// line 1, column 2: syntax error while parsing value - <reason>; last read:
// '<input>'": keep the reason only, never the input.
inline std::string_view json_error_reason(std::string_view what) {
    std::string_view reason;
    if (const auto dash = what.find(" - "); dash != std::string_view::npos) {
        reason = what.substr(dash + 3);
        if (const auto cut = reason.find("; last read"); cut != std::string_view::npos) reason = reason.substr(0, cut);
        if (reason.size() > 120) reason = reason.substr(0, 120);
    }
    return reason;
}

// J2: a number nlohmann cannot hold (out_of_range 406, "1e400"), at `path`.
inline error number_overflow_error(std::string path, std::string_view token) {
    return error{errc::out_of_range, std::move(path),
                 "number " + quote_input(token) + " is outside the range of a double"};
}

// Builds the DOM (see try_parse_json). Memory is accounted as the DOM grows:
// the exact heap requests of libstdc++'s containers, an upper bound elsewhere.
class json_dom_builder {
public:
    using json = nlohmann::json;
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    json_dom_builder(const json_limits& limits, std::size_t input_bytes)
        : limits_(limits), budget_(budget_of(limits, input_bytes)) {}

    bool null() { return put(json(nullptr)); }
    bool boolean(bool v) { return put(json(v)); }
    bool number_integer(number_integer_t v) { return put(json(v)); }
    bool number_unsigned(number_unsigned_t v) { return put(json(v)); }
    bool number_float(number_float_t v, const string_t&) { return put(json(v)); }
    bool string(string_t& v) {
        // A string value is a std::string on the heap; the lexer's buffer moves
        // into it with its capacity.
        used_ += sizeof(string_t);
        if (v.capacity() > 15) used_ += v.capacity() + 1;
        return put(json(std::move(v)));
    }
    bool binary(binary_t&) { return fail(error{errc::wrong_type, position_.path(), "binary values are not JSON"}); }

    bool start_object(std::size_t) { return open(true); }
    bool start_array(std::size_t) { return open(false); }

    bool key(string_t& k) {
        if (!position_.key(k)) return fail(limit_error("member names longer than 4 GiB"));
        auto& members = *stack_.back()->get_ptr<json::object_t*>();
        // A map node: three pointers and a colour, the name, the value.
        used_ += 32 + sizeof(std::string) + sizeof(json);
        if (k.capacity() > 15) used_ += k.capacity() + 1;
        auto [it, inserted] = members.emplace(std::move(k), nullptr);
        if (!inserted)
            return fail(error{errc::duplicate_member, position_.path(), "member name repeated in one object"});
        slot_ = &it->second;
        return check_budget();
    }

    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool parse_error(std::size_t position, const std::string& token, const json::exception& ex) {
        if (ex.id == 406) return fail(number_overflow_error(position_.path(), token));
        const std::string_view what = ex.what();
        std::string message = "syntax error at byte " + std::to_string(position > 0 ? position - 1 : 0);
        if (const auto reason = json_error_reason(what); !reason.empty()) {
            message += ": ";
            message += reason;
        }
        const bool utf8 = what.find("UTF-8") != std::string_view::npos;
        return fail(error{utf8 ? errc::invalid_utf8 : errc::syntax_error, {}, std::move(message)});
    }

    bool fail(error e) {
        if (!error_) error_ = std::move(e);
        return false;
    }

    [[nodiscard]] result<json> finish() {
        if (error_) return std::move(*error_);
        return std::move(root_);
    }

    [[nodiscard]] std::size_t accounted_bytes() const noexcept {
        return used_ + position_.capacity_bytes() + max_open_values_ * teardown_bytes;
    }

private:
    static std::size_t budget_of(const json_limits& l, std::size_t input_bytes) noexcept {
        const std::size_t cap = std::numeric_limits<std::size_t>::max();
        if (l.memory_factor != 0 && input_bytes > (cap - l.memory_allowance) / l.memory_factor) return cap;
        return input_bytes * l.memory_factor + l.memory_allowance;
    }

    error limit_error(std::string why) const { return error{errc::limit_exceeded, position_.path(), std::move(why)}; }

    bool check_budget() {
        if (accounted_bytes() <= budget_) return true;
        return fail(limit_error("the document would take more than " + std::to_string(limits_.memory_factor) +
                                " times its size in memory (rule J3)"));
    }

    // Places v where the parser is: the root, the next array element, or the
    // member whose name was just read.
    json* place(json&& v) {
        if (stack_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        // nlohmann's destructor flattens a DOM onto a stack of values grown by
        // doubling, while the DOM is still held. That stack holds at most what
        // the open containers hold together at some point of the parse.
        ++counts_.back();
        if (++open_values_ > max_open_values_) max_open_values_ = open_values_;
        json& parent = *stack_.back();
        if (parent.is_array()) {
            auto& elements = *parent.get_ptr<json::array_t*>();
            const std::size_t before = elements.capacity();
            elements.push_back(std::move(v));
            // Growing keeps the old buffer until the move is done: count both once.
            if (elements.capacity() != before) used_ += elements.capacity() * sizeof(json);
            return &elements.back();
        }
        *slot_ = std::move(v);
        return slot_;
    }

    bool put(json&& v) {
        place(std::move(v));
        position_.value_done();
        return check_budget();
    }

    bool open(bool object) {
        if (!position_.open(object, limits_.max_depth))
            return fail(limit_error("nested deeper than " + std::to_string(limits_.max_depth) + " levels"));
        json* c = nullptr;
        if (object) {
            used_ += sizeof(json::object_t);
            c = place(json(json::value_t::object));
        } else {
            used_ += sizeof(json::array_t);
            c = place(json(json::value_t::array));
        }
        stack_.push_back(c);
        counts_.push_back(0);
        return check_budget();
    }

    bool close() {
        stack_.pop_back();
        open_values_ -= counts_.back();
        counts_.pop_back();
        // Repeated names were refused as they came (the map is the set).
        (void)position_.close(false);
        return true;
    }

    // A value on the teardown stack: 16 bytes, twice over as it grows, and the
    // old buffer while it moves.
    static constexpr std::size_t teardown_bytes = 3 * sizeof(json);

    const json_limits& limits_;
    std::size_t budget_;
    std::size_t used_ = 0;
    json root_;
    std::vector<json*> stack_;         // open containers; at most max_depth
    std::vector<std::size_t> counts_;  // values placed in each
    std::size_t open_values_ = 0;      // their sum
    std::size_t max_open_values_ = 0;
    json* slot_ = nullptr;  // the member whose name was read last
    json_position position_;
    std::optional<error> error_;
};

// Runs nlohmann's JSON parser (text only, no binary formats) with `sax`.
template <class Sax>
void run_json_parser(std::string_view text, Sax& sax) {
    auto input = nlohmann::detail::input_adapter(text.data(), text.data() + text.size());
    (void)nlohmann::detail::parser<nlohmann::json, decltype(input)>(std::move(input)).sax_parse(&sax, true);
}

}  // namespace detail

// Reads one JSON document strictly. Errors, each with the JSON path where one
// applies: errc::limit_exceeded (more than max_bytes, nesting deeper than
// max_depth, a DOM larger than J3 allows), errc::syntax_error (malformed text
// or a raw NUL byte, with the 0-based byte offset; nothing of the input is
// quoted), errc::invalid_utf8, errc::duplicate_member (J1: the path of the
// member named a second time, e.g. "webhooks[2].name"), errc::out_of_range
// (J2: a number a double cannot hold, e.g. "x[0]: number \"-1e400\" ...").
[[nodiscard]] inline result<nlohmann::json> try_parse_json(std::string_view text, const json_limits& limits = {}) {
    if (text.size() > limits.max_bytes)
        return error{errc::limit_exceeded,
                     {},
                     "JSON text of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                         std::to_string(limits.max_bytes)};
    // nlohmann's lexer takes a NUL byte for the end of input and would ignore
    // what follows; JSON text never holds a raw NUL.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos)
        return error{errc::syntax_error, {}, "syntax error at byte " + std::to_string(nul) + ": a NUL byte"};
    detail::json_dom_builder builder(limits, text.size());
    try {
        detail::run_json_parser(text, builder);
    } catch (const nlohmann::json::exception& ex) {
        // sax_parse reports through parse_error; a second net only.
        builder.fail(error{errc::syntax_error, {}, std::string(detail::json_error_reason(ex.what()))});
    }
    return builder.finish();
}

[[nodiscard]] inline nlohmann::json parse_json(std::string_view text, const json_limits& limits = {}) {
    return try_parse_json(text, limits).value();
}

}  // namespace keyhook
