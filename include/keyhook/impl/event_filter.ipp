#pragma once
// keyhook: definitions of event_filter.hpp.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/event_filter.hpp"

namespace keyhook {

KEYHOOK_INLINE result<event_filter> try_parse_event_filter(const std::vector<std::string>& names,
                                                           std::string_view path) {
    event_filter out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        auto e = try_parse_event_type(names[i]);
        if (!e) {
            error err = e.error();
            err.path = detail::path_index(path, i);
            return err;
        }
        out.insert(*e);
    }
    return out;
}

KEYHOOK_INLINE event_filter parse_event_filter(const std::vector<std::string>& names, std::string_view path) {
    return try_parse_event_filter(names, path).value();
}

}  // namespace keyhook
