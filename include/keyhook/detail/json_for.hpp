// keyhook internal: the JSON type named through a template parameter, for the
// deferred definitions (config.hpp): in a template's body, json_for<D>::type
// is dependent, so nothing of nlohmann::json is compiled there before the
// template is instantiated, and nlohmann::json need only be declared where
// the header is included. It is detail::deferred (detail/deferred.hpp) for
// nlohmann::json.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "keyhook/detail/deferred.hpp"

namespace keyhook::detail {

template <class D>
struct json_for : deferred<nlohmann::json, D> {};

}  // namespace keyhook::detail
