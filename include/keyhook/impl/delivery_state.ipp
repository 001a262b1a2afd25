#pragma once
// keyhook: definitions of delivery_state.hpp (the parts that need the JSON library).

#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "keyhook/delivery_state.hpp"
#include "keyhook/detail/delivery_state_table.hpp"

namespace keyhook {

template <class D>
KEYHOOK_INLINE delivery_state make_delivery_state(const detail::deferred_t<outbound_request, D>& r, timestamp due) {
    return delivery_state{r.id(), r.webhook_name(), r.body(), {}, delivery_status::pending, due};
}

KEYHOOK_INLINE void record_attempt(delivery_state& s, const delivery_attempt& attempt, const retry_decision& decision) {
    s.attempts.push_back(attempt);
    using action = retry_decision::action;
    s.next_due.reset();
    switch (decision.what) {
        case action::send:
            s.status = delivery_status::pending;
            s.next_due = decision.send_at;
            return;
        case action::succeeded: s.status = delivery_status::delivered; return;
        case action::give_up: s.status = delivery_status::gave_up; return;
        case action::disable_webhook: s.status = delivery_status::disabled; return;
    }
}

KEYHOOK_INLINE bool delivery_state::is_equal(const delivery_state& a, const delivery_state& b) { return detail::members_equal(a, b); }

KEYHOOK_INLINE std::ostream& delivery_state::print_to(std::ostream& os, const delivery_state& s) {
    os << s.id << " to " << detail::quote_input(s.webhook) << ": " << s.status << ", " << s.attempts.size()
       << " attempt(s)";
    if (s.next_due) os << ", next at " << format_timestamp(*s.next_due);
    return os << " (" << s.body.size() << " body bytes)";
}

template <class D>
KEYHOOK_INLINE result<delivery_state> try_parse_delivery_state(std::string_view text) {
    using json = typename detail::json_for<D>::type;
    auto document = try_parse_json<D>(text);
    if (!document) return document.error();
    return try_delivery_state_from_json<json>(*document);
}

template <class D>
KEYHOOK_INLINE delivery_state parse_delivery_state(std::string_view text) {
    return try_parse_delivery_state<D>(text).value();
}

template <class D>
KEYHOOK_INLINE std::string write_delivery_state(const delivery_state& s) {
    using json = typename detail::json_for<D>::type;
    return json(s).dump();
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the JSON forms a program's translation units only declare,
// and make_delivery_state, which needs outbound_request complete.
#include "keyhook/dispatch.hpp"
namespace keyhook {
#define KEYHOOK_DELIVERY_JSON(Json)                              \
    template void to_json<Json>(Json&, const delivery_attempt&); \
    template void to_json<Json>(Json&, const delivery_state&);   \
    template result<delivery_state> try_delivery_state_from_json<Json>(const Json&);
KEYHOOK_DELIVERY_JSON(nlohmann::json)
KEYHOOK_DELIVERY_JSON(nlohmann::ordered_json)
#undef KEYHOOK_DELIVERY_JSON
template result<delivery_state> try_parse_delivery_state<void>(std::string_view);
template delivery_state parse_delivery_state<void>(std::string_view);
template std::string write_delivery_state<void>(const delivery_state&);
template delivery_state make_delivery_state<void>(const outbound_request&, timestamp);
}  // namespace keyhook
#endif
