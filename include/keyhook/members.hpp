// keyhook: describe a record once, in a member table, and derive its JSON
// reader (the first fault with its JSON path and why, worded as keyhook's own
// readers word it), its writer and its equality. keyhook's own records are
// described this way (docs/design.md, "Records: one member table"); this
// header lets a host, and keyhook's programs, describe theirs.
//
//     struct shipment {
//         std::string id;                     // required text
//         std::optional<std::string> note;    // optional: absent or null reads as nullopt
//         std::uint64_t weight = 0;           // a whole number, 1 to 1000
//         keyhook::timestamp sent_at{};       // T4 text
//     };
//
//     template <>
//     struct keyhook::members_of<shipment> {
//         static constexpr auto rows = make_rows(
//             row<text_form>("id", &shipment::id, presence::required),
//             row<text_form>("note", &shipment::note, presence::optional),
//             row<whole_form<std::uint64_t, 1, 1000>>("weight", &shipment::weight, presence::required),
//             row<time_form>("sentAt", &shipment::sent_at, presence::required));
//     };
//     static_assert(keyhook::members_complete<shipment>());  // a member without a row does not compile
//
//     keyhook::result<shipment> s = keyhook::try_read_record<shipment>(json, "shipments[3]");
//     // s.error(): {errc::out_of_range, "shipments[3].weight", "expected a whole number from 1 to 1000, got 0"}
//     keyhook::write_record(json, *s);             // members in table order
//     bool same = keyhook::records_equal(a, b);    // member by member
//
// Adding a member is two edits, the struct and its row; with the row
// forgotten the build stops at members_complete ("every member of the record
// needs exactly one row in its detail::members_of table").
//
// The vocabulary (each documented in keyhook/detail/members.hpp, where it
// lives): presence (required, optional, omitted: left out when empty,
// derived: not in JSON), the forms text_form, time_form, string_list_form,
// bool_form, whole_form<T, lo, hi>, integer_form<T, lo, hi>,
// named_enum_form<E> (spelt by keyhook::detail::enum_names<E>),
// record_form<R> (a nested record by its own table), list_form<Elem, Max>,
// null_refused<Form>, and a form of the record's own (a struct with kind,
// expected, read and write); the rows row, derived_row, group, part,
// spread<Form> and row(...).only_when(pred, reason); the hooks closed, check
// and canonical in members_of<R>; the contexts no_context and reveal_secrets.
// The record must be an aggregate of at most 64 members.
//
// A form of one's own words its faults as keyhook's readers do with
// wrong_type(path, expected, json) ("expected a string, got number"),
// missing_member_error(path) and timestamp_error(path, text). A member that
// is a record with a reader and writer of its own (one of keyhook's, such as
// a webhook) is a form whose read calls that reader; spread<Form>(&R::m)
// puts its members beside the record's own in one JSON object (Form
// provides `names`, read_in(object, path, T&) and write_in(object, const T&),
// each taking the context as a last parameter when it asks for it). A
// form's write may take reveal_secrets to write a store's copy (see
// keyhook::to_store_json) and nothing else for every other writer.
//
// Templates on the JSON type (any type with nlohmann::json's interface); the
// caller includes <nlohmann/json.hpp>. No definitions to compile: nothing
// here depends on KEYHOOK_COMPILED.
#pragma once

#include <string>
#include <utility>

#include "keyhook/detail/members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

// keyhook::members_of<Record> (declared in detail/members.hpp): specialize it
// for your record with `static constexpr auto rows = make_rows(row<...>(...), ...);`
// (a std::tuple of rows, as std::make_tuple makes, works too, and costs each
// translation unit that reads the table more to compile)
// (and optionally `closed`, `check`, `canonical`, as the top of
// detail/members.hpp describes). Inside the specialization the vocabulary
// below is found unqualified.

using detail::presence;

using detail::bool_form;
using detail::form_kind;
using detail::integer_form;
using detail::list_form;
using detail::named_enum_form;
using detail::null_refused;
using detail::record_form;
using detail::string_list_form;
using detail::text_form;
using detail::time_form;
using detail::whole_form;

using detail::derived_row;
using detail::group;
using detail::make_rows;
using detail::part;
using detail::row;
using detail::spread;

using detail::no_context;
using detail::reveal_secrets;

// The wording of keyhook's readers, for a form of one's own.
using detail::missing_member_error;
using detail::timestamp_error;
using detail::wrong_type;

using detail::members_complete;
using detail::members_equal;
using detail::read_members;
using detail::write_members;

// Reads a Record from JSON object j; `path` names where j sits and prefixes
// every error's path. ctx reaches the forms that take one.
template <class Record, class Json, class Ctx = no_context>
[[nodiscard]] result<Record> try_read_record(const Json& j, const std::string& path = {}, const Ctx& ctx = {}) {
    Record r{};
    if (auto e = detail::read_members(j, path, r, ctx)) return std::move(*e);
    return r;
}

// Writes every member of r into j (an object), in table order.
template <class Json, class Record, class Ctx = no_context>
void write_record(Json& j, const Record& r, const Ctx& ctx = {}) {
    detail::write_members(j, r, ctx);
}

// Member by member, as the table compares them.
template <class Record>
[[nodiscard]] bool records_equal(const Record& a, const Record& b) {
    return detail::members_equal(a, b);
}

}  // namespace keyhook
