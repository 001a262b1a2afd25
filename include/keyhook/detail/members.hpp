// keyhook: one member table per record type, the single description of a
// record from which its JSON reader, writer, equality and heap accounting are
// derived (one description per record). A record forgotten in part fails to compile.
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
//         static constexpr auto rows = detail::make_rows(
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
//     detail::visit_members(k, [](const auto& row, const auto& value) {});  // anything else
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
// Records whose JSON is more than flat text (the delivery state, notices,
// endpoint state, key policy, key set) use value forms (whole_form,
// integer_form, bool_form, named_enum_form, record_form, list_form),
// presence::omitted, conditional rows (.only_when), group(...), part(...),
// spread<Form>(...), tie<Form>(...) and the hooks closed, check and
// canonical; docs/design.md ("Records whose JSON is not flat text") says what
// each is for. visit_members, clear_optional_members and members_heap_bytes
// take plain rows only.
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
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/escape.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook::detail {

// ---- the table

// Whether a member must be in the JSON, may be left out (or null; written as
// null when empty), may be left out and is left out when empty (nullopt, an
// empty list, false), or is not read from JSON at all.
enum class presence : unsigned char { required, optional, derived, omitted };

// What a reader or a writer hands down to the forms that ask for it: a policy
// the reader applies (the webhook list's endpoint_policy) or the view a writer
// writes (reveal_secrets, for a store's own copy). A form asks by taking it as
// a last parameter: read(value, path, out, ctx), write(slot, in, ctx), or for
// a string form write(in, ctx); a form that does not ask never sees it.
// read_members, write_members and the nested forms (record_form, list_form,
// groups, parts) pass it down.
struct no_context {};

// The writer's view of a store: secrets in plaintext. Every other writer
// writes a secret as its JSON form does, masked (M3).
struct reveal_secrets {};

// One row: the JSON spelling (a string literal, so name.data() is
// NUL-terminated), the pointer to member, whether it is required; Form is how
// the value is written in JSON.
template <class Form, class Record, class T>
struct conditional_row;

template <class Form, class Record, class T>
struct member_row {
    using form = Form;
    using record = Record;
    using type = T;
    static constexpr std::size_t members = 1;  // of the aggregate, for the completeness check
    std::string_view name;
    T Record::*ptr;
    presence need;

    // The same row, read and written only while applies(record) holds (the
    // rows before it are read already); otherwise the member must be absent
    // (else `reason`, errc::invalid_value) and is not written or compared.
    constexpr conditional_row<Form, Record, T> only_when(bool (*applies)(const Record&) noexcept,
                                                         std::string_view reason) const noexcept {
        return {{name, ptr, need}, applies, reason};
    }
};

template <class Form, class Record, class T>
struct conditional_row : member_row<Form, Record, T> {
    bool (*applies)(const Record&) noexcept;
    std::string_view reason;
};

template <class Form, class Record, class T>
constexpr member_row<Form, Record, T> row(std::string_view name, T Record::*ptr, presence need) noexcept {
    return {name, ptr, need};
}

// A table's rows, held flat: one base class per row, found by its index.
// std::tuple builds the same out of a chain of bases, each with constrained
// constructors, and a table of 14 rows made with std::make_tuple costs a
// translation unit about fifteen times what this list costs (docs/performance.md,
// "Compile time"). A table may still be a std::tuple (std::make_tuple); the
// machinery reads both through row_count and get_row.
template <std::size_t I, class Row>
struct row_slot {
    Row row;
};
template <class Seq, class... Row>
struct row_slots;
template <std::size_t... I, class... Row>
struct row_slots<std::index_sequence<I...>, Row...> : row_slot<I, Row>... {};

template <class... Row>
struct row_list : row_slots<std::index_sequence_for<Row...>, Row...> {};

template <class... Row>
constexpr row_list<Row...> make_rows(Row... rows) noexcept {
    return {{{rows}...}};
}

template <class Rows>
struct row_count;
template <class... Row>
struct row_count<row_list<Row...>> : std::integral_constant<std::size_t, sizeof...(Row)> {};
template <class... Row>
struct row_count<std::tuple<Row...>> : std::integral_constant<std::size_t, sizeof...(Row)> {};

// Row I: its slot is a base of the list, so the row's type is deduced from it.
template <std::size_t I, class Row>
constexpr const Row& slot_row(const row_slot<I, Row>& slot) noexcept {
    return slot.row;
}
template <std::size_t I, class... Row>
constexpr const auto& get_row(const row_list<Row...>& rows) noexcept {
    return slot_row<I>(rows);
}
template <std::size_t I, class... Row>
constexpr const auto& get_row(const std::tuple<Row...>& rows) noexcept {
    return std::get<I>(rows);
}
template <std::size_t I, class Rows>
using row_type = std::decay_t<decltype(get_row<I>(std::declval<const Rows&>()))>;

}  // namespace keyhook::detail

namespace keyhook {
// The public name of a record's table (keyhook/members.hpp): a host, or one
// of keyhook's programs, specializes this one for its own records.
template <class Record>
struct members_of;
}  // namespace keyhook

namespace keyhook::detail {

// Specialized by each of keyhook's records: `static constexpr auto rows =
// make_rows(row<...>(...), ...);`. A record without a specialization
// here uses its keyhook::members_of.
template <class Record>
struct members_of : keyhook::members_of<Record> {};

template <class Record>
inline constexpr std::size_t member_count = row_count<std::decay_t<decltype(members_of<Record>::rows)>>::value;

// std::apply without std::invoke: f(get_row<I>(t)...) for a list of rows
// or of pointers to members. The same calls, fewer templates instantiated for
// each record (a header-only translation unit compiles every record's equality).
template <class F, class Tuple, std::size_t... I>
constexpr decltype(auto) apply_at(F& f, const Tuple& t, std::index_sequence<I...>) {
    return f(get_row<I>(t)...);
}
template <class F, class Tuple>
constexpr decltype(auto) apply_rows(F&& f, const Tuple& t) {
    return apply_at(f, t, std::make_index_sequence<row_count<Tuple>::value>{});
}

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

// The number of members of aggregate T (up to 64): the largest N for which
// T{a1, ..., aN} compiles. Tests and diagnostics use it; the completeness
// check asks has_members instead.
template <class T, std::size_t N = 0>
constexpr std::size_t aggregate_member_count() noexcept {
    if constexpr (N < 64 && initializable_with<T, std::make_index_sequence<N + 1>>::value)
        return aggregate_member_count<T, N + 1>();
    else
        return N;
}

// Whether aggregate T has exactly N members: T{a1, ..., aN} compiles and
// T{a1, ..., aN+1} does not. Two trial initializations instead of the N + 1 of
// counting, for every record a translation unit checks.
template <class T, std::size_t N>
constexpr bool has_members() noexcept {
    return initializable_with<T, std::make_index_sequence<N>>::value &&
           !initializable_with<T, std::make_index_sequence<N + 1>>::value;
}

// The aggregate members a list of rows covers (a group or a tie row covers several).
template <class Rows>
struct rows_cover;
template <class... Row>
struct rows_cover<row_list<Row...>> : std::integral_constant<std::size_t, (std::size_t{0} + ... + Row::members)> {};
template <class... Row>
struct rows_cover<std::tuple<Row...>> : std::integral_constant<std::size_t, (std::size_t{0} + ... + Row::members)> {};

template <class Record>
constexpr bool members_complete() noexcept {
    static_assert(std::is_aggregate_v<Record>, "a record with a member table must be an aggregate");
    static_assert(has_members<Record, rows_cover<std::decay_t<decltype(members_of<Record>::rows)>>::value>(),
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
// A value form (kind value) reads and writes a JSON value itself (see
// "nested and numeric forms" below).
enum class form_kind : unsigned char { string, string_list, none, value };

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

// A form's keeps_text, false for a form that does not say (the limit on kept text then does not apply).
template <class Form, class = void>
struct form_keeps_text : std::false_type {};
template <class Form>
struct form_keeps_text<Form, std::void_t<decltype(Form::keeps_text)>> : std::bool_constant<Form::keeps_text> {};

// ---- nested and numeric forms (value forms)
//
// A value form reads a JSON value into a member and writes it back:
//     static constexpr form_kind kind = form_kind::value;
//     static constexpr std::string_view expected = "...";  // for wrong_type
//     template <class Json, class T> static std::optional<error> read(const Json& v, const std::string& path, T& out);
//     template <class Json, class T> static void write(Json& slot, const T& in);
// The errors it returns carry `path` already.

// A number member, or a std::chrono::duration counted in its unit.
template <class T, class N>
void set_count(T& out, N value) noexcept {
    if constexpr (std::is_arithmetic_v<T>)
        out = static_cast<T>(value);
    else
        out = T{static_cast<typename T::rep>(value)};
}
template <class N, class T>
N count_of(const T& in) noexcept {
    if constexpr (std::is_arithmetic_v<T>)
        return static_cast<N>(in);
    else
        return static_cast<N>(in.count());
}

// A whole number in [Lo, Hi] (counts): a negative number or a fraction is
// invalid_value, a whole number outside the bounds out_of_range. T may be a
// std::chrono::duration, read and written as its count.
template <class T, std::uint64_t Lo, std::uint64_t Hi>
struct whole_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "a whole number";
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, T& out) {
        if (!v.is_number()) return wrong_type(path, expected, v);
        // A DOM built in memory holds signed integers; parsed text holds unsigned ones.
        const bool whole = v.is_number_unsigned() || (v.is_number_integer() && v.template get<std::int64_t>() >= 0);
        const auto value = whole ? v.template get<std::uint64_t>() : 0;
        if (!whole || value < Lo || value > Hi)
            return error{whole ? errc::out_of_range : errc::invalid_value, path,
                         "expected a whole number from " + std::to_string(Lo) + " to " + std::to_string(Hi) + ", got " +
                             v.dump()};
        set_count(out, value);
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const T& in) {
        slot = count_of<std::uint64_t>(in);
    }
};

// An integer in [Lo, Hi]: anything else, a fraction or 1e400 included, is
// out_of_range (J2). T may be a std::chrono::duration, as in whole_form.
template <class T, std::int64_t Lo, std::int64_t Hi>
struct integer_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "an integer";
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, T& out) {
        if (!v.is_number()) return wrong_type(path, expected, v);
        const auto refuse = [&] {
            return error{errc::out_of_range, path,
                         "must be an integer from " + std::to_string(Lo) + " to " + std::to_string(Hi)};
        };
        std::int64_t value = 0;
        if (v.is_number_unsigned()) {
            const auto u = v.template get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(Hi)) return refuse();
            value = static_cast<std::int64_t>(u);
        } else if (v.is_number_integer()) {
            value = v.template get<std::int64_t>();
        } else {
            return refuse();
        }
        if (value < Lo || value > Hi) return refuse();
        set_count(out, value);
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const T& in) {
        slot = count_of<std::int64_t>(in);
    }
};

struct bool_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "true or false";
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, bool& out) {
        if (!v.is_boolean()) return wrong_type(path, expected, v);
        out = v.template get<bool>();
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, bool in) {
        slot = in;
    }
};

// An enumeration spelt by its enum_names table; an unknown spelling is
// refused with the list of known ones.
template <class E>
struct named_enum_form {
    static constexpr form_kind kind = form_kind::string;
    static constexpr bool keeps_text = false;
    static constexpr std::string_view expected = "a string";
    static std::optional<error> from_text(const std::string& text, E& out) {
        const auto& names = enum_names<E>::values;
        const std::size_t n = std::size(names);
        for (std::size_t i = 0; i < n; ++i)
            if (names[i] == text) {
                out = static_cast<E>(static_cast<long long>(i) + enum_first<E>::value);
                return std::nullopt;
            }
        std::string list;
        for (std::size_t i = 0; i < n; ++i)
            list += (i == 0 ? "\"" : i + 1 == n ? " or \"" : ", \"") + std::string(names[i]) + "\"";
        return error{errc::invalid_value, {}, "expected " + list + ", got " + quote_input(text)};
    }
    static std::string write(E v) { return std::string(enum_name(v)); }
    static std::size_t heap_bytes(E) noexcept { return 0; }
};

// A nested record: a JSON object read and written by Record's own table.
template <class Record>
struct record_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "an object";
    template <class Json, class Ctx = no_context>
    static std::optional<error> read(const Json& v, const std::string& path, Record& out, const Ctx& ctx = {});
    template <class Json, class Ctx = no_context>
    static void write(Json& slot, const Record& in, const Ctx& ctx = {});
    static bool equal(const Record& a, const Record& b);
};

// The "expected" of an array of Elem: Elem::list_expected when it says, else "an array".
template <class Elem, class = void>
struct list_expected {
    static constexpr std::string_view value = "an array";
};
template <class Elem>
struct list_expected<Elem, std::void_t<decltype(Elem::list_expected)>> {
    static constexpr std::string_view value = Elem::list_expected;
};

// An array (std::vector) of values of form Elem, at most Max of them
// (refused before any is read: errc::limit_exceeded).
template <class Elem, std::size_t Max = ~std::size_t{0}>
struct list_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = list_expected<Elem>::value;
    template <class Json, class T, class Ctx = no_context>
    static std::optional<error> read(const Json& v, const std::string& path, std::vector<T>& out, const Ctx& ctx = {});
    template <class Json, class T, class Ctx = no_context>
    static void write(Json& slot, const std::vector<T>& in, const Ctx& ctx = {});
    template <class T>
    static bool equal(const std::vector<T>& a, const std::vector<T>& b);
};

// ---- contexts (no_context and reveal_secrets are declared with the table)

template <class Form, class Json, class T, class Ctx, class = void>
struct reads_with_context : std::false_type {};
template <class Form, class Json, class T, class Ctx>
struct reads_with_context<
    Form, Json, T, Ctx,
    std::void_t<decltype(Form::read(std::declval<const Json&>(), std::declval<const std::string&>(), std::declval<T&>(),
                                    std::declval<const Ctx&>()))>> : std::true_type {};
template <class Form, class Json, class T, class Ctx, class = void>
struct writes_with_context : std::false_type {};
template <class Form, class Json, class T, class Ctx>
struct writes_with_context<
    Form, Json, T, Ctx,
    std::void_t<decltype(Form::write(std::declval<Json&>(), std::declval<const T&>(), std::declval<const Ctx&>()))>>
    : std::true_type {};
template <class Form, class T, class Ctx, class = void>
struct writes_text_with_context : std::false_type {};
template <class Form, class T, class Ctx>
struct writes_text_with_context<
    Form, T, Ctx, std::void_t<decltype(Form::write(std::declval<const T&>(), std::declval<const Ctx&>()))>>
    : std::true_type {};

template <class Form, class Json, class T, class Ctx>
std::optional<error> read_form(const Json& v, const std::string& path, T& out, const Ctx& ctx) {
    if constexpr (reads_with_context<Form, Json, T, Ctx>::value)
        return Form::read(v, path, out, ctx);
    else
        return Form::read(v, path, out);
}
template <class Form, class Json, class T, class Ctx>
void write_form(Json& slot, const T& in, const Ctx& ctx) {
    if constexpr (writes_with_context<Form, Json, T, Ctx>::value)
        Form::write(slot, in, ctx);
    else
        Form::write(slot, in);
}
template <class Form, class T, class Ctx>
decltype(auto) write_text(const T& in, const Ctx& ctx) {
    if constexpr (writes_text_with_context<Form, T, Ctx>::value)
        return Form::write(in, ctx);
    else
        return Form::write(in);
}

// A value form whose member may not be null: a null is handed to Form, which
// refuses it by its type ("expected an object, got null"), instead of
// counting as missing (L2). For readers whose wording predates the tables.
template <class Form>
struct null_refused : Form {
    static constexpr bool reads_null = true;
};
template <class Form, class = void>
struct form_reads_null : std::false_type {};
template <class Form>
struct form_reads_null<Form, std::void_t<decltype(Form::reads_null)>> : std::bool_constant<Form::reads_null> {};

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

// Whether Form reads into T itself (an optional of a type with no default value).
template <class Form, class Json, class T, class = void>
struct reads_itself : std::false_type {};
template <class Form, class Json, class T>
struct reads_itself<Form, Json, T,
                    std::void_t<decltype(Form::read(std::declval<const Json&>(), std::declval<const std::string&>(),
                                                    std::declval<T&>()))>> : std::true_type {};

// A JSON value of any form into a (possibly optional) member; the error's path is `path`.
template <class Form, class Json, class T, class Ctx = no_context>
std::optional<error> read_value(const Json& m, const std::string& path, T& value, const Ctx& ctx = {}) {
    if constexpr (Form::kind == form_kind::string_list) {
        return read_string_list(m, path, value);
    } else if constexpr (Form::kind == form_kind::string) {
        if (!m.is_string()) return wrong_type(path, Form::expected, m);
        auto e = store_text<Form>(value, m.template get_ref<const std::string&>());
        if (e) e->path = path;
        return e;
    } else if constexpr (is_optional<T>::value && !reads_itself<Form, Json, T>::value) {
        if (!value) value.emplace();
        return read_form<Form>(m, path, *value, ctx);
    } else {
        return read_form<Form>(m, path, value, ctx);
    }
}

template <class Form, class Json, class T, class Ctx = no_context>
void write_value(Json& slot, const T& value, const Ctx& ctx = {}) {
    if constexpr (is_optional<T>::value) {
        if (value)
            write_value<Form>(slot, *value, ctx);
        else
            slot = nullptr;
    } else if constexpr (Form::kind == form_kind::string_list) {
        slot = value;
    } else if constexpr (Form::kind == form_kind::string) {
        slot = write_text<Form>(value, ctx);
    } else {
        write_form<Form>(slot, value, ctx);
    }
}

// What presence::omitted leaves out: nullopt, an empty list or string, false.
template <class T, class = void>
struct has_empty : std::false_type {};
template <class T>
struct has_empty<T, std::void_t<decltype(std::declval<const T&>().empty())>> : std::true_type {};
template <class T>
bool is_empty_value(const T& v) noexcept {
    if constexpr (is_optional<T>::value)
        return !v.has_value();
    else if constexpr (std::is_same_v<T, bool>)
        return !v;
    else if constexpr (has_empty<T>::value)
        return v.empty();
    else
        return false;
}

template <class Row, class = void>
struct is_conditional : std::false_type {};
template <class Row>
struct is_conditional<Row, std::void_t<decltype(std::declval<const Row&>().applies)>> : std::true_type {};

// Hooks a record's members_of may have: `closed` (refuse members not in the
// table), check(record, path) (what no single member says, run after them),
// canonical(record) (the form written and compared).
template <class Record, class = void>
struct is_closed : std::false_type {};
template <class Record>
struct is_closed<Record, std::void_t<decltype(members_of<Record>::closed)>>
    : std::bool_constant<members_of<Record>::closed> {};
template <class Record, class = void>
struct has_check : std::false_type {};
template <class Record>
struct has_check<Record, std::void_t<decltype(members_of<Record>::check(
                             std::declval<const Record&>(), std::declval<const std::string&>()))>> : std::true_type {};
template <class Record, class = void>
struct has_canonical : std::false_type {};
template <class Record>
struct has_canonical<Record, std::void_t<decltype(members_of<Record>::canonical(std::declval<const Record&>()))>>
    : std::true_type {};

// One member of a parsed JSON object (null counts as missing, L2).
template <class Row, class Json, class Record, class Ctx>
std::optional<error> read_row(const Row& r, const Json& j, const std::string& path, Record& out, const Ctx& ctx) {
    using form = typename Row::form;
    if constexpr (form::kind == form_kind::none)
        return std::nullopt;
    else {
        const auto* m = json_member(j, r.name.data(), !form_reads_null<form>::value);
        if constexpr (is_conditional<Row>::value) {
            if (!r.applies(out)) {
                if (m) return error{errc::invalid_value, path_member(path, r.name), std::string(r.reason)};
                return std::nullopt;
            }
        }
        if (!m) {
            if (r.need == presence::required) return missing_member_error(path_member(path, r.name));
            return std::nullopt;
        }
        return read_value<form>(*m, path_member(path, r.name), out.*(r.ptr), ctx);
    }
}

template <class Row, class Json, class Record, class Ctx>
void write_row(const Row& r, Json& j, const Record& in, const Ctx& ctx) {
    using form = typename Row::form;
    const auto& value = in.*(r.ptr);
    if constexpr (form::kind == form_kind::none) {
        (void)value;
        return;
    } else {
        if constexpr (is_conditional<Row>::value)
            if (!r.applies(in)) return;
        if (r.need == presence::omitted && is_empty_value(value)) return;
        write_value<form>(j[std::string(r.name)], value, ctx);
    }
}

// Whether Form compares values itself (a nested record by its table, a list
// of them element by element), else operator==.
template <class Form, class T, class = void>
struct compares_itself : std::false_type {};
template <class Form, class T>
struct compares_itself<Form, T, std::void_t<decltype(Form::equal(std::declval<const T&>(), std::declval<const T&>()))>>
    : std::true_type {};

template <class Form, class T>
bool values_equal(const T& a, const T& b) {
    if constexpr (is_optional<T>::value && !compares_itself<Form, T>::value)
        return a.has_value() == b.has_value() && (!a || values_equal<Form>(*a, *b));
    else if constexpr (compares_itself<Form, T>::value)
        return Form::equal(a, b);
    else
        return a == b;
}

template <class Row, class Record>
bool row_equal(const Row& r, const Record& a, const Record& b) {
    if constexpr (is_conditional<Row>::value) {
        if (r.applies(a) != r.applies(b)) return false;
        if (!r.applies(a)) return true;
    }
    return values_equal<typename Row::form>(a.*(r.ptr), b.*(r.ptr));
}

// Whether `k` is a JSON name the row reads in the object it is read from;
// append_names lists them (for the message of a closed record).
template <class Row>
bool row_has_name(const Row& r, std::string_view k) noexcept {
    return Row::form::kind != form_kind::none && r.name == k;
}
template <class Row>
void append_names(const Row& r, std::string& list) {
    if (Row::form::kind == form_kind::none) return;
    list += (list.empty() ? "\"" : ", \"") + std::string(r.name) + "\"";
}

// Rows of the same record whose members sit in a JSON object of their own
// (`name`), which the struct does not have: {"data": {"endpointId": ...}}.
// With a flag (a bool member), the object is optional and the flag says
// whether it is there; without, it is required and always written.
template <class Record, class Rows, bool Flagged>
struct group_row {
    static constexpr std::size_t members = rows_cover<Rows>::value + (Flagged ? 1 : 0);
    std::string_view name;
    bool Record::*flag;  // nullptr unless Flagged
    Rows rows;
};

template <class Record, class... Row>
constexpr group_row<Record, row_list<Row...>, false> group(std::string_view name, Row... rows) noexcept {
    return {name, nullptr, make_rows(rows...)};
}
template <class Record, class... Row>
constexpr group_row<Record, row_list<Row...>, true> group(std::string_view name, bool Record::*flag,
                                                          Row... rows) noexcept {
    return {name, flag, make_rows(rows...)};
}

// A member that is a struct of its own whose members sit in the record's JSON
// object, by the given rows (their names depend on the record: a rate_state's
// `tat` is "rateTat" in one record, "throttleTat" in another). The rows must
// cover every member of that struct.
template <class Record, class T, class Rows>
struct part_row {
    static constexpr std::size_t members = 1;
    T Record::*ptr;
    Rows rows;
};

template <class Record, class T, class... Row>
constexpr part_row<Record, T, row_list<Row...>> part(T Record::*ptr, Row... rows) noexcept {
    static_assert(has_members<T, rows_cover<row_list<Row...>>::value>(),
                  "every member of the record needs exactly one row in its detail::members_of table");
    return {ptr, make_rows(rows...)};
}
template <class Record, class T, class... Row>
constexpr part_row<Record, T, row_list<Row...>> part(T Record::*ptr, const row_list<Row...>& rows) noexcept {
    static_assert(has_members<T, rows_cover<row_list<Row...>>::value>(),
                  "every member of the record needs exactly one row in its detail::members_of table");
    return {ptr, rows};
}
template <class Record, class T, class... Row>
constexpr part_row<Record, T, std::tuple<Row...>> part(T Record::*ptr, const std::tuple<Row...>& rows) noexcept {
    static_assert(has_members<T, rows_cover<std::tuple<Row...>>::value>(),
                  "every member of the record needs exactly one row in its detail::members_of table");
    return {ptr, rows};
}

// A member read and written by Form from the record's own JSON object, under
// the names Form::names (for a value the JSON spreads over several members,
// such as an attempt's "outcome" and "status"). Form provides
// read_in(object, path, T&) and write_in(object, const T&), each with the
// context as a last parameter when it asks for it (as the other forms do).
template <class Form, class Record, class T>
struct inline_row {
    static constexpr std::size_t members = 1;
    T Record::*ptr;
};
template <class Form, class Record, class T>
constexpr inline_row<Form, Record, T> spread(T Record::*ptr) noexcept {
    return {ptr};
}

// One JSON member that holds several members of the struct (a stored key
// that is either a whsec_ secret or a whsk_ key). Form provides
// read(value, path, T&...), write(slot, const T&...) and, for
// presence::omitted, empty(const T&...).
template <class Form, class Record, class... T>
struct tie_row {
    static constexpr std::size_t members = sizeof...(T);
    std::string_view name;
    presence need;
    row_list<T Record::*...> ptrs;
};
template <class Form, class Record, class... T>
constexpr tie_row<Form, Record, T...> tie(std::string_view name, presence need, T Record::*... ptrs) noexcept {
    return {name, need, make_rows(ptrs...)};
}

template <class Json, class Record, class Rows, class Ctx>
std::optional<error> read_rows(const Rows& rows, const Json& j, const std::string& path, Record& out, const Ctx& ctx) {
    std::optional<error> e;
    apply_rows([&](const auto&... r) { (void)((e = read_row(r, j, path, out, ctx), !e) && ...); }, rows);
    return e;
}
template <class Json, class Record, class Rows, class Ctx>
void write_rows(const Rows& rows, Json& j, const Record& in, const Ctx& ctx) {
    apply_rows([&](const auto&... r) { (write_row(r, j, in, ctx), ...); }, rows);
}
template <class Record, class Rows>
bool rows_equal(const Rows& rows, const Record& a, const Record& b) {
    return apply_rows([&](const auto&... r) { return (row_equal(r, a, b) && ...); }, rows);
}
template <class Rows>
bool rows_have_name(const Rows& rows, std::string_view k) noexcept {
    return apply_rows([&](const auto&... r) { return (row_has_name(r, k) || ...); }, rows);
}
template <class Rows>
void append_rows_names(const Rows& rows, std::string& list) {
    apply_rows([&](const auto&... r) { (append_names(r, list), ...); }, rows);
}

// A closed record refuses a member its rows do not read.
template <class Json, class Rows>
std::optional<error> refuse_unknown(const Json& j, const std::string& path, const Rows& rows) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (rows_have_name(rows, it.key())) continue;
        std::string list;
        append_rows_names(rows, list);
        return error{errc::invalid_value, path_member(path, it.key()),
                     "is not a member keyhook knows here; expected " + list};
    }
    return std::nullopt;
}

template <class Record, class Rows, bool Flagged, class Json, class Ctx>
std::optional<error> read_row(const group_row<Record, Rows, Flagged>& r, const Json& j, const std::string& path,
                              Record& out, const Ctx& ctx) {
    const auto* m = json_member(j, r.name.data());
    const std::string sub = path_member(path, r.name);
    if constexpr (Flagged) out.*(r.flag) = m != nullptr;
    if (!m) return Flagged ? std::nullopt : std::optional<error>(missing_member_error(sub));
    if (!m->is_object()) return wrong_type(sub, "an object", *m);
    if constexpr (is_closed<Record>::value)
        if (auto e = refuse_unknown(*m, sub, r.rows)) return e;
    return read_rows(r.rows, *m, sub, out, ctx);
}
template <class Record, class Rows, bool Flagged, class Json, class Ctx>
void write_row(const group_row<Record, Rows, Flagged>& r, Json& j, const Record& in, const Ctx& ctx) {
    if constexpr (Flagged)
        if (!(in.*(r.flag))) return;
    auto& g = j[std::string(r.name)];
    g = Json::object();
    write_rows(r.rows, g, in, ctx);
}
template <class Record, class Rows, bool Flagged>
bool row_equal(const group_row<Record, Rows, Flagged>& r, const Record& a, const Record& b) {
    if constexpr (Flagged)
        if (a.*(r.flag) != b.*(r.flag)) return false;
    return rows_equal(r.rows, a, b);
}
template <class Record, class Rows, bool Flagged>
bool row_has_name(const group_row<Record, Rows, Flagged>& r, std::string_view k) noexcept {
    return r.name == k;
}
template <class Record, class Rows, bool Flagged>
void append_names(const group_row<Record, Rows, Flagged>& r, std::string& list) {
    list += (list.empty() ? "\"" : ", \"") + std::string(r.name) + "\"";
}

template <class Record, class T, class Rows, class Json, class Ctx>
std::optional<error> read_row(const part_row<Record, T, Rows>& r, const Json& j, const std::string& path, Record& out,
                              const Ctx& ctx) {
    return read_rows(r.rows, j, path, out.*(r.ptr), ctx);
}
template <class Record, class T, class Rows, class Json, class Ctx>
void write_row(const part_row<Record, T, Rows>& r, Json& j, const Record& in, const Ctx& ctx) {
    write_rows(r.rows, j, in.*(r.ptr), ctx);
}
template <class Record, class T, class Rows>
bool row_equal(const part_row<Record, T, Rows>& r, const Record& a, const Record& b) {
    return rows_equal(r.rows, a.*(r.ptr), b.*(r.ptr));
}
template <class Record, class T, class Rows>
bool row_has_name(const part_row<Record, T, Rows>& r, std::string_view k) noexcept {
    return rows_have_name(r.rows, k);
}
template <class Record, class T, class Rows>
void append_names(const part_row<Record, T, Rows>& r, std::string& list) {
    append_rows_names(r.rows, list);
}

template <class Form, class Json, class T, class Ctx, class = void>
struct reads_in_with_context : std::false_type {};
template <class Form, class Json, class T, class Ctx>
struct reads_in_with_context<
    Form, Json, T, Ctx,
    std::void_t<decltype(Form::read_in(std::declval<const Json&>(), std::declval<const std::string&>(),
                                       std::declval<T&>(), std::declval<const Ctx&>()))>> : std::true_type {};
template <class Form, class Json, class T, class Ctx, class = void>
struct writes_in_with_context : std::false_type {};
template <class Form, class Json, class T, class Ctx>
struct writes_in_with_context<
    Form, Json, T, Ctx,
    std::void_t<decltype(Form::write_in(std::declval<Json&>(), std::declval<const T&>(), std::declval<const Ctx&>()))>>
    : std::true_type {};

template <class Form, class Record, class T, class Json, class Ctx>
std::optional<error> read_row(const inline_row<Form, Record, T>& r, const Json& j, const std::string& path, Record& out,
                              const Ctx& ctx) {
    if constexpr (reads_in_with_context<Form, Json, T, Ctx>::value)
        return Form::read_in(j, path, out.*(r.ptr), ctx);
    else
        return Form::read_in(j, path, out.*(r.ptr));
}
template <class Form, class Record, class T, class Json, class Ctx>
void write_row(const inline_row<Form, Record, T>& r, Json& j, const Record& in, const Ctx& ctx) {
    if constexpr (writes_in_with_context<Form, Json, T, Ctx>::value)
        Form::write_in(j, in.*(r.ptr), ctx);
    else
        Form::write_in(j, in.*(r.ptr));
}
template <class Form, class Record, class T>
bool row_equal(const inline_row<Form, Record, T>& r, const Record& a, const Record& b) {
    return a.*(r.ptr) == b.*(r.ptr);
}
template <class Form, class Record, class T>
bool row_has_name(const inline_row<Form, Record, T>&, std::string_view k) noexcept {
    for (const auto name : Form::names)
        if (name == k) return true;
    return false;
}
template <class Form, class Record, class T>
void append_names(const inline_row<Form, Record, T>&, std::string& list) {
    for (const auto name : Form::names) list += (list.empty() ? "\"" : ", \"") + std::string(name) + "\"";
}

template <class Form, class Void, class... T>
struct tie_can_be_empty_impl : std::false_type {};
template <class Form, class... T>
struct tie_can_be_empty_impl<Form, std::void_t<decltype(Form::empty(std::declval<const T&>()...))>, T...>
    : std::true_type {};
template <class Form, class... T>
using tie_can_be_empty = tie_can_be_empty_impl<Form, void, T...>;

template <class Form, class Record, class... T, class Json, class Ctx>
std::optional<error> read_row(const tie_row<Form, Record, T...>& r, const Json& j, const std::string& path, Record& out,
                              const Ctx&) {
    const auto* m = json_member(j, r.name.data());
    if (!m)
        return r.need == presence::required ? std::optional<error>(missing_member_error(path_member(path, r.name)))
                                            : std::nullopt;
    return apply_rows([&](auto... p) { return Form::read(*m, path_member(path, r.name), (out.*p)...); }, r.ptrs);
}
template <class Form, class Record, class... T, class Json, class Ctx>
void write_row(const tie_row<Form, Record, T...>& r, Json& j, const Record& in, const Ctx&) {
    apply_rows(
        [&](auto... p) {
            if constexpr (tie_can_be_empty<Form, T...>::value)
                if (r.need == presence::omitted && Form::empty((in.*p)...)) return;
            Form::write(j[std::string(r.name)], (in.*p)...);
        },
        r.ptrs);
}
template <class Form, class Record, class... T>
bool row_equal(const tie_row<Form, Record, T...>& r, const Record& a, const Record& b) {
    return apply_rows([&](auto... p) { return ((a.*p == b.*p) && ...); }, r.ptrs);
}
template <class Form, class Record, class... T>
bool row_has_name(const tie_row<Form, Record, T...>& r, std::string_view k) noexcept {
    return r.name == k;
}
template <class Form, class Record, class... T>
void append_names(const tie_row<Form, Record, T...>& r, std::string& list) {
    list += (list.empty() ? "\"" : ", \"") + std::string(r.name) + "\"";
}

// Reads every member of `out` from object j, in table order; the first fault
// is returned with its path under `path`. A closed record first refuses
// members it does not know; its check runs last.
template <class Json, class Record, class Ctx = no_context>
std::optional<error> read_members(const Json& j, const std::string& path, Record& out, const Ctx& ctx = {}) {
    static_assert(members_complete<Record>());
    if (!j.is_object()) return wrong_type(path, "an object", j);
    if constexpr (is_closed<Record>::value)
        if (auto e = refuse_unknown(j, path, members_of<Record>::rows)) return e;
    auto e = read_rows(members_of<Record>::rows, j, path, out, ctx);
    if constexpr (has_check<Record>::value)
        if (!e) e = members_of<Record>::check(out, path);
    return e;
}

// Writes every member in table order; an empty optional as null (left out
// under presence::omitted).
template <class Json, class Record, class Ctx = no_context>
void write_members(Json& j, const Record& in, const Ctx& ctx = {}) {
    static_assert(members_complete<Record>());
    j = Json::object();
    if constexpr (has_canonical<Record>::value)
        write_rows(members_of<Record>::rows, j, members_of<Record>::canonical(in), ctx);
    else
        write_rows(members_of<Record>::rows, j, in, ctx);
}

template <class Record>
bool members_equal(const Record& a, const Record& b) {
    static_assert(members_complete<Record>());
    if constexpr (has_canonical<Record>::value)
        return rows_equal(members_of<Record>::rows, members_of<Record>::canonical(a), members_of<Record>::canonical(b));
    else
        return rows_equal(members_of<Record>::rows, a, b);
}

template <class Record>
template <class Json, class Ctx>
std::optional<error> record_form<Record>::read(const Json& v, const std::string& path, Record& out, const Ctx& ctx) {
    return read_members(v, path, out, ctx);
}
template <class Record>
template <class Json, class Ctx>
void record_form<Record>::write(Json& slot, const Record& in, const Ctx& ctx) {
    write_members(slot, in, ctx);
}
template <class Record>
bool record_form<Record>::equal(const Record& a, const Record& b) {
    return members_equal(a, b);
}

template <class Elem, std::size_t Max>
template <class Json, class T, class Ctx>
std::optional<error> list_form<Elem, Max>::read(const Json& v, const std::string& path, std::vector<T>& out,
                                                const Ctx& ctx) {
    if (!v.is_array()) return wrong_type(path, expected, v);
    if (v.size() > Max)
        return error{errc::limit_exceeded, path,
                     std::to_string(v.size()) + " entries; at most " + std::to_string(Max) + " are kept"};
    out.clear();
    out.reserve(v.size());  // J3: the DOM already holds one value per entry
    for (std::size_t i = 0; i < v.size(); ++i) {
        T item{};
        if (auto e = read_value<Elem>(v[i], path_index(path, i), item, ctx)) return e;
        out.push_back(std::move(item));
    }
    return std::nullopt;
}
template <class Elem, std::size_t Max>
template <class T>
bool list_form<Elem, Max>::equal(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!values_equal<Elem>(a[i], b[i])) return false;
    return true;
}
template <class Elem, std::size_t Max>
template <class Json, class T, class Ctx>
void list_form<Elem, Max>::write(Json& slot, const std::vector<T>& in, const Ctx& ctx) {
    slot = Json::array();
    for (const auto& item : in) {
        Json one;
        write_value<Elem>(one, item, ctx);
        slot.push_back(std::move(one));
    }
}

// Calls f(row, value) for each member, in table order (plain rows only).
template <class Record, class F>
void visit_members(const Record& in, F&& f) {
    static_assert(members_complete<Record>());
    apply_rows([&](const auto&... r) { (f(r, in.*(r.ptr)), ...); }, members_of<Record>::rows);
}

// Empties every optional member (and every list): the least a record may carry.
template <class Record>
void clear_optional_members(Record& r) {
    static_assert(members_complete<Record>());
    apply_rows(
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

// Heap bytes the record holds besides its own size (J3's accounting; plain rows only).
template <class Record>
std::size_t members_heap_bytes(const Record& in) noexcept {
    static_assert(members_complete<Record>());
    return apply_rows([&](const auto&... r) { return (std::size_t{0} + ... + row_heap_bytes(r, in)); },
                      members_of<Record>::rows);
}

// ---- for streaming readers (the list call's SAX decoder)

inline constexpr std::size_t longest_member_name = 63;  // a longer name is never a member

template <class Record, std::size_t I>
using row_at = row_type<I, std::decay_t<decltype(members_of<Record>::rows)>>;

template <class Record, std::size_t... I>
constexpr std::array<std::string_view, sizeof...(I)> json_names(std::index_sequence<I...>) noexcept {
    // A derived row has no JSON name, so a reader never finds it.
    return {{(get_row<I>(members_of<Record>::rows).need == presence::derived
                  ? std::string_view()
                  : get_row<I>(members_of<Record>::rows).name)...}};
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
        return store_text<typename r::form>(out.*(get_row<I>(members_of<Record>::rows).ptr), text);
    else
        return std::nullopt;
}
template <class Record, std::size_t I>
void reset_member(Record& out) {
    auto& value = out.*(get_row<I>(members_of<Record>::rows).ptr);
    using value_type = std::decay_t<decltype(value)>;
    if constexpr (is_optional<value_type>::value)
        value.reset();
    else if constexpr (std::is_same_v<value_type, std::vector<std::string>>)
        value.clear();
    // else required: reported as missing when the record ends
}
template <class Record, std::size_t I>
std::vector<std::string>* list_member(Record& out) {
    auto& value = out.*(get_row<I>(members_of<Record>::rows).ptr);
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
    static constexpr std::array<presence, count> needs = {{get_row<I>(members_of<Record>::rows).need...}};
    static constexpr std::array<form_kind, count> kinds = {{row_at<Record, I>::form::kind...}};
    static constexpr std::array<std::string_view, count> expected = {{row_at<Record, I>::form::expected...}};
    static constexpr std::array<bool, count> keeps_text = {
        {form_keeps_text<typename row_at<Record, I>::form>::value...}};

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
