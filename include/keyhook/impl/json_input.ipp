// keyhook: definitions of json_input.hpp (see config.hpp for when they are compiled).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/detail/json_parser.hpp"
#include "keyhook/json_input.hpp"

namespace keyhook {
namespace detail {

// Builds the DOM (see try_parse_json). Memory is accounted as the DOM grows:
// the exact heap requests of libstdc++'s containers, an upper bound elsewhere.
// A template (Json is always nlohmann::json) so that its members, and the
// parser they are run by, are compiled only where a DOM is read.
template <class Json>
class json_dom_builder {
public:
    using json = Json;
    using number_integer_t = typename json::number_integer_t;
    using number_unsigned_t = typename json::number_unsigned_t;
    using number_float_t = typename json::number_float_t;
    using string_t = typename json::string_t;
    using binary_t = typename json::binary_t;

    json_dom_builder(const json_limits& limits, std::size_t input_bytes)
        : limits_(limits), budget_(budget_of(limits, input_bytes)) {}

    // The elements of the top-level object's array `member` go to `call` one
    // at a time (try_parse_json_each), each dropped once handed over.
    void stream(std::string_view member, void* each, json_element_call call) {
        stream_member_ = member;
        each_ = each;
        call_ = call;
    }

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
        // What the names' bookkeeping may take while it grows: its old and
        // new storage are both held for a moment (J3).
        const std::size_t accounted = accounted_bytes();
        position_.limit_growth(accounted < budget_ ? budget_ - accounted : 0);
        if (!position_.key(k)) {
            if (position_.growth_refused()) return fail(over_budget_error());
            return fail(limit_error("member names longer than 4 GiB"));
        }
        auto& members = *stack_.back()->template get_ptr<typename json::object_t*>();
        if (call_ && stack_.size() == 1) stream_key_ = k == stream_member_;
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

    bool parse_error(std::size_t position, const std::string& token, const typename json::exception& ex) {
        if (ex.id == 406) return fail(number_overflow_error(position_.path(), token));
        return fail(json_syntax_error(position, ex.what()));
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
        return fail(over_budget_error());
    }

    error over_budget_error() const {
        return limit_error("the document would take more than " + std::to_string(limits_.memory_factor) +
                                " times its size in memory (rule J3)");
    }

    // Places v where the parser is: the root, the next array element, or the
    // member whose name was just read.
    json* place(json&& v) {
        if (stack_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        json& parent = *stack_.back();
        if (&parent == stream_array_) {
            // An element of the streamed array: held apart until it is
            // complete, then destroyed on its own (hand_over).
            element_ = std::move(v);
            return &element_;
        }
        // nlohmann's destructor flattens a DOM onto a stack of values grown by
        // doubling, while the DOM is still held. That stack holds at most what
        // the open containers hold together at some point of the parse.
        ++counts_.back();
        if (++open_values_ > max_open_values_) max_open_values_ = open_values_;
        if (parent.is_array()) {
            auto& elements = *parent.template get_ptr<typename json::array_t*>();
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
        const json* at = place(std::move(v));
        position_.value_done();
        if (at == &element_) return hand_over();
        return check_budget();
    }

    // The element of the streamed array just completed goes to `each`; what
    // it took in memory is given back, and what `each` keeps is counted.
    bool hand_over() {
        auto kept = call_(each_, element_, elements_++);
        element_ = json();
        if (!kept) return fail(std::move(kept.error()));
        const std::size_t cap = std::numeric_limits<std::size_t>::max();
        used_ = *kept > cap - element_base_ ? cap : element_base_ + *kept;
        element_base_ = used_;
        return check_budget();
    }

    bool open(bool object) {
        if (!position_.open(object, limits_.max_depth))
            return fail(limit_error("nested deeper than " + std::to_string(limits_.max_depth) + " levels"));
        json* c = nullptr;
        const bool streamed = !object && stream_key_ && stack_.size() == 1;
        stream_key_ = false;
        if (object) {
            used_ += sizeof(typename json::object_t);
            c = place(json(json::value_t::object));
        } else {
            used_ += sizeof(typename json::array_t);
            c = place(json(json::value_t::array));
        }
        if (streamed) {
            stream_array_ = c;
            element_base_ = used_;
        }
        stack_.push_back(c);
        counts_.push_back(0);
        return check_budget();
    }

    bool close() {
        const json* closed = stack_.back();
        stack_.pop_back();
        open_values_ -= counts_.back();
        counts_.pop_back();
        // Repeated names were refused as they came (the map is the set).
        (void)position_.close(false);
        if (closed == stream_array_) stream_array_ = nullptr;
        if (closed == &element_) return hand_over();
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
    // try_parse_json_each: the member streamed, whether the name just read
    // at the top level is it, its array once open, the element being read.
    std::string_view stream_member_;
    void* each_ = nullptr;
    json_element_call call_ = nullptr;
    bool stream_key_ = false;
    const json* stream_array_ = nullptr;
    json element_;
    std::size_t element_base_ = 0;  // used_ when the element began
    std::size_t elements_ = 0;
};

}  // namespace detail

namespace detail {

template <class D>
KEYHOOK_INLINE result<typename json_for<D>::type> parse_json_each(std::string_view text, std::string_view array_member,
                                                                  void* each, json_element_call call,
                                                                  const json_limits& limits) {
    using json = typename json_for<D>::type;
    if (text.size() > limits.max_bytes)
        return error{errc::limit_exceeded,
                     {},
                     "JSON text of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                         std::to_string(limits.max_bytes)};
    // nlohmann's lexer takes a NUL byte for the end of input and would ignore
    // what follows; JSON text never holds a raw NUL.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) return nul_byte_error(nul);
    json_dom_builder<json> builder(limits, text.size());
    if (call) builder.stream(array_member, each, call);
    try {
        run_json_parser_checked(text, builder);
    } catch (const typename json::exception& ex) {
        // sax_parse reports through parse_error; a second net only.
        builder.fail(json_syntax_error(0, ex.what()));
    }
    return builder.finish();
}

}  // namespace detail

template <class D>
KEYHOOK_INLINE result<typename detail::json_for<D>::type> try_parse_json(std::string_view text,
                                                                         const json_limits& limits) {
    return detail::parse_json_each<D>(text, {}, nullptr, nullptr, limits);
}

template <class D>
KEYHOOK_INLINE typename detail::json_for<D>::type parse_json(std::string_view text, const json_limits& limits) {
    return try_parse_json<D>(text, limits).value();
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the one instantiation of each, which programs link to.
namespace keyhook {
namespace detail {
template result<nlohmann::json> parse_json_each<void>(std::string_view, std::string_view, void*, json_element_call,
                                                      const json_limits&);
}  // namespace detail
template result<nlohmann::json> try_parse_json<void>(std::string_view, const json_limits&);
template nlohmann::json parse_json<void>(std::string_view, const json_limits&);
}  // namespace keyhook
#endif
