// keyhook/members.hpp as a host uses it: a record of the test's own,
// described once by keyhook::members_of, read with JSON paths, written and
// compared through the table.
#include "keyhook/members.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace host {

enum class priority { low, normal, urgent };

struct parcel {
    std::string label;
    std::uint64_t grams = 0;
};

struct shipment {
    std::string id;
    std::optional<std::string> note;
    priority level = priority::normal;
    keyhook::timestamp sent_at{};
    std::vector<parcel> parcels;
    std::vector<std::string> tags;
};

}  // namespace host

template <>
struct keyhook::detail::enum_names<host::priority> {
    static constexpr std::string_view values[] = {"low", "normal", "urgent"};
};

template <>
struct keyhook::members_of<host::parcel> {
    static constexpr bool closed = true;  // a misspelt member is refused, not ignored
    static constexpr auto rows =
        std::make_tuple(row<text_form>("label", &host::parcel::label, presence::required),
                        row<whole_form<std::uint64_t, 1, 30000>>("grams", &host::parcel::grams, presence::required));
};
static_assert(keyhook::members_complete<host::parcel>());

template <>
struct keyhook::members_of<host::shipment> {
    using s = host::shipment;
    static constexpr auto rows = make_rows(
        row<text_form>("id", &s::id, presence::required), row<text_form>("note", &s::note, presence::optional),
        row<named_enum_form<host::priority>>("priority", &s::level, presence::required),
        row<time_form>("sentAt", &s::sent_at, presence::required),
        row<list_form<record_form<host::parcel>, 3>>("parcels", &s::parcels, presence::omitted),
        row<string_list_form>("tags", &s::tags, presence::optional));
};
static_assert(keyhook::members_complete<host::shipment>());

namespace {

const char* const good_shipment = R"({"id": "s-1", "priority": "urgent", "sentAt": "2024-05-01T10:00:00Z",
    "parcels": [{"label": "books", "grams": 1200}], "tags": ["fragile"], "unknown": "ignored"})";

}  // namespace

TEST_CASE("L2, T4: a host's record reads, writes and compares through keyhook::members_of", "[members][L2][T4]") {
    const auto j = nlohmann::json::parse(good_shipment);
    const auto s = keyhook::try_read_record<host::shipment>(j, "shipments[0]");
    REQUIRE(s);
    CHECK(s->id == "s-1");
    CHECK_FALSE(s->note);
    CHECK(s->level == host::priority::urgent);
    REQUIRE(s->parcels.size() == 1);
    CHECK(s->parcels[0].grams == 1200);

    nlohmann::ordered_json out;
    keyhook::write_record(out, *s);
    CHECK(out.dump() == R"({"id":"s-1","note":null,"priority":"urgent","sentAt":"2024-05-01T10:00:00.000Z",)"
                        R"("parcels":[{"label":"books","grams":1200}],"tags":["fragile"]})");
    const auto back = keyhook::try_read_record<host::shipment>(out);
    REQUIRE(back);
    CHECK(keyhook::records_equal(*back, *s));
    auto other = *s;
    other.parcels[0].grams = 1201;
    CHECK_FALSE(keyhook::records_equal(other, *s));
}

TEST_CASE("L2, J2: a host's record is refused at the first fault, with its JSON path and why", "[members][L2][J2]") {
    struct bad_case {
        const char* change;  // a member replaced, as JSON
        const char* member;
        keyhook::errc code;
        const char* path;
        const char* message;
    };
    const bad_case cases[] = {
        {"null", "id", keyhook::errc::missing_member, "shipments[2].id", "required member is missing"},
        {"5", "note", keyhook::errc::wrong_type, "shipments[2].note", "expected a string, got number"},
        {R"("soon")", "priority", keyhook::errc::invalid_value, "shipments[2].priority",
         R"(expected "low", "normal" or "urgent", got "soon")"},
        {R"("yesterday")", "sentAt", keyhook::errc::invalid_timestamp, "shipments[2].sentAt",
         R"(expected an ISO 8601 timestamp, got "yesterday")"},
        {R"([{"label": "a", "grams": 0}])", "parcels", keyhook::errc::out_of_range, "shipments[2].parcels[0].grams",
         "expected a whole number from 1 to 30000, got 0"},
        {R"([{"label": "a", "gram": 5}])", "parcels", keyhook::errc::invalid_value, "shipments[2].parcels[0].gram",
         R"(is not a member keyhook knows here; expected "label", "grams")"},
        {R"([{}, {}, {}, {}])", "parcels", keyhook::errc::limit_exceeded, "shipments[2].parcels",
         "4 entries; at most 3 are kept"},
        {R"(["a", 1])", "tags", keyhook::errc::wrong_type, "shipments[2].tags[1]", "expected a string, got number"},
    };
    for (const auto& c : cases) {
        auto j = nlohmann::json::parse(good_shipment);
        j[c.member] = nlohmann::json::parse(c.change);
        INFO(j.dump());
        const auto r = keyhook::try_read_record<host::shipment>(j, "shipments[2]");
        REQUIRE_FALSE(r);
        CHECK(r.error().code == c.code);
        CHECK(r.error().path == c.path);
        CHECK(r.error().message == c.message);
    }
    const auto not_object = keyhook::try_read_record<host::shipment>(nlohmann::json::array(), "shipments[2]");
    REQUIRE_FALSE(not_object);
    CHECK(not_object.error().message == "expected an object, got array");
}
