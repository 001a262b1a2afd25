// keyhook: the event filter of a webhook (rule H3): the event types it fires
// for, read from their names.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/events.hpp"

namespace keyhook {

// The event types a webhook fires for; empty means every type (H3).
using event_filter = std::set<event_type>;

// H3: an event filter given as names. An unknown name is errc::unknown_event
// at `path[i]` with the closest known name suggested. Repeated names are
// harmless (a set).
[[nodiscard]] KEYHOOK_INLINE result<event_filter> try_parse_event_filter(const std::vector<std::string>& names,
                                                                         std::string_view path = "events");
[[nodiscard]] KEYHOOK_INLINE event_filter parse_event_filter(const std::vector<std::string>& names,
                                                             std::string_view path = "events");

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/event_filter.ipp"
#endif
