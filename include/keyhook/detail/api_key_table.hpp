// keyhook internal: api_key's member table and the JSON forms derived from it
// (detail/members.hpp). api_key.hpp declares the JSON functions; this header
// defines them. Header-only mode includes it through impl/api_key.ipp; in
// compiled mode the library compiles it once and instantiates the JSON forms
// for nlohmann::json and nlohmann::ordered_json.
#pragma once

#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "keyhook/api_key.hpp"
#include "keyhook/detail/json_members.hpp"
#include "keyhook/detail/members.hpp"

namespace keyhook {

// The record's one member table. Its order is the order both readers check members
// in: when a record has several faults, the first in this order is reported.
// Adding a member is two edits: the struct in api_key.hpp and its row here.
namespace detail {

// `masked` is read as text and masked again when written (P2): a well-formed
// mask is unchanged, a record that wrongly holds a full key never writes it (M3).
struct masked_text_form : text_form {
    static std::string write(const std::string& v) { return mask_key(v); }
};

inline std::string_view key_status_text(key_status s) noexcept { return to_string(s); }
using key_status_form = enum_form<key_status, read_key_status, unknown_key_status, key_status_text>;

template <>
struct members_of<api_key> {
    static constexpr auto rows = make_rows(  //
        row<text_form>(member::id, &api_key::id, presence::required),
        row<text_form>(member::user_id, &api_key::user_id, presence::optional),
        row<text_form>(member::name, &api_key::name, presence::required),
        row<text_form>(member::description, &api_key::description, presence::optional),
        row<masked_text_form>(member::masked, &api_key::masked, presence::optional),
        row<key_status_form>(member::status, &api_key::status, presence::required),
        row<text_form>(member::type, &api_key::type, presence::optional),
        row<string_list_form>(member::groups, &api_key::groups, presence::optional),
        row<time_form>(member::created_at, &api_key::created_at, presence::optional),
        row<text_form>(member::created_by, &api_key::created_by, presence::optional),
        row<time_form>(member::updated_at, &api_key::updated_at, presence::optional),
        row<time_form>(member::active_from, &api_key::active_from, presence::required),
        row<time_form>(member::expire_at, &api_key::expire_at, presence::required),
        row<time_form>(member::last_used_at, &api_key::last_used_at, presence::optional));
};
static_assert(members_complete<api_key>());

// try_api_key_from_json's body. Result is a parameter so that result<api_key>
// is compiled only where a record is read, not where this header is read.
template <class Json, class Result = result<api_key>>
Result read_api_key(const Json& j, const std::string& path) {
    api_key k;
    if (auto e = read_members(j, path, k)) return std::move(*e);
    return k;
}

}  // namespace detail

template <class Json>
result<api_key> try_api_key_from_json(const detail::non_deduced_t<Json>& j, const std::string& path) {
    return detail::read_api_key(j, path);
}

template <class Json>
void to_json(Json& j, const api_key& k) {
    detail::write_members(j, k);
}

}  // namespace keyhook

// Header-only mode (and the compiled library): the record's definitions, which
// use the table. Included from here, after the table, so that this header can
// be included first as well as through api_key.hpp.
#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/api_key.ipp"
#endif
