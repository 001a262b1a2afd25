// The webhook_dispatch input ({"tenant", "webhooks", "event"}, the JSON the
// example reads) through dispatch_input_from_json and dispatch (H4, H8).
// Properties: never crashes; a request goes out exactly for each webhook that
// fires(), in order, and none while the switch is off; every URL and header
// is free of CR, LF and NUL; the method is POST; every body is the same bytes
// and parses back to the event; delivery ids are the same on a second dispatch
// (retries) and differ between webhooks.
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

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    keyhook::endpoint_policy policy;
    policy.allow_http = (data[0] & 1) != 0;
    policy.allow_non_global_addresses = (data[0] & 2) != 0;
    nlohmann::json j;
    if (!fuzz::parse_json(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), j)) return 0;
    // A whole millisecond: the body carries 3 fraction digits (H6).
    const keyhook::timestamp now{std::chrono::milliseconds{1768471200123}};
    const auto input = keyhook::try_dispatch_input_from_json(j, now, policy);
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
    for (const auto& w : hooks) {
        if (!keyhook::fires(tenant, w, input->event.user_action)) continue;
        fuzz::check(next < requests->size(), "a webhook that fires got no request");
        const auto& r = (*requests)[next++];
        fuzz::check(r.webhook_name() == w.name(), "requests are out of order");
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
    fuzz::check(next == requests->size(), "a request went to a webhook that does not fire");
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
