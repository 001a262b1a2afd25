// JSON paths as keyhook's errors spell them (json_path_member, json_path_index),
// for hosts that report their own JSON inputs the same way.
#include "keyhook/error.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <limits>
#include <string>

#include "keyhook/webhook_json.hpp"

using keyhook::json_path_index;
using keyhook::json_path_member;

TEST_CASE("errors: json_path_member and json_path_index build the paths keyhook's errors carry", "[errors]") {
    CHECK(json_path_member("", "endpoint") == "endpoint");  // no leading dot at the top
    CHECK(json_path_member("webhooks", "endpoint") == "webhooks.endpoint");
    CHECK(json_path_member("webhooks[2]", "auth") == "webhooks[2].auth");
    CHECK(json_path_member("a", "") == "a.");
    CHECK(json_path_index("", 0) == "[0]");
    CHECK(json_path_index("events", 3) == "events[3]");
    CHECK(json_path_index("events", std::numeric_limits<std::size_t>::max()) ==
          "events[" + std::to_string(std::numeric_limits<std::size_t>::max()) + "]");
    CHECK(json_path_member(json_path_index(json_path_member("", "data"), 10), "expireAt") == "data[10].expireAt");
    // The library's own code spells them the same way.
    CHECK(keyhook::detail::path_member("webhooks[2]", "auth") == json_path_member("webhooks[2]", "auth"));
    CHECK(keyhook::detail::path_index("events", 7) == json_path_index("events", 7));
}

TEST_CASE("errors: a host's path and keyhook's path for the same place are equal", "[errors]") {
    // A webhook without its endpoint, read by keyhook at the top of a document.
    const auto w = keyhook::try_webhook_from_json(nlohmann::json{{"name", "orders"}});
    REQUIRE(!w);
    CHECK(w.error().code == keyhook::errc::missing_member);
    CHECK(w.error().path == json_path_member("", "endpoint"));
}

TEST_CASE("errors: a path keeps the member name's bytes; printing escapes them (P1)", "[errors][P1]") {
    const std::string name = "x\x1b[2J\r\nFORGED";
    const keyhook::error e{keyhook::errc::wrong_type, json_path_member("headers", name), "expected a string"};
    CHECK(e.path == "headers." + name);
    CHECK(e.what() == "headers.x\\x1b[2J\\x0d\\x0aFORGED: expected a string");
}
