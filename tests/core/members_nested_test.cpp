// The member-table forms for numbers, nested records, lists, groups, parts,
// spread and tied members, conditional rows and the record hooks (closed,
// check, canonical) of detail/members.hpp, on records of their own; and the
// records of this round that use them, read back from what they write.
#include "keyhook/detail/members.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/detail/endpoint_health_table.hpp"  // the notice's table, read below
#include "keyhook/endpoint_health.hpp"
#include "keyhook/json_input.hpp"

using keyhook::errc;
using nlohmann::json;
namespace kd = keyhook::detail;

// A named namespace: the completeness check converts to these types in an
// unevaluated context, which clang refuses for types without linkage.
namespace nested_test {

enum class shape { square, round };

struct point {
    std::int64_t x = 0;
    std::optional<std::uint64_t> weight;
};

struct span_of {
    std::optional<keyhook::timestamp> at;
};

struct drawing {
    shape kind = shape::square;
    unsigned corners = 4;  // squares only
    std::vector<point> points;
    std::optional<point> origin;
    bool framed = false;
    std::uint64_t frame_width = 0;  // in the "frame" object, with framed
    std::string title;              // in the "meta" object
    span_of drawn;                  // its `at` is "drawnAt", beside the others
    std::chrono::seconds shown{};
};

bool is_square(const drawing& d) noexcept { return d.kind == shape::square; }

}  // namespace nested_test
using nested_test::drawing;
using nested_test::point;
using nested_test::shape;
using nested_test::span_of;

template <>
struct keyhook::detail::enum_names<shape> {
    static constexpr std::string_view values[] = {"square", "round"};
};

template <>
struct keyhook::detail::members_of<point> {
    static constexpr bool closed = true;
    static constexpr auto rows =
        std::make_tuple(row<integer_form<std::int64_t, -10, 10>>("x", &point::x, presence::required),
                        row<whole_form<std::uint64_t, 1, 100>>("weight", &point::weight, presence::omitted));
    // Written and compared as a point with a weight of at least 1 when it has one.
    static point canonical(point p) noexcept {
        if (p.weight && *p.weight == 0) p.weight = 1;
        return p;
    }
};

template <>
struct keyhook::detail::members_of<drawing> {
    static constexpr auto rows = std::make_tuple(
        row<named_enum_form<shape>>("kind", &drawing::kind, presence::required),
        row<whole_form<unsigned, 3, 8>>("corners", &drawing::corners, presence::required)
            .only_when(nested_test::is_square, "only a square has corners"),
        row<list_form<record_form<point>, 3>>("points", &drawing::points, presence::required),
        row<record_form<point>>("origin", &drawing::origin, presence::optional),
        group("frame", &drawing::framed,
              row<whole_form<std::uint64_t, 0, 9>>("width", &drawing::frame_width, presence::required)),
        group<drawing>("meta", row<text_form>("title", &drawing::title, presence::required)),
        part(&drawing::drawn, row<time_form>("drawnAt", &span_of::at, presence::omitted)),
        row<whole_form<std::chrono::seconds, 0, 60>>("shownSeconds", &drawing::shown, presence::optional));

    static std::optional<keyhook::error> check(const drawing& d, const std::string& base) {
        if (d.points.empty())
            return keyhook::error{errc::invalid_value, kd::path_member(base, "points"), "a drawing has a point"};
        return std::nullopt;
    }
};
static_assert(kd::members_complete<drawing>());
static_assert(kd::members_complete<point>());

namespace {

json good() {
    return json::parse(R"({"kind": "square", "corners": 4, "points": [{"x": -10}, {"x": 10, "weight": 100}],
                           "origin": null, "frame": {"width": 9}, "meta": {"title": "t"},
                           "drawnAt": "2026-01-02T03:04:05Z", "shownSeconds": 60})");
}

keyhook::error refusal(const json& j) {
    drawing d;
    auto e = kd::read_members(j, "doc", d);
    REQUIRE(e.has_value());
    return *e;
}

drawing read_ok(const json& j) {
    drawing d;
    const auto e = kd::read_members(j, "doc", d);
    INFO((e ? e->path + ": " + e->message : std::string()));
    REQUIRE_FALSE(e.has_value());
    return d;
}

}  // namespace

TEST_CASE("nested tables: a document reads, writes back the same and compares equal", "[members]") {
    const auto d = read_ok(good());
    CHECK(d.kind == shape::square);
    CHECK(d.points.size() == 2);
    CHECK(d.points[1].weight == std::uint64_t{100});
    CHECK(d.framed);
    CHECK(d.frame_width == 9);
    CHECK(d.title == "t");
    REQUIRE(d.drawn.at.has_value());
    CHECK(d.shown == std::chrono::seconds{60});

    json written;
    kd::write_members(written, d);
    // The optional origin is written as null; drawnAt as T4; weight left out when empty.
    CHECK(written.dump() ==
          R"({"corners":4,"drawnAt":"2026-01-02T03:04:05.000Z","frame":{"width":9},"kind":"square",)"
          R"("meta":{"title":"t"},"origin":null,"points":[{"x":-10},{"weight":100,"x":10}],"shownSeconds":60})");
    CHECK(kd::members_equal(read_ok(written), d));

    auto other = d;
    other.points[0].x = 1;
    CHECK_FALSE(kd::members_equal(other, d));  // a nested record's member counts
    other = d;
    other.drawn.at.reset();
    CHECK_FALSE(kd::members_equal(other, d));  // a part's member counts
}

TEST_CASE("nested tables: numbers on both sides of their bounds", "[members][J2]") {
    auto with = [](const char* pointer, json v) {
        auto j = good();
        j[json::json_pointer(pointer)] = std::move(v);
        return j;
    };
    // integer_form: -10 and 10 in, -11 and 11 out, a fraction out of range, text of the wrong type.
    CHECK(refusal(with("/points/0/x", -11)).code == errc::out_of_range);
    CHECK(refusal(with("/points/0/x", 11)).path == "doc.points[0].x");
    CHECK(refusal(with("/points/0/x", std::uint64_t{1} << 63)).code == errc::out_of_range);
    CHECK(refusal(with("/points/0/x", 2.5)).code == errc::out_of_range);
    CHECK(refusal(with("/points/0/x", "1")).code == errc::wrong_type);
    CHECK(refusal(with("/points/0/x", 11)).message == "must be an integer from -10 to 10");
    // whole_form: 1 and 100 in, 0 and 101 out of range, a negative or fractional number invalid.
    read_ok(with("/points/0/weight", 1));
    CHECK(refusal(with("/points/0/weight", 0)).code == errc::out_of_range);
    const auto over = refusal(with("/points/1/weight", 101));
    CHECK(over.code == errc::out_of_range);
    CHECK(over.path == "doc.points[1].weight");
    CHECK(over.message == "expected a whole number from 1 to 100, got 101");
    CHECK(refusal(with("/points/0/weight", -1)).code == errc::invalid_value);
    CHECK(refusal(with("/points/0/weight", 1.5)).code == errc::invalid_value);
    // A duration counted in seconds: 0 and 60 in, 61 out.
    CHECK(read_ok(with("/shownSeconds", 0)).shown == std::chrono::seconds{0});
    CHECK(refusal(with("/shownSeconds", 61)).path == "doc.shownSeconds");
}

TEST_CASE("nested tables: lists, groups, parts and conditional rows name their paths", "[members][J1]") {
    auto with = [](const char* pointer, json v) {
        auto j = good();
        j[json::json_pointer(pointer)] = std::move(v);
        return j;
    };
    // A list: wrong type, an element of the wrong type, more than Max entries (3 in, 4 out).
    CHECK(refusal(with("/points", json::object())).code == errc::wrong_type);
    CHECK(refusal(with("/points/1", 5)).path == "doc.points[1]");
    read_ok(with("/points/2", json{{"x", 0}}));
    const auto many = refusal(with("/points", json::parse(R"([{"x":0},{"x":0},{"x":0},{"x":0}])")));
    CHECK(many.code == errc::limit_exceeded);
    CHECK(many.path == "doc.points");
    // A closed nested record refuses a member it does not know.
    const auto unknown = refusal(with("/points/0/y", 1));
    CHECK(unknown.path == "doc.points[0].y");
    CHECK(unknown.message == R"(is not a member keyhook knows here; expected "x", "weight")");
    // An unflagged group is required; a flagged one may be absent (its flag then false).
    auto no_meta = good();
    no_meta.erase("meta");
    CHECK(refusal(no_meta).code == errc::missing_member);
    CHECK(refusal(no_meta).path == "doc.meta");
    CHECK(refusal(with("/meta/title", 1)).path == "doc.meta.title");
    auto no_frame = good();
    no_frame.erase("frame");
    CHECK_FALSE(read_ok(no_frame).framed);
    CHECK(refusal(with("/frame", 1)).code == errc::wrong_type);
    CHECK(refusal(with("/frame/width", 10)).path == "doc.frame.width");
    // A part's member sits beside the others.
    CHECK(refusal(with("/drawnAt", "2026-02-30T00:00:00Z")).path == "doc.drawnAt");
    // A conditional row: required while it applies, refused while it does not.
    auto round = with("/kind", "round");
    CHECK(refusal(round).path == "doc.corners");
    CHECK(refusal(round).message == "only a square has corners");
    round.erase("corners");
    const auto r = read_ok(round);
    CHECK(r.kind == shape::round);
    auto square = good();
    square.erase("corners");
    CHECK(refusal(square).code == errc::missing_member);
    // An unknown enumerator lists the known ones.
    CHECK(refusal(with("/kind", "oval")).message == R"(expected "square" or "round", got "oval")");
    // The record's check runs once the members are read.
    CHECK(refusal(with("/points", json::array())).message == "a drawing has a point");
}

TEST_CASE("nested tables: a conditional row is neither written nor compared while it does not apply", "[members]") {
    auto a = read_ok(good());
    a.kind = shape::round;
    auto b = a;
    b.corners = 7;
    CHECK(kd::members_equal(a, b));
    json written;
    kd::write_members(written, b);
    CHECK_FALSE(written.contains("corners"));
    b.kind = shape::square;
    CHECK_FALSE(kd::members_equal(a, b));
    // The flag of a group: unset, the group is not written.
    a.framed = false;
    kd::write_members(written, a);
    CHECK_FALSE(written.contains("frame"));
}

TEST_CASE("nested tables: canonical() is what is written and compared", "[members]") {
    point zero{0, std::uint64_t{0}}, one{0, std::uint64_t{1}};
    CHECK(kd::members_equal(zero, one));
    json j;
    kd::write_members(j, zero);
    CHECK(j.dump() == R"({"weight":1,"x":0})");
}

TEST_CASE("operational notice: its table reads back what it writes, groups and all", "[members][H10]") {
    keyhook::operational_notice n;
    n.type = keyhook::notice_type::endpoint_disabled;
    n.at = keyhook::parse_timestamp("2026-03-14T09:00:02Z");
    n.webhook_name = "crm";
    n.fail_since = keyhook::parse_timestamp("2026-03-14T09:00:00Z");
    n.last_attempt_at = keyhook::parse_timestamp("2026-03-14T09:00:01Z");
    n.last_status = 410;
    const json j = n;
    CHECK_FALSE(j["data"].contains("msgId"));  // omitted while empty
    keyhook::operational_notice back;
    REQUIRE_FALSE(kd::read_members(j, "", back).has_value());
    CHECK(back == n);
    n.delivery = keyhook::parse_delivery_id("msg_0123456789abcdef0123456789abcdef");
    const json with_id = n;
    REQUIRE_FALSE(kd::read_members(with_id, "", back).has_value());
    CHECK(back == n);
    back.last_status = 500;
    CHECK(back != n);

    auto bad = with_id;
    bad["data"]["lastAttempt"]["responseStatusCode"] = 99;
    const auto e = kd::read_members(bad, "notice", back);
    REQUIRE(e.has_value());
    CHECK(e->path == "notice.data.lastAttempt.responseStatusCode");
    CHECK(e->code == errc::out_of_range);
}
