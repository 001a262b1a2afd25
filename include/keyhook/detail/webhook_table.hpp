// keyhook internal: the member tables of webhook.hpp's records (a webhook as
// configured, its authentication parameters, the tenant's settings) and the
// forms they use (detail/members.hpp). Their reader, writer and equality come
// from these tables. Included by the implementation files only, so that a
// program built in compiled mode does not instantiate them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "keyhook/detail/json_members.hpp"
#include "keyhook/detail/members.hpp"
#include "keyhook/error.hpp"
#include "keyhook/event_filter.hpp"
#include "keyhook/events.hpp"
#include "keyhook/http.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/webhook.hpp"

namespace keyhook {

namespace detail {

// A secret of the given kind, read from a string. Written as its JSON form is
// (masked, M3; a signing key shows its prefix only, B1), except by a store's
// writer (reveal_secrets), which keeps the plaintext. A type error names the
// JSON type only, never the value.
template <secret_kind Kind>
struct secret_form {
    static constexpr form_kind kind = form_kind::string;
    static constexpr bool keeps_text = true;
    static constexpr std::string_view expected = "a string";
    static std::optional<error> from_text(const std::string& text, secret& out) {
        out = secret(text, Kind);
        return std::nullopt;
    }
    static std::string write(const secret& s) { return s.masked(); }
    static const std::string& write(const secret& s, const reveal_secrets&) { return s.reveal(); }
    static std::size_t heap_bytes(const secret& s) noexcept { return s.size() > 15 ? s.size() + 1 : 0; }
};

// An endpoint URL, kept as typed. Written through redact_url (P2: no
// user-info, no query values, where a key may sit, H2), except by a store's
// writer, which keeps it whole.
struct endpoint_text_form : text_form {
    static std::string write(const std::string& url) { return redact_url(url); }
    static const std::string& write(const std::string& url, const reveal_secrets&) { return url; }
};

// H3's filter: an array of event type names (a set; written in enumeration order).
struct event_filter_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "an array of event type names";
    template <class Json>
    static std::optional<error> read(const Json& v, const std::string& path, event_filter& out) {
        if (!v.is_array()) return wrong_type(path, expected, v);
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto& item = v[i];
            const std::string item_path = path_index(path, i);
            if (!item.is_string()) return wrong_type(item_path, "an event type name", item);
            auto e = try_parse_event_type(item.template get_ref<const std::string&>());
            if (!e) return error{e.error().code, item_path, e.error().message};
            out.insert(*e);
        }
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const event_filter& in) {
        slot = Json::array();
        for (const auto e : in) {
            Json one;
            to_json(one, e);  // refuses a value outside the 53 (it has no wire name)
            slot.push_back(std::move(one));
        }
    }
};

}  // namespace detail

template <>
struct detail::members_of<auth_parameter> {
    static constexpr auto rows =
        make_rows(row<named_enum_form<auth_location>>("in", &auth_parameter::in, presence::required),
                  row<text_form>("name", &auth_parameter::name, presence::required),
                  row<secret_form<secret_kind::api_key>>("value", &auth_parameter::value, presence::required));
};
static_assert(detail::members_complete<auth_parameter>());

namespace detail {
// H2: at most max_auth_parameters, counted before any is read (J3).
struct auth_list_form {
    static constexpr form_kind kind = form_kind::value;
    static constexpr std::string_view expected = "an array of authentication parameters";
    template <class Json, class Ctx = no_context>
    static std::optional<error> read(const Json& v, const std::string& path, std::vector<auth_parameter>& out,
                                     const Ctx& ctx = {}) {
        if (!v.is_array()) return wrong_type(path, expected, v);
        if (v.size() > max_auth_parameters)
            return error{errc::limit_exceeded, path,
                         "has " + std::to_string(v.size()) + " authentication parameters; at most " +
                             std::to_string(max_auth_parameters) + " are allowed"};
        out.clear();
        out.reserve(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            auth_parameter p;
            if (auto e = read_members(v[i], path_index(path, i), p, ctx)) return e;
            out.push_back(std::move(p));
        }
        return std::nullopt;
    }
    template <class Json, class Ctx = no_context>
    static void write(Json& slot, const std::vector<auth_parameter>& in, const Ctx& ctx = {}) {
        slot = Json::array();
        for (const auto& p : in) {
            Json one;
            write_members(one, p, ctx);
            slot.push_back(std::move(one));
        }
    }
};
}  // namespace detail

// The order of the rows is the order faults are found in: name, endpoint,
// saved, events, auth, signingSecret. Adding a member to webhook is two
// edits: the struct in webhook.hpp and its row here.
template <>
struct detail::members_of<webhook> {
    static constexpr auto rows = make_rows(
        row<text_form>("name", &webhook::name, presence::required),
        row<endpoint_text_form>("endpoint", &webhook::endpoint, presence::required),
        row<bool_form>("saved", &webhook::saved, presence::required),
        row<event_filter_form>("events", &webhook::events, presence::optional),
        row<auth_list_form>("auth", &webhook::auth, presence::optional),
        row<secret_form<secret_kind::signing_key>>("signingSecret", &webhook::signing_secret, presence::optional));
};
static_assert(detail::members_complete<webhook>());

template <>
struct detail::members_of<tenant_settings> {
    static constexpr auto rows =
        make_rows(row<text_form>("name", &tenant_settings::name, presence::required),
                  row<bool_form>("webhooksEnabled", &tenant_settings::webhooks_enabled, presence::required));
};
static_assert(detail::members_complete<tenant_settings>());

}  // namespace keyhook
