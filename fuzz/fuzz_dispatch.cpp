// The webhook_dispatch input ({"tenant", "webhooks", "event"}, the JSON the
// example reads) through dispatch_input_from_json and dispatch (H4, H8).
// Properties: never crashes; a request goes out exactly for each webhook that
// should fire, in order, and none while the switch is off, where "should
// fire" is decided here from the JSON by H4 and H3 (switch on, saved, filter
// empty or naming the event), not by the library's fires() (a
// two-sided property); each request's URL is the endpoint with the query parameters appended,
// encoded here, and its headers are Content-Type then the header parameters,
// in order; every URL and header is free of CR, LF and NUL; the method is
// POST; every body is the same bytes and parses back to the event; delivery
// ids are the same on a second dispatch (retries) and differ between
// webhooks; an error message quotes no input string whole beyond 64 bytes
// (fuzz_common's property, robust to escaping).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/received_notification.hpp"
#include "../examples/shared/dispatch_input.hpp"

namespace {

// H4 and H3 read straight from the accepted JSON: the tenant's switch is on,
// the webhook is saved, and its filter is missing, null or empty, or names
// the event.
bool should_fire(const nlohmann::json& j, const nlohmann::json& hook) {
    if (!j["tenant"]["webhooksEnabled"].get<bool>()) return false;
    if (!hook["saved"].get<bool>()) return false;
    const auto events = hook.find("events");
    if (events == hook.end() || events->is_null() || events->empty()) return true;
    const auto& action = j["event"]["UserAction"];
    for (const auto& e : *events)
        if (e == action) return true;
    return false;
}

// RFC 3986 unreserved characters stay; every other byte becomes %XX.
std::string encode(const std::string& s) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~') {
            out += ch;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 0xF];
        }
    }
    return out;
}

// The URL and the headers a webhook's request must have, from its JSON.
void expected_request(const nlohmann::json& hook, std::string& url, keyhook::http_headers& headers) {
    url = hook["endpoint"].get<std::string>();
    headers = {{"Content-Type", "application/json", false}};
    const auto auth = hook.find("auth");
    if (auth == hook.end() || auth->is_null()) return;
    bool first = true;
    for (const auto& p : *auth) {
        const auto name = p["name"].get<std::string>();
        const auto value = p["value"].get<std::string>();
        if (p["in"] == "header") {
            headers.push_back({name, value, true});
            continue;
        }
        if (first && url.find('?') == std::string::npos)
            url += '?';
        else if (!(first && (url.back() == '?' || url.back() == '&')))
            url += '&';
        url += encode(name) + "=" + encode(value);
        first = false;
    }
}

}  // namespace

KEYHOOK_FUZZ_TARGET(dispatch) {
    if (size == 0) return 0;
    keyhook::endpoint_policy policy;
    policy.allow_http = (data[0] & 1) != 0;
    policy.allow_non_global_addresses = (data[0] & 2) != 0;
    nlohmann::json j;
    if (!fuzz::parse_json(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), j)) return 0;
    // A whole millisecond: the body carries 3 fraction digits (H6).
    const keyhook::timestamp now{std::chrono::milliseconds{1768471200123}};
    const auto input = examples::try_dispatch_input_from_json(j, now, policy);
    if (!input) {
        std::vector<std::string> strings;
        fuzz::collect_strings(j, strings);
        fuzz::check_no_long_quote(input.error(), strings);
        return 0;
    }
    const auto& tenant = input->settings.tenant;
    const auto& hooks = input->settings.webhooks;
    const auto requests = keyhook::try_dispatch(tenant, hooks, input->event);
    fuzz::check(requests.has_value(), "dispatch of a read input failed", requests ? "" : requests.error().what());

    std::size_t next = 0;
    std::set<std::string> ids;
    const auto& hooks_json = j["webhooks"];
    fuzz::check(hooks_json.size() == hooks.size(), "the webhooks read differ in number from the input");
    for (std::size_t i = 0; i < hooks.size(); ++i) {
        const auto& w = hooks[i];
        const bool fire = should_fire(j, hooks_json[i]);
        // Two-sided: the library agrees with the oracle on every webhook.
        fuzz::check(keyhook::fires(tenant, w, input->event.user_action) == fire, "fires() disagrees with H4/H3");
        if (!fire) continue;
        fuzz::check(next < requests->size(), "a webhook that should fire got no request");
        const auto& r = (*requests)[next++];
        fuzz::check(r.webhook_name() == hooks_json[i]["name"].get<std::string>(), "requests are out of order");
        std::string url;
        keyhook::http_headers headers;
        expected_request(hooks_json[i], url, headers);
        fuzz::check(r.url() == url, "the URL is not the endpoint with the encoded query parameters", r.url());
        fuzz::check(r.headers() == headers, "the headers are not Content-Type and the header parameters");
        fuzz::check(r.method() == "POST", "the method is not POST");
        fuzz::check(!fuzz::has_cr_lf_nul(r.url()), "an outbound URL holds CR, LF or NUL");
        for (char c : r.url())
            fuzz::check(static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f,
                        "an outbound URL holds a space, control or non-ASCII byte");
        for (const auto& h : r.headers()) {
            fuzz::check(!fuzz::has_cr_lf_nul(h.name) && !fuzz::has_cr_lf_nul(h.value),
                        "an outbound header holds CR, LF or NUL");
            fuzz::check(keyhook::is_http_token(h.name), "an outbound header name is not a token");
        }
        fuzz::check(keyhook::find_header(r.headers(), "Content-Type") != nullptr &&
                        keyhook::find_header(r.headers(), "Content-Type")->value == "application/json",
                    "no Content-Type: application/json");
        fuzz::check(r.body() == (*requests)[0].body(), "the bodies of one event differ");
        const auto id = keyhook::to_string(r.id());
        fuzz::check(ids.insert(id).second, "two webhooks share a delivery id");
        fuzz::check(keyhook::try_parse_delivery_id(id).has_value() && *keyhook::try_parse_delivery_id(id) == r.id(),
                    "a delivery id does not read back");
        const auto http = r.request();
        fuzz::check(http.method == "POST" && http.url == r.url() && http.body == r.body(), "request() differs");
    }
    fuzz::check(next == requests->size(), "a request went to a webhook that should not fire");
    if (!tenant.webhooks_enabled) fuzz::check(requests->empty(), "a request while the switch is off");

    if (!requests->empty()) {
        const auto received = keyhook::try_parse_notification(requests->front().body());
        fuzz::check(received.has_value(), "a body does not parse");
        const auto back = keyhook::try_to_notification(*received);
        fuzz::check(back.has_value() && *back == input->event, "a body does not read back to the event");
        // A retry: dispatching again gives the same ids.
        const auto again = keyhook::try_dispatch(tenant, hooks, input->event);
        fuzz::check(again.has_value() && again->size() == requests->size(), "a second dispatch differs");
        for (std::size_t i = 0; i < again->size(); ++i)
            fuzz::check((*again)[i].id() == (*requests)[i].id(), "a delivery id changed between dispatches");
    }
    return 0;
}
