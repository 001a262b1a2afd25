// keyhook: one member table per record type, the single description of a
// record from which its JSON reader, writer, equality and heap accounting are
// derived (issue 21 item 2). A record forgotten in part fails to compile.
//
// How a record declares its table (next to the struct, in its own header):
//
//     struct stored_key {
//         key_id id;                        // required
//         std::optional<std::string> note;  // optional: absent or null reads as nullopt
//         std::vector<std::string> tags;    // optional: absent or null reads as empty
//         timestamp created_at{};           // required
//     };
//
//     template <>
//     struct detail::members_of<stored_key> {
//         static constexpr auto rows = std::make_tuple(
//             detail::row<detail::text_form>("id", &stored_key::id, detail::presence::required),
//             detail::row<detail::text_form>("note", &stored_key::note, detail::presence::optional),
//             detail::row<detail::string_list_form>("tags", &stored_key::tags, detail::presence::optional),
//             detail::row<detail::time_form>("createdAt", &stored_key::created_at, detail::presence::required));
//     };
//     static_assert(detail::members_complete<stored_key>());  // a forgotten row fails here
//
// and then derives, each in one line:
//
//     bool operator==(const stored_key& a, const stored_key& b) { return detail::members_equal(a, b); }
//     template <class Json> void to_json(Json& j, const stored_key& k) { detail::write_members(j, k); }
//     template <class Json> void from_json(const Json& j, stored_key& k) {
//         if (auto e = detail::read_members(j, std::string(), k)) throw exception(std::move(*e));
//     }
//     std::size_t bytes = detail::members_heap_bytes(k);  // J3's accounting
//     detail::clear_optional_members(k);                 // a test builder's minimal()
//
// read_members checks the rows in table order and reports the first fault with
// its JSON path ("data.result[3].expireAt") and why; write_members writes them
// in that order, an empty optional as null. A row's form says how its value is
// written in JSON: text_form (std::string, or a type built from one with
// `.str()`, such as key_id), time_form (timestamp, T4 text), enum_form<E,...>
// (a string read by a function), string_list_form (an array of strings), or
// a record's own form (any struct with the members text_form has). A member
// that is not in JSON (derived, or kept by the reader itself) is a row with
// detail::derived_row("name", &record::member): it counts for equality and
// heap accounting only.
//
// A streaming (SAX) reader uses detail::member_index<stored_key>: find(name)
// gives a row index (or none), store(record, i, text) converts a string
// member, reset(record, i) handles a null, list(record, i) gives an array
// member's vector, required_mask and bit(i) track which required members came.
//
// The completeness check: every derived function static_asserts that the
// table has one row per member of the aggregate. The aggregate's member count
// is the largest N for which `Record{a1, ..., aN}` compiles, each `a`
// converting to anything; a member added to the struct but not to the table
// makes the counts differ. Adding a member is therefore two edits: the struct
// and its row. (tests/compile_fail/members_missing.cpp checks the diagnostic.)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook::detail {

// ---- the table

// Whether a member must be in the JSON, may be left out (or null), or is not
// read from JSON at all.
enum class presence : unsigned char { required, optional, derived };

// One row: the JSON spelling (a string literal, so name.data() is
// NUL-terminated), the pointer to member, whether it is required; Form is how
// the value is written in JSON.
template <class Form, class Record, class T>
struct member_row {
    using form = Form;
    using record = Record;
    using type = T;
    std::string_view name;
    T Record::*ptr;
    presence need;
};

template <class Form, class Record, class T>
constexpr member_row<Form, Record, T> row(std::string_view name, T Record::*ptr, presence need) noexcept {
    return {name, ptr, need};
}

// Specialized by each record: `static constexpr auto rows = std::make_tuple(row<...>(...), ...);`
template <class Record>
struct members_of;

template <class Record>
inline constexpr std::size_t member_count = std::tuple_size_v<std::decay_t<decltype(members_of<Record>::rows)>>;

// ---- the completeness check

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// Converts to any member type; only used in unevaluated aggregate
// initialization. Not to an optional: optional's own converting constructor
// takes it, and two ways would make g++ warn (-Wconversion).
struct any_member {
    template <class T, class = std::enable_if_t<!is_optional<T>::value>>
    operator T() const;  // NOLINT: implicit on purpose
};
template <std::size_t>
using any_member_at = any_member;

template <class T, class Seq, class = void>
struct initializable_with : std::false_type {};
template <class T, std::size_t... I>
struct initializable_with<T, std::index_sequence<I...>, std::void_t<decltype(T{any_member_at<I>{}...})>>
    : std::true_type {};

// The number of members of aggregate T (up to 64).
template <class T, std::size_t N = 0>
constexpr std::size_t aggregate_member_count() noexcept {
    if constexpr (N < 64 && initializable_with<T, std::make_index_sequence<N + 1>>::value)
        return aggregate_member_count<T, N + 1>();
    else
        return N;
}

template <class Record>
constexpr bool members_complete() noexcept {
    static_assert(std::is_aggregate_v<Record>, "a record with a member table must be an aggregate");
    static_assert(member_count<Record> == aggregate_member_count<Record>(),
                  "every member of the record needs exactly one row in its detail::members_of table");
    return true;
}

// ---- forms

// The text of a string-like value: a std::string, or a type with `.str()`.
inline const std::string& text_of(const std::string& s) noexcept { return s; }
template <class T>
auto text_of(const T& v) noexcept -> decltype(v.str()) {
    return v.str();
}

// Heap bytes of a string besides its own size (none while it fits the small buffer).
inline std::size_t string_heap_bytes(const std::string& s) noexcept { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

// Forms whose JSON is a string provide: `expected` (the message's "expected
// ..."), from_text (an error without path, the caller adds it), write (the
// JSON value), heap_bytes. kind tells string forms from string_list_form.
enum class form_kind : unsigned char { string, string_list, none };

// A string kept as it is: std::string or a type built from one (key_id).
struct text_form {
    static constexpr form_kind kind = form_kind::string;
    static constexpr bool keeps_text = true;  // the text itself is kept (a reader's length limit applies)
    static constexpr std::string_view expected = "a string";
    template <class T>
    static std::optional<error> from_text(const std::string& text, T& out) {
        if constexpr (std::is_same_v<T, std::string>)
            out.assign(text);  // reuses the buffer of a record read before
        else
            out = T(text);
        return std::nullopt;
    }
    template <class T>
    static const std::string& write(const T& v) {
        return text_of(v);
    }
    template <class T>
    static std::size_t heap_bytes(const T& v) noexcept {
        return string_heap_bytes(text_of(v));
    }
};

// A T4 timestamp (read as parse_timestamp does, written by format_timestamp).
struct time_form {
    static constexpr form_kind kind = form_kind::string;
    static constexpr bool keeps_text = false;
    static constexpr std::string_view expected = "an ISO 8601 timestamp string";
    static std::optional<error> from_text(const std::string& text, timestamp& out) {
        timestamp t{};
        if (!parse_timestamp_into(text, t)) return timestamp_error({}, text);
        out = t;
        return std::nullopt;
    }
    static std::string write(timestamp t) { return format_timestamp(t); }
    static std::size_t heap_bytes(timestamp) noexcept { return 0; }
};

// An enumeration written as a string: Read gives std::optional<E> for a text,
// Unknown the error (path left empty) for a text Read refuses, Write the text.
template <class E, std::optional<E> (*Read)(std::string_view) noexcept, error (*Unknown)(std::string, std::string_view),
          std::string_view (*Write)(E) noexcept>
struct enum_form {
    static constexpr form_kind kind = form_kind::string;
    static constexpr bool keeps_text = false;
    static constexpr std::string_view expected = "a string";
    static std::optional<error> from_text(const std::string& text, E& out) {
        if (const auto v = Read(text)) {
            out = *v;
            return std::nullopt;
        }
        return Unknown({}, text);
    }
    static std::string write(E v) { return std::string(Write(v)); }
    static std::size_t heap_bytes(E) noexcept { return 0; }
};

// An array of strings (std::vector<std::string>); absent or null reads as empty.
struct string_list_form {
    static constexpr form_kind kind = form_kind::string_list;
    static constexpr bool keeps_text = true;
    static constexpr std::string_view expected = "an array of strings";
    static std::size_t heap_bytes(const std::vector<std::string>& v) noexcept {
        std::size_t n = v.capacity() * sizeof(std::string);
        for (const auto& s : v) n += string_heap_bytes(s);
        return n;
    }
};

// A member that is not in JSON: counted by equality and heap accounting only.
struct derived_form {
    static constexpr form_kind kind = form_kind::none;
    static constexpr bool keeps_text = false;
    static constexpr std::string_view expected = {};
    template <class T>
    static std::size_t heap_bytes(const T& v) noexcept {
        if constexpr (std::is_same_v<T, std::string>)
            return string_heap_bytes(v);
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
            return string_list_form::heap_bytes(v);
        else {
            static_assert(std::is_trivially_destructible_v<T>, "a derived member's heap bytes are not known");
            return 0;
        }
    }
};

template <class Record, class T>
constexpr member_row<derived_form, Record, T> derived_row(std::string_view name, T Record::*ptr) noexcept {
    return {name, ptr, presence::derived};
}

// ---- deriving from the table

// The first element that is not a string is reported, with its index.
template <class Json>
std::optional<error> read_string_list(const Json& m, const std::string& path, std::vector<std::string>& out) {
    if (!m.is_array()) return wrong_type(path, string_list_form::expected, m);
    out.reserve(m.size());
    for (std::size_t i = 0; i < m.size(); ++i) {
        const auto& g = m[i];
        if (!g.is_string()) return wrong_type(path_index(path, i), "a string", g);
        out.push_back(g.template get<std::string>());
    }
    return std::nullopt;
}

// Stores `text` in the (possibly optional) value of a string form.
template <class Form, class T>
std::optional<error> store_text(T& value, const std::string& text) {
    if constexpr (is_optional<T>::value) {
        if (!value) value.emplace();
        return Form::from_text(text, *value);
    } else {
        return Form::from_text(text, value);
    }
}

// One member of a parsed JSON object (null counts as missing, L2).
template <class Row, class Json, class Record>
std::optional<error> read_row(const Row& r, const Json& j, const std::string& path, Record& out) {
    using form = typename Row::form;
    if constexpr (form::kind == form_kind::none)
        return std::nullopt;
    else {
        const auto* m = json_member(j, r.name.data());
        if (!m) {
            if (r.need == presence::required) return missing_member_error(path_member(path, r.name));
            return std::nullopt;
        }
        auto& value = out.*(r.ptr);
        if constexpr (form::kind == form_kind::string_list) {
            return read_string_list(*m, path_member(path, r.name), value);
        } else {
            if (!m->is_string()) return wrong_type(path_member(path, r.name), form::expected, *m);
            auto e = store_text<form>(value, m->template get_ref<const std::string&>());
            if (e) e->path = path_member(path, r.name);
            return e;
        }
    }
}

// Reads every member of `out` from object j, in table order; the first fault
// is returned with its path under `path`.
template <class Json, class Record>
std::optional<error> read_members(const Json& j, const std::string& path, Record& out) {
    static_assert(members_complete<Record>());
    if (!j.is_object()) return wrong_type(path, "an object", j);
    std::optional<error> e;
    std::apply([&](const auto&... r) { (void)((e = read_row(r, j, path, out), !e) && ...); }, members_of<Record>::rows);
    return e;
}

template <class Row, class Json, class Record>
void write_row(const Row& r, Json& j, const Record& in) {
    using form = typename Row::form;
    const auto& value = in.*(r.ptr);
    if constexpr (form::kind == form_kind::none) {
        (void)value;
        return;
    } else if constexpr (form::kind == form_kind::string_list) {
        j[std::string(r.name)] = value;
    } else if constexpr (is_optional<std::decay_t<decltype(value)>>::value) {
        if (value)
            j[std::string(r.name)] = form::write(*value);
        else
            j[std::string(r.name)] = nullptr;
    } else {
        j[std::string(r.name)] = form::write(value);
    }
}

// Writes every member in table order; an empty optional as null.
template <class Json, class Record>
void write_members(Json& j, const Record& in) {
    static_assert(members_complete<Record>());
    j = Json::object();
    std::apply([&](const auto&... r) { (write_row(r, j, in), ...); }, members_of<Record>::rows);
}

template <class Record>
bool members_equal(const Record& a, const Record& b) {
    static_assert(members_complete<Record>());
    return std::apply([&](const auto&... r) { return ((a.*(r.ptr) == b.*(r.ptr)) && ...); }, members_of<Record>::rows);
}

// Empties every optional member (and every list): the least a record may carry.
template <class Record>
void clear_optional_members(Record& r) {
    static_assert(members_complete<Record>());
    std::apply(
        [&](const auto&... row) {
            const auto clear = [&](const auto& one) {
                auto& value = r.*(one.ptr);
                using value_type = std::decay_t<decltype(value)>;
                if constexpr (is_optional<value_type>::value)
                    value.reset();
                else if constexpr (std::is_same_v<value_type, std::vector<std::string>>)
                    value.clear();
            };
            (clear(row), ...);
        },
        members_of<Record>::rows);
}

template <class Row, class Record>
std::size_t row_heap_bytes(const Row& r, const Record& in) noexcept {
    const auto& value = in.*(r.ptr);
    if constexpr (is_optional<std::decay_t<decltype(value)>>::value)
        return value ? Row::form::heap_bytes(*value) : 0;
    else
        return Row::form::heap_bytes(value);
}

// Heap bytes the record holds besides its own size (J3's accounting).
template <class Record>
std::size_t members_heap_bytes(const Record& in) noexcept {
    static_assert(members_complete<Record>());
    return std::apply([&](const auto&... r) { return (std::size_t{0} + ... + row_heap_bytes(r, in)); },
                      members_of<Record>::rows);
}

// ---- for streaming readers (the list call's SAX decoder)

inline constexpr std::size_t longest_member_name = 63;  // a longer name is never a member

template <class Record, std::size_t I>
using row_at = std::tuple_element_t<I, std::decay_t<decltype(members_of<Record>::rows)>>;

template <class Record, std::size_t... I>
constexpr std::array<std::string_view, sizeof...(I)> json_names(std::index_sequence<I...>) noexcept {
    // A derived row has no JSON name, so a reader never finds it.
    return {{(std::get<I>(members_of<Record>::rows).need == presence::derived
                  ? std::string_view()
                  : std::get<I>(members_of<Record>::rows).name)...}};
}

// Row indexes sorted by name length, then where each length starts in them.
template <std::size_t N>
constexpr std::array<std::size_t, N> sort_by_length(const std::array<std::string_view, N>& names) noexcept {
    std::array<std::size_t, N> order{};
    std::size_t n = 0;
    for (std::size_t len = 1; len <= longest_member_name; ++len)
        for (std::size_t i = 0; i < N; ++i)
            if (names[i].size() == len) order[n++] = i;
    return order;
}
template <std::size_t N>
constexpr std::array<std::size_t, longest_member_name + 2> length_starts(
    const std::array<std::string_view, N>& names) noexcept {
    std::array<std::size_t, longest_member_name + 2> start{};
    std::size_t n = 0;
    for (std::size_t len = 1; len <= longest_member_name; ++len) {
        start[len] = n;
        for (std::size_t i = 0; i < N; ++i)
            if (names[i].size() == len) ++n;
    }
    start[longest_member_name + 1] = n;
    return start;
}

// Row I's operations on a record, for the tables of function pointers below.
template <class Record, std::size_t I>
std::optional<error> store_member(Record& out, const std::string& text) {
    using r = row_at<Record, I>;
    if constexpr (r::form::kind == form_kind::string)
        return store_text<typename r::form>(out.*(std::get<I>(members_of<Record>::rows).ptr), text);
    else
        return std::nullopt;
}
template <class Record, std::size_t I>
void reset_member(Record& out) {
    auto& value = out.*(std::get<I>(members_of<Record>::rows).ptr);
    using value_type = std::decay_t<decltype(value)>;
    if constexpr (is_optional<value_type>::value)
        value.reset();
    else if constexpr (std::is_same_v<value_type, std::vector<std::string>>)
        value.clear();
    // else required: reported as missing when the record ends
}
template <class Record, std::size_t I>
std::vector<std::string>* list_member(Record& out) {
    auto& value = out.*(std::get<I>(members_of<Record>::rows).ptr);
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::vector<std::string>>)
        return &value;
    else
        return nullptr;
}

// The table by row index, at run time: what a streaming reader needs once it
// knows a member's name. Every array has one entry per row.
template <class Record, class Seq = std::make_index_sequence<member_count<Record>>>
struct member_index;

template <class Record, std::size_t... I>
struct member_index<Record, std::index_sequence<I...>> {
    static_assert(members_complete<Record>());
    static constexpr std::size_t count = sizeof...(I);
    static_assert(count <= 64, "a presence mask holds 64 members");
    static constexpr std::size_t none = count;  // a name not in the table

    static constexpr std::array<std::string_view, count> names = json_names<Record>(std::index_sequence<I...>());
    static constexpr std::array<presence, count> needs = {{std::get<I>(members_of<Record>::rows).need...}};
    static constexpr std::array<form_kind, count> kinds = {{row_at<Record, I>::form::kind...}};
    static constexpr std::array<std::string_view, count> expected = {{row_at<Record, I>::form::expected...}};
    static constexpr std::array<bool, count> keeps_text = {{row_at<Record, I>::form::keeps_text...}};

    static constexpr bool required(std::size_t i) noexcept { return needs[i] == presence::required; }
    static constexpr std::uint64_t bit(std::size_t i) noexcept { return std::uint64_t{1} << i; }
    static constexpr std::uint64_t required_mask = ((needs[I] == presence::required ? bit(I) : 0) | ... | 0);

    // The row named k, or none: the names of k's length, the first byte, one comparison.
    static std::size_t find(std::string_view k) noexcept {
        if (k.empty() || k.size() > longest_member_name) return none;
        for (std::size_t at = starts[k.size()]; at < starts[k.size() + 1]; ++at) {
            const std::size_t i = order[at];
            if (names[i][0] == k[0] && std::memcmp(names[i].data(), k.data(), k.size()) == 0) return i;
        }
        return none;
    }

    // Stores text in row i (a string form); the error's path is left empty.
    static std::optional<error> store(Record& out, std::size_t i, const std::string& text) {
        return storers[i](out, text);
    }
    // Empties row i for a null: an optional is reset, a list cleared.
    static void reset(Record& out, std::size_t i) { resetters[i](out); }
    // Row i's list (kinds[i] must be form_kind::string_list).
    static std::vector<std::string>& list(Record& out, std::size_t i) { return *listers[i](out); }

private:
    static constexpr std::array<std::size_t, count> order = sort_by_length(names);
    static constexpr std::array<std::size_t, longest_member_name + 2> starts = length_starts(names);
    static constexpr std::array<std::optional<error> (*)(Record&, const std::string&), count> storers = {
        {&store_member<Record, I>...}};
    static constexpr std::array<void (*)(Record&), count> resetters = {{&reset_member<Record, I>...}};
    static constexpr std::array<std::vector<std::string>* (*)(Record&), count> listers = {{&list_member<Record, I>...}};
};

}  // namespace keyhook::detail
