// The member-table mechanism (detail/members.hpp) on a record of its own:
// every form, every presence, each derived function on both sides of its rule.
#include "keyhook/detail/members.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/detail/api_key_table.hpp"  // api_key's table, checked below
#include "keyhook/api_key.hpp"

using keyhook::errc;
using nlohmann::json;
namespace kd = keyhook::detail;

namespace {

enum class colour { red, green };

std::optional<colour> read_colour(std::string_view s) noexcept {
    if (s == "red") return colour::red;
    if (s == "green") return colour::green;
    return std::nullopt;
}
keyhook::error unknown_colour(std::string path, std::string_view) {
    return keyhook::error{errc::invalid_value, std::move(path), "expected red or green"};
}
std::string_view colour_name(colour c) noexcept { return c == colour::red ? "red" : "green"; }

struct sample {
    keyhook::key_id id;
    std::optional<std::string> note;
    colour hue = colour::red;
    std::vector<std::string> tags;
    keyhook::timestamp at{};
    std::optional<keyhook::timestamp> seen;
    std::string cache;  // not in JSON
};

}  // namespace

template <>
struct keyhook::detail::members_of<sample> {
    using colour_form = enum_form<colour, read_colour, unknown_colour, colour_name>;
    static constexpr auto rows = std::make_tuple(row<text_form>("id", &sample::id, presence::required),
                                                 row<text_form>("note", &sample::note, presence::optional),
                                                 row<colour_form>("hue", &sample::hue, presence::required),
                                                 row<string_list_form>("tags", &sample::tags, presence::optional),
                                                 row<time_form>("at", &sample::at, presence::required),
                                                 row<time_form>("seen", &sample::seen, presence::optional),
                                                 derived_row("cache", &sample::cache));
};

namespace {

struct plain_form {};  // a form that does not say whether it keeps its text

struct two_of_three {
    int a;
    std::optional<std::string> b;
    std::vector<std::string> c;
};

json full() {
    return json{{"id", "k1"},     {"note", "n"}, {"hue", "green"}, {"tags", {"x", "y"}}, {"at", "2025-01-02T00:00:00Z"},
                {"seen", nullptr}};
}

std::optional<keyhook::error> read(const json& j, sample& s) { return kd::read_members(j, "data[2]", s); }

}  // namespace

TEST_CASE("a record's member count is that of its aggregate", "[members]") {
    STATIC_REQUIRE(kd::aggregate_member_count<sample>() == 7);
    STATIC_REQUIRE(kd::aggregate_member_count<two_of_three>() == 3);
    // The completeness check's test: exactly N members, neither fewer nor more.
    STATIC_REQUIRE(kd::has_members<sample, 7>());
    STATIC_REQUIRE_FALSE(kd::has_members<sample, 6>());
    STATIC_REQUIRE_FALSE(kd::has_members<sample, 8>());
    STATIC_REQUIRE(kd::has_members<two_of_three, 3>());
    STATIC_REQUIRE_FALSE(kd::has_members<two_of_three, 2>());
    STATIC_REQUIRE(kd::member_count<sample> == 7);
    STATIC_REQUIRE(kd::members_complete<sample>());
}

TEST_CASE("read_members reads every form and leaves derived members alone", "[members][L2]") {
    sample s;
    s.cache = "kept";
    REQUIRE_FALSE(read(full(), s));
    CHECK(s.id.str() == "k1");
    CHECK(s.note == "n");
    CHECK(s.hue == colour::green);
    CHECK(s.tags == std::vector<std::string>{"x", "y"});
    CHECK(keyhook::format_timestamp(s.at) == "2025-01-02T00:00:00.000Z");
    CHECK_FALSE(s.seen);  // null is missing (L2)
    CHECK(s.cache == "kept");
}

TEST_CASE("read_members: an optional member may be absent, a required one may not", "[members][L2]") {
    auto j = full();
    j.erase("note");
    j.erase("tags");
    sample s;
    REQUIRE_FALSE(read(j, s));
    CHECK_FALSE(s.note);
    CHECK(s.tags.empty());

    for (const char* name : {"id", "hue", "at"}) {
        auto k = full();
        k[name] = nullptr;  // null is missing too
        sample t;
        const auto e = read(k, t);
        REQUIRE(e);
        CHECK(e->code == errc::missing_member);
        CHECK(e->path == std::string("data[2].") + name);
    }
}

TEST_CASE("read_members reports the first fault in table order with its path", "[members][J2]") {
    auto j = full();
    j["at"] = "yesterday";
    j["hue"] = 3;
    sample s;
    auto e = read(j, s);
    REQUIRE(e);
    CHECK(e->code == errc::wrong_type);
    CHECK(e->path == "data[2].hue");

    j["hue"] = "blue";
    e = read(j, s);
    REQUIRE(e);
    CHECK(e->code == errc::invalid_value);
    CHECK(e->path == "data[2].hue");

    j["hue"] = "red";
    e = read(j, s);
    REQUIRE(e);
    CHECK(e->path == "data[2].at");
    CHECK(e->message.find("yesterday") != std::string::npos);

    auto t = full();
    t["tags"] = {"x", 1};
    e = read(t, s);
    REQUIRE(e);
    CHECK(e->code == errc::wrong_type);
    CHECK(e->path == "data[2].tags[1]");

    t["tags"] = "x";
    e = read(t, s);
    REQUIRE(e);
    CHECK(e->path == "data[2].tags");
    CHECK(e->message.find("an array of strings") != std::string::npos);

    e = read(json::array(), s);
    REQUIRE(e);
    CHECK(e->path == "data[2]");
}

TEST_CASE("write_members writes in table order, an empty optional as null, no derived member", "[members]") {
    sample s;
    REQUIRE_FALSE(read(full(), s));
    s.cache = "not written";
    nlohmann::ordered_json j;
    kd::write_members(j, s);
    CHECK(j.dump() ==
          R"({"id":"k1","note":"n","hue":"green","tags":["x","y"],"at":"2025-01-02T00:00:00.000Z","seen":null})");
    json back = json::parse(j.dump());
    sample r;
    REQUIRE_FALSE(read(back, r));
    r.cache = s.cache;
    CHECK(kd::members_equal(r, s));
}

TEST_CASE("members_equal compares every member, derived ones included", "[members]") {
    sample a;
    REQUIRE_FALSE(read(full(), a));
    const sample b = a;
    CHECK(kd::members_equal(a, b));
    auto differs = [&](auto change) {
        sample c = b;
        change(c);
        return !kd::members_equal(a, c);
    };
    CHECK(differs([](sample& c) { c.id = keyhook::key_id("k2"); }));
    CHECK(differs([](sample& c) { c.note.reset(); }));
    CHECK(differs([](sample& c) { c.hue = colour::red; }));
    CHECK(differs([](sample& c) { c.tags.pop_back(); }));
    CHECK(differs([](sample& c) { c.at += std::chrono::seconds(1); }));
    CHECK(differs([](sample& c) { c.seen = c.at; }));
    CHECK(differs([](sample& c) { c.cache = "x"; }));
}

TEST_CASE("members_heap_bytes counts strings past the small buffer and list storage", "[members][J3]") {
    sample s;
    CHECK(kd::members_heap_bytes(s) == 0);
    s.note = std::string(15, 'n');  // fits the small buffer
    CHECK(kd::members_heap_bytes(s) == 0);
    s.note = std::string(40, 'n');
    const std::size_t note = s.note->capacity() + 1;
    CHECK(kd::members_heap_bytes(s) == note);
    s.tags.reserve(2);
    s.tags.push_back("short");
    CHECK(kd::members_heap_bytes(s) == note + s.tags.capacity() * sizeof(std::string));
    s.cache = std::string(30, 'c');
    CHECK(kd::members_heap_bytes(s) == note + s.tags.capacity() * sizeof(std::string) + s.cache.capacity() + 1);
}

TEST_CASE("member_index finds each JSON name and nothing else", "[members]") {
    using index = kd::member_index<sample>;
    STATIC_REQUIRE(index::count == 7);
    for (std::size_t i = 0; i + 1 < index::count; ++i) CHECK(index::find(index::names[i]) == i);
    CHECK(index::find("cache") == index::none);  // derived: not in JSON
    for (const char* other : {"", "i", "idx", "Id", "notes", "not", "hu", "tag", "ab", "seem", "a"})
        CHECK(index::find(other) == index::none);
    CHECK(index::find(std::string(200, 'a')) == index::none);
    CHECK(index::required_mask == (index::bit(0) | index::bit(2) | index::bit(4)));
    CHECK(index::kinds[3] == kd::form_kind::string_list);
    CHECK(index::expected[4] == "an ISO 8601 timestamp string");
}

TEST_CASE("member_index stores text, resets for null and gives the list", "[members]") {
    using index = kd::member_index<sample>;
    sample s;
    REQUIRE_FALSE(index::store(s, 1, "a note"));
    CHECK(s.note == "a note");
    index::reset(s, 1);
    CHECK_FALSE(s.note);
    const auto e = index::store(s, 2, "blue");
    REQUIRE(e);
    CHECK(e->code == errc::invalid_value);
    CHECK(e->path.empty());
    REQUIRE_FALSE(index::store(s, 5, "2025-01-02T00:00:00Z"));
    CHECK(s.seen);
    index::list(s, 3).push_back("t");
    CHECK(s.tags.size() == 1);
    index::reset(s, 3);
    CHECK(s.tags.empty());
}

TEST_CASE("visit_members and clear_optional_members go through every row in table order", "[members]") {
    sample s;
    REQUIRE_FALSE(read(full(), s));
    s.seen = s.at;
    std::vector<std::string_view> names;
    kd::visit_members(s, [&](const auto& row, const auto&) { names.push_back(row.name); });
    CHECK(names == std::vector<std::string_view>{"id", "note", "hue", "tags", "at", "seen", "cache"});
    kd::clear_optional_members(s);
    CHECK_FALSE(s.note);
    CHECK(s.tags.empty());
    CHECK_FALSE(s.seen);
    CHECK(s.id.str() == "k1");  // required members stay
    CHECK(s.hue == colour::green);
}

TEST_CASE("api_key's table: spec 2.1's members in order, five of them required", "[members][L2]") {
    using index = kd::member_index<keyhook::api_key>;
    const std::vector<std::string_view> names(index::names.begin(), index::names.end());
    CHECK(names == std::vector<std::string_view>{"id", "userId", "name", "description", "masked", "status", "type",
                                                 "groups", "createdAt", "createdBy", "updatedAt", "activeFrom",
                                                 "expireAt", "lastUsedAt"});
    std::vector<std::string_view> required;
    for (std::size_t i = 0; i < index::count; ++i)
        if (index::required(i)) required.push_back(index::names[i]);
    CHECK(required == std::vector<std::string_view>{"id", "name", "status", "activeFrom", "expireAt"});
    for (std::size_t i = 0; i < index::count; ++i) CHECK(index::find(index::names[i]) == i);
    CHECK(index::find("Id") == index::none);
    CHECK(index::find("expireat") == index::none);
}

TEST_CASE("a form that does not say whether it keeps its text does not", "[members]") {
    STATIC_REQUIRE_FALSE(kd::form_keeps_text<plain_form>::value);
    STATIC_REQUIRE(kd::form_keeps_text<kd::text_form>::value);
    STATIC_REQUIRE_FALSE(kd::form_keeps_text<kd::time_form>::value);
    STATIC_REQUIRE(kd::member_index<sample>::keeps_text[1]);        // note: text
    STATIC_REQUIRE_FALSE(kd::member_index<sample>::keeps_text[2]);  // hue: an enumeration
}
