// keyhook internal: the JSON type named through a template parameter, for the
// deferred definitions (config.hpp): in a template's body, json_for<D>::type
// is dependent, so nothing of nlohmann::json is compiled there before the
// template is instantiated, and nlohmann::json need only be declared where
// the header is included.
#pragma once

#include <nlohmann/json_fwd.hpp>

namespace keyhook::detail {

template <class>
struct json_for {
    using type = nlohmann::json;
};

}  // namespace keyhook::detail
