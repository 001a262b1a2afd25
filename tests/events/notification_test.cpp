#include "keyhook/notification.hpp"
#include "keyhook/received_notification.hpp"

#include <catch2/catch.hpp>
#include <date/date.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using keyhook::event_type;
using keyhook::notification;
using keyhook::timestamp;

namespace {
timestamp at(int y, unsigned m, unsigned d, int hh, int mm, int ss, long long us) {
    return timestamp{date::sys_days{date::year{y} / date::month{m} / date::day{d}}.time_since_epoch() +
                     std::chrono::hours{hh} + std::chrono::minutes{mm} + std::chrono::seconds{ss} +
                     std::chrono::microseconds{us}};
}

notification sample() {
    notification n;
    n.folder_name = "Loans";
    n.service_name = "Pricing";
    n.entity_id = "3f2b8c1e-0d4a-4c55-9b1e-2a7d6e8f9c10";
    n.user_action = event_type::AddProduct;
    n.audit_type = "Product";
    n.file_name = "pricing.xlsx";
    n.service_version_id = "v-12";
    n.tenant = "acme";
    n.request_time = at(2026, 3, 4, 5, 6, 7, 123456);
    return n;
}

// The reference: the same document built member by member with nlohmann's
// ordered_json, written independently of keyhook's to_json.
std::string reference_dump(const notification& n) {
    nlohmann::ordered_json j;
    j["FolderName"] = n.folder_name;
    j["ServiceName"] = n.service_name;
    j["EntityId"] = n.entity_id;
    j["UserAction"] = std::string(keyhook::to_string(n.user_action));
    j["AuditType"] = n.audit_type;
    nlohmann::ordered_json data;
    data["ProductName"] = n.folder_name;
    data["EngineName"] = n.service_name;
    data["FileName"] = n.file_name;
    data["ProductId"] = n.entity_id;
    data["ServiceVersionId"] = n.service_version_id;
    j["Data"] = data;
    j["Tenant"] = n.tenant;
    j["RequestTimeStamp"] = keyhook::format_timestamp_millis(n.request_time);
    j["RevisionId"] = nullptr;
    return j.dump();
}

void append_code_point(std::string& s, std::uint32_t cp) {
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else if (cp < 0x800) {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        s += static_cast<char>(0xE0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        s += static_cast<char>(0xF0 | (cp >> 18));
        s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// Random valid UTF-8 mixing everything the escaper treats differently.
std::string random_text(std::mt19937& rng) {
    std::uniform_int_distribution<int> length(0, 24), kind(0, 9);
    std::uniform_int_distribution<std::uint32_t> ascii(0x20, 0x7F), control(0x00, 0x1F), two(0x80, 0x7FF),
        three(0x800, 0xFFFF), four(0x10000, 0x10FFFF);
    std::string s;
    const int n = length(rng);
    for (int i = 0; i < n; ++i) {
        switch (kind(rng)) {
            case 0: s += '"'; break;
            case 1: s += '\\'; break;
            case 2: append_code_point(s, control(rng)); break;
            case 3: append_code_point(s, two(rng)); break;
            case 4: {
                std::uint32_t cp = three(rng);
                if (cp >= 0xD800 && cp <= 0xDFFF) cp -= 0x800;  // no surrogates
                append_code_point(s, cp);
                break;
            }
            case 5: append_code_point(s, four(rng)); break;
            case 6: s += '/'; break;
            default: append_code_point(s, ascii(rng)); break;
        }
    }
    return s;
}

std::string bytes(std::initializer_list<int> values) {
    std::string s;
    for (int v : values) s += static_cast<char>(static_cast<unsigned char>(v));
    return s;
}
}  // namespace

TEST_CASE("H6: a fixed event, byte for byte", "[H6][notification]") {
    const std::string expected =
        R"({"FolderName":"Loans","ServiceName":"Pricing","EntityId":"3f2b8c1e-0d4a-4c55-9b1e-2a7d6e8f9c10",)"
        R"("UserAction":"AddProduct","AuditType":"Product","Data":{"ProductName":"Loans","EngineName":"Pricing",)"
        R"("FileName":"pricing.xlsx","ProductId":"3f2b8c1e-0d4a-4c55-9b1e-2a7d6e8f9c10","ServiceVersionId":"v-12"},)"
        R"("Tenant":"acme","RequestTimeStamp":"2026-03-04T05:06:07.123Z","RevisionId":null})";
    CHECK(keyhook::notification_body(sample()) == expected);
    const auto r = keyhook::try_notification_body(sample());
    REQUIRE(r.has_value());
    CHECK(*r == expected);
}

TEST_CASE("H6: values not given are empty strings; RevisionId is null", "[H6][notification]") {
    notification n;
    n.user_action = event_type::EventsDataRetentionSucccess;
    n.request_time = at(2026, 1, 1, 0, 0, 0, 0);
    CHECK(keyhook::notification_body(n) ==
          R"({"FolderName":"","ServiceName":"","EntityId":"","UserAction":"EventsDataRetentionSucccess",)"
          R"("AuditType":"","Data":{"ProductName":"","EngineName":"","FileName":"","ProductId":"",)"
          R"("ServiceVersionId":""},"Tenant":"","RequestTimeStamp":"2026-01-01T00:00:00.000Z","RevisionId":null})");
}

TEST_CASE("H6: the Data twins always equal their top-level members", "[H6][notification]") {
    notification n = sample();
    n.folder_name = "Folder A";
    n.service_name = "Service B";
    n.entity_id = "id-C";
    const auto j = nlohmann::json::parse(keyhook::notification_body(n));
    CHECK(j["Data"]["ProductName"] == "Folder A");
    CHECK(j["Data"]["EngineName"] == "Service B");
    CHECK(j["Data"]["ProductId"] == "id-C");
    CHECK(j["FolderName"] == j["Data"]["ProductName"]);
    CHECK(j["ServiceName"] == j["Data"]["EngineName"]);
    CHECK(j["EntityId"] == j["Data"]["ProductId"]);
    // Every member but RevisionId is a string.
    for (const auto& item : j.items()) {
        INFO(item.key());
        if (item.key() == "RevisionId")
            CHECK(item.value().is_null());
        else if (item.key() == "Data")
            CHECK(item.value().is_object());
        else
            CHECK(item.value().is_string());
    }
    for (const auto& item : j["Data"].items()) CHECK(item.value().is_string());
}

TEST_CASE("H6: RequestTimeStamp has exactly 3 fraction digits", "[H6][T4][notification]") {
    auto stamp_of = [](timestamp t) {
        notification n = sample();
        n.request_time = t;
        return nlohmann::json::parse(keyhook::notification_body(n))["RequestTimeStamp"].get<std::string>();
    };
    CHECK(stamp_of(at(2026, 3, 4, 5, 6, 7, 0)) == "2026-03-04T05:06:07.000Z");
    CHECK(stamp_of(at(2026, 3, 4, 5, 6, 7, 1000)) == "2026-03-04T05:06:07.001Z");
    // Sub-millisecond digits are dropped, not rounded, on both sides of a millisecond.
    CHECK(stamp_of(at(2026, 3, 4, 5, 6, 7, 999)) == "2026-03-04T05:06:07.000Z");
    CHECK(stamp_of(at(2026, 3, 4, 5, 6, 7, 1001)) == "2026-03-04T05:06:07.001Z");
    CHECK(stamp_of(at(2026, 3, 4, 5, 6, 7, 999999)) == "2026-03-04T05:06:07.999Z");
    CHECK(stamp_of(at(2026, 3, 4, 23, 59, 59, 999999)) == "2026-03-04T23:59:59.999Z");
    CHECK(stamp_of(keyhook::max_timestamp) == "9999-12-31T23:59:59.999Z");
    CHECK(stamp_of(keyhook::min_timestamp) == "0001-01-01T00:00:00.000Z");
}

TEST_CASE("H6: escaping matches nlohmann::json::dump()", "[H6][notification]") {
    auto folder_json = [](const std::string& folder) {
        notification n = sample();
        n.folder_name = folder;
        const auto body = keyhook::notification_body(n);
        const std::string head = R"({"FolderName":")";
        REQUIRE(body.compare(0, head.size(), head) == 0);
        return body.substr(head.size(), body.find(R"(","ServiceName")") - head.size());
    };
    CHECK(folder_json("a\"b") == R"(a\"b)");
    CHECK(folder_json("a\\b") == R"(a\\b)");
    CHECK(folder_json("\b\f\n\r\t") == R"(\b\f\n\r\t)");
    CHECK(folder_json(bytes({0x00, 0x01, 0x0B, 0x1F})) == R"(\u0000\u0001\u000b\u001f)");
    CHECK(folder_json(bytes({0x20, 0x7F})) == bytes({0x20, 0x7F}));
    CHECK(folder_json("a/b") == "a/b");
    CHECK(folder_json("Caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "Caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
    for (int c = 0; c < 0x80; ++c) {
        INFO(c);
        const std::string one(1, static_cast<char>(c));
        CHECK(folder_json(one) == nlohmann::json(one).dump().substr(1, nlohmann::json(one).dump().size() - 2));
    }
}

TEST_CASE("H6: the direct writer equals an ordered_json dump over generated notifications", "[H6][notification]") {
    std::mt19937 rng(20260304);
    std::uniform_int_distribution<std::size_t> event(0, keyhook::event_type_count - 1);
    std::uniform_int_distribution<long long> micros(keyhook::min_timestamp.time_since_epoch().count(),
                                                    keyhook::max_timestamp.time_since_epoch().count());
    std::string buffer;
    for (int i = 0; i < 3000; ++i) {
        notification n;
        n.folder_name = random_text(rng);
        n.service_name = random_text(rng);
        n.entity_id = random_text(rng);
        n.user_action = keyhook::all_event_types()[event(rng)];
        n.audit_type = random_text(rng);
        n.file_name = random_text(rng);
        n.service_version_id = random_text(rng);
        n.tenant = random_text(rng);
        n.request_time = timestamp{std::chrono::microseconds{micros(rng)}};
        const std::string expected = reference_dump(n);
        INFO(expected);
        CHECK(keyhook::notification_body(n) == expected);
        nlohmann::ordered_json j = n;
        CHECK(j.dump() == expected);
        // Appending to a used buffer: the earlier bytes stay, the count is exact.
        buffer.assign("prefix");
        const auto written = keyhook::try_write_notification(buffer, n);
        REQUIRE(written.has_value());
        CHECK(*written == expected.size());
        CHECK(buffer == "prefix" + expected);
    }
}

TEST_CASE("H6: invalid UTF-8 is refused naming the field and the byte", "[H6][notification]") {
    struct field_case {
        std::string notification::*member;
        const char* path;
    };
    const field_case fields[] = {
        {&notification::folder_name, "FolderName"},  {&notification::service_name, "ServiceName"},
        {&notification::entity_id, "EntityId"},      {&notification::audit_type, "AuditType"},
        {&notification::file_name, "Data.FileName"}, {&notification::service_version_id, "Data.ServiceVersionId"},
        {&notification::tenant, "Tenant"},
    };
    for (const auto& f : fields) {
        INFO(f.path);
        notification n = sample();
        n.*(f.member) = "abc" + bytes({0xFF}) + "def";
        std::string out = "kept";
        const auto r = keyhook::try_write_notification(out, n);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == keyhook::errc::invalid_utf8);
        CHECK(r.error().path == f.path);
        CHECK(r.error().message == "invalid UTF-8 at byte 3");
        CHECK(r.error().what() == std::string(f.path) + ": invalid UTF-8 at byte 3");
        CHECK(out == "kept");
        CHECK_THROWS_AS(keyhook::notification_body(n), keyhook::exception);
        CHECK_THROWS_AS(keyhook::write_notification(out, n), keyhook::exception);
        CHECK(out == "kept");
        CHECK_FALSE(keyhook::try_notification_body(n).has_value());
    }
}

TEST_CASE("H6: UTF-8 well-formedness at every boundary, as nlohmann judges it", "[H6][notification]") {
    // Valid: the smallest and largest of each sequence length and around the surrogates.
    const std::vector<std::string> valid{
        bytes({0x7F}),
        bytes({0xC2, 0x80}),
        bytes({0xDF, 0xBF}),
        bytes({0xE0, 0xA0, 0x80}),
        bytes({0xED, 0x9F, 0xBF}),
        bytes({0xEE, 0x80, 0x80}),
        bytes({0xEF, 0xBF, 0xBF}),
        bytes({0xF0, 0x90, 0x80, 0x80}),
        bytes({0xF4, 0x8F, 0xBF, 0xBF}),
    };
    // Invalid, with the offset of the offending sequence after the "ab" prefix.
    const std::vector<std::string> invalid{
        bytes({0x80}),  // stray continuation
        bytes({0xBF}),
        bytes({0xC0, 0xAF}),  // overlong
        bytes({0xC1, 0xBF}),
        bytes({0xE0, 0x9F, 0xBF}),        // overlong three-byte
        bytes({0xED, 0xA0, 0x80}),        // a surrogate
        bytes({0xF0, 0x8F, 0xBF, 0xBF}),  // overlong four-byte
        bytes({0xF4, 0x90, 0x80, 0x80}),  // past U+10FFFF
        bytes({0xF5, 0x80, 0x80, 0x80}),
        bytes({0xFF}),
        bytes({0xC3}),  // truncated at the end
        bytes({0xE2, 0x82}),
        bytes({0xF0, 0x9F, 0x98}),
        bytes({0xC3, 0x41}),  // continuation missing
        bytes({0xE2, 0x41, 0x82}),
    };
    for (const auto& v : valid) {
        notification n = sample();
        n.tenant = "ab" + v + "cd";
        const auto r = keyhook::try_notification_body(n);
        REQUIRE(r.has_value());
        CHECK(*r == reference_dump(n));
    }
    for (const auto& v : invalid) {
        notification n = sample();
        n.tenant = "ab" + v;
        const auto r = keyhook::try_notification_body(n);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().path == "Tenant");
        CHECK(r.error().message == "invalid UTF-8 at byte 2");
        // nlohmann refuses the same strings.
        CHECK_THROWS_AS(reference_dump(n), nlohmann::json::type_error);
    }
}

TEST_CASE("H6: notification is a regular, printable value", "[H6][notification]") {
    const notification a = sample();
    notification b = a;
    CHECK(a == b);
    b.request_time += std::chrono::microseconds{1};
    CHECK(a != b);
    b = a;
    b.user_action = event_type::EditProduct;
    CHECK(a != b);
    std::ostringstream os;
    os << a;
    CHECK(os.str() ==
          "notification(AddProduct, tenant \"acme\", folder \"Loans\", service \"Pricing\", at "
          "2026-03-04T05:06:07.123Z)");
}

// ---------------------------------------------------------------------------
// H7: reading a received body.

TEST_CASE("H7: a written body reads back to the same notification", "[H7][H6][notification]") {
    std::mt19937 rng(7);
    for (int i = 0; i < 300; ++i) {
        notification n = sample();
        n.folder_name = random_text(rng);
        n.service_name = random_text(rng);
        n.entity_id = random_text(rng);
        n.file_name = random_text(rng);
        n.tenant = random_text(rng);
        n.user_action = keyhook::all_event_types()[static_cast<std::size_t>(i) % keyhook::event_type_count];
        n.request_time = at(2026, 3, 4, 5, 6, 7, (i % 1000) * 1000);  // whole milliseconds survive
        const auto r = keyhook::parse_notification(keyhook::notification_body(n));
        CHECK(r.mismatches.empty());
        CHECK(r.event == n.user_action);
        CHECK(keyhook::to_notification(r) == n);
    }
}

namespace {
// try_parse_notification and the general reader alone: the same value, or the same error.
void check_same_outcome(std::string_view body, const keyhook::body_limits& limits = {}) {
    const auto read = keyhook::try_parse_notification(body, limits);
    const auto general = keyhook::detail::parse_received_body(body, limits.max_depth);
    REQUIRE(read.has_value() == general.has_value());
    if (read)
        CHECK(*read == *general);
    else
        CHECK(read.error() == general.error());
}
}  // namespace

TEST_CASE("H7: the platform's own body is read in one pass, exactly as the parser reads it", "[H7][H6][notification]") {
    std::mt19937 rng(20261127);
    std::uniform_int_distribution<int> op(0, 3), byte(0, 255);
    const char interesting[] = {'"', '\\', '{', '}', ',', ':', ' ', 'n', '\0', '\x7f', '\xc3', '\xa9', '\xed', '\xff'};
    std::uniform_int_distribution<std::size_t> pick(0, sizeof interesting - 1);
    // Every other body without what needs an escape (raw UTF-8 and DEL stay).
    const auto text = [&rng](bool plain) {
        std::string t = random_text(rng);
        if (plain)
            t.erase(
                std::remove_if(t.begin(), t.end(),
                               [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; }),
                t.end());
        return t;
    };
    int read_in_one_pass = 0;
    for (int i = 0; i < 2000; ++i) {
        notification n = sample();
        const bool plain = i % 4 < 2;
        n.folder_name = text(plain);
        n.service_name = text(plain);
        n.file_name = text(plain);
        n.tenant = text(plain);
        n.user_action = keyhook::all_event_types()[static_cast<std::size_t>(i) % keyhook::event_type_count];
        const std::string body = keyhook::notification_body(n);
        INFO(body);
        // Values that need no escape (raw UTF-8 and DEL included) are read in one pass.
        keyhook::received_notification fast;
        const bool one_pass = keyhook::detail::read_canonical_notification(body, fast);
        CHECK(one_pass == (body.find('\\') == std::string::npos));
        if (one_pass) {
            ++read_in_one_pass;
            CHECK(fast == keyhook::detail::parse_received_body(body, 16).value());
        }
        check_same_outcome(body);
        // One edit anywhere, with bytes that matter to either reader.
        std::string edited = body;
        std::uniform_int_distribution<std::size_t> where(0, edited.size() - 1);
        const std::size_t at = where(rng);
        const char c = i % 2 ? interesting[pick(rng)] : static_cast<char>(byte(rng));
        switch (op(rng)) {
            case 0: edited[at] = c; break;
            case 1: edited.insert(at, 1, c); break;
            case 2: edited.erase(at, 1); break;
            default: edited.insert(at, edited.substr(at, 8)); break;
        }
        INFO(edited);
        check_same_outcome(edited);
        if (keyhook::detail::read_canonical_notification(edited, fast))
            CHECK(fast == keyhook::detail::parse_received_body(edited, 16).value());
    }
    CHECK(read_in_one_pass > 100);  // the generator reaches the one-pass reader
}

TEST_CASE("H7: the one-pass reader keeps the depth limit and the Data twins' rules", "[H7][notification]") {
    const std::string body = keyhook::notification_body(sample());
    keyhook::body_limits limits;
    limits.max_depth = 2;  // the body nests 2 deep: allowed at 2, refused at 1
    CHECK(keyhook::try_parse_notification(body, limits).has_value());
    check_same_outcome(body, limits);
    limits.max_depth = 1;
    const auto too_deep = keyhook::try_parse_notification(body, limits);
    REQUIRE_FALSE(too_deep.has_value());
    CHECK(too_deep.error().code == keyhook::errc::limit_exceeded);
    check_same_outcome(body, limits);

    // A twin that differs is listed; an empty top-level member takes its twin.
    const auto replaced = [](std::string text, const std::string& from, const std::string& to) {
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        return text.replace(at, from.size(), to);
    };
    const std::string id = "\"EntityId\":\"" + sample().entity_id + '"';
    const std::string twins =
        replaced(replaced(body, "\"ProductName\":\"Loans\"", "\"ProductName\":\"Other\""), id, "\"EntityId\":\"\"");
    INFO(twins);
    keyhook::received_notification r;
    REQUIRE(keyhook::detail::read_canonical_notification(twins, r));
    CHECK(r.mismatches == std::vector<std::string>{"Data.ProductName"});
    CHECK(r.entity_id == sample().entity_id);
    check_same_outcome(twins);
    // RevisionId other than null, white space, another member order: the parser reads them.
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"RevisionId\":null", "\"RevisionId\":7"},
                                   {"{\"FolderName\"", "{ \"FolderName\""},
                                   {"\"Tenant\":\"acme\",", ""}}) {
        std::string other = replaced(body, from, to);
        if (to.empty()) other = replaced(other, "\"RevisionId\"", "\"Tenant\":\"acme\",\"RevisionId\"");
        INFO(other);
        CHECK_FALSE(keyhook::detail::read_canonical_notification(other, r));
        check_same_outcome(other);
        CHECK(keyhook::try_parse_notification(other)->tenant == "acme");
    }
}

TEST_CASE("H7: unknown members ignored, missing and null ones empty, RevisionId ignored", "[H7][notification]") {
    const auto r = keyhook::parse_notification(
        R"({"UserAction":"DeleteProduct","Extra":{"deep":[1,2,3]},"Tenant":null,"RevisionId":42,)"
        R"("Data":{"Unknown":true,"FileName":"f.xlsx"}})");
    CHECK(r.user_action == "DeleteProduct");
    CHECK(r.event == event_type::DeleteProduct);
    CHECK(r.folder_name.empty());
    CHECK(r.service_name.empty());
    CHECK(r.entity_id.empty());
    CHECK(r.audit_type.empty());
    CHECK(r.tenant.empty());
    CHECK(r.file_name == "f.xlsx");
    CHECK(r.service_version_id.empty());
    CHECK(r.request_time_text.empty());
    CHECK_FALSE(r.request_time.has_value());
    CHECK(r.mismatches.empty());

    const auto empty = keyhook::parse_notification("{}");
    CHECK(empty == keyhook::received_notification{});
    CHECK(keyhook::parse_notification(R"({"Data":null,"RevisionId":"r1"})") == keyhook::received_notification{});
}

TEST_CASE("H7: unknown members are skipped, not held: a large body of them reads", "[H7][J3][J1][notification]") {
    // An earlier reader built every unknown member into a DOM first and refused
    // a 96 KB body of small ones under J3's memory budget.
    std::string many = R"({"FolderName":"F")";
    for (int i = 0; many.size() < 96 * 1024; ++i) many += ",\"u" + std::to_string(i) + "\":" + std::to_string(i);
    many += R"(,"Data":{"FileName":"f.xlsx"}})";
    const auto r = keyhook::try_parse_notification(many);
    REQUIRE(r.has_value());
    CHECK(r->folder_name == "F");
    CHECK(r->file_name == "f.xlsx");

    std::string zeros = R"({"x":[0)";
    while (zeros.size() < 96 * 1024) zeros += ",0";
    zeros += R"(],"Tenant":"t"})";
    const auto z = keyhook::try_parse_notification(zeros);
    REQUIRE(z.has_value());
    CHECK(z->tenant == "t");

    // A skipped value is still read as JSON: J1 and J2 hold inside it, with paths.
    const auto repeated = keyhook::try_parse_notification(R"({"x":{"a":1,"b":[],"a":2},"FolderName":"F"})");
    REQUIRE_FALSE(repeated.has_value());
    CHECK(repeated.error().code == keyhook::errc::duplicate_member);
    CHECK(repeated.error().path == "x.a");
    const auto repeated_field = keyhook::try_parse_notification(R"({"FolderName":"A","FolderName":"B"})");
    REQUIRE_FALSE(repeated_field.has_value());
    CHECK(repeated_field.error().code == keyhook::errc::duplicate_member);
    CHECK(repeated_field.error().path == "FolderName");
    const auto overflow = keyhook::try_parse_notification(R"({"x":{"y":[1,2e999]}})");
    REQUIRE_FALSE(overflow.has_value());
    CHECK(overflow.error().code == keyhook::errc::out_of_range);
    CHECK(overflow.error().path == "x.y[1]");

    // Members are read by name at their own level only.
    const auto nested = keyhook::parse_notification(
        R"({"x":{"FolderName":"no","Data":{"FileName":"no"}},"Data":{"y":{"FileName":"no"},"FileName":"yes",)"
        R"("z":[{"ServiceVersionId":"no"}],"ServiceVersionId":"v2"},"FolderName":"yes"})");
    CHECK(nested.folder_name == "yes");
    CHECK(nested.file_name == "yes");
    CHECK(nested.service_version_id == "v2");
    CHECK(nested.service_name.empty());
}

TEST_CASE("H7: malformed text is reported before a member of the wrong type", "[H7][notification]") {
    const auto r = keyhook::try_parse_notification(R"({"FolderName":5,"x":)");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == keyhook::errc::syntax_error);
    // Of several wrong types, the first in the order of the body's members (spec 6.2).
    const auto two = keyhook::try_parse_notification(R"({"Data":{"FileName":1},"Tenant":true,"FolderName":[]})");
    REQUIRE_FALSE(two.has_value());
    CHECK(two.error().what() == "FolderName: expected a string, got array");
    CHECK(keyhook::try_parse_notification("null").error().what() == "expected a JSON object, got null");
    CHECK(keyhook::try_parse_notification("\"text\"").error().what() == "expected a JSON object, got string");
    CHECK(keyhook::try_parse_notification("1").error().what() == "expected a JSON object, got number");
}

TEST_CASE("H7: an unknown UserAction is kept as sent", "[H7][H3][notification]") {
    const auto r =
        keyhook::parse_notification(R"({"UserAction":"AddProducts","RequestTimeStamp":"2026-03-04T05:06:07.123Z"})");
    CHECK(r.user_action == "AddProducts");
    CHECK_FALSE(r.event.has_value());
    REQUIRE(r.request_time.has_value());
    CHECK(*r.request_time == at(2026, 3, 4, 5, 6, 7, 123000));
    const auto n = keyhook::try_to_notification(r);
    REQUIRE_FALSE(n.has_value());
    CHECK(n.error().code == keyhook::errc::unknown_event);
    CHECK(n.error().what() == "UserAction: unknown event type \"AddProducts\"; did you mean \"AddProduct\"?");
}

TEST_CASE("H7: an unreadable RequestTimeStamp is kept as sent", "[H7][T1][notification]") {
    const auto r = keyhook::parse_notification(R"({"UserAction":"AddProduct","RequestTimeStamp":"yesterday"})");
    CHECK(r.request_time_text == "yesterday");
    CHECK_FALSE(r.request_time.has_value());
    const auto n = keyhook::try_to_notification(r);
    REQUIRE_FALSE(n.has_value());
    CHECK(n.error().code == keyhook::errc::invalid_timestamp);
    CHECK(n.error().path == "RequestTimeStamp");
    // Any T1 form is read, including other offsets and more digits.
    const auto other = keyhook::parse_notification(R"({"RequestTimeStamp":"2026-03-04T07:06:07.1234567+02:00"})");
    REQUIRE(other.request_time.has_value());
    CHECK(*other.request_time == at(2026, 3, 4, 5, 6, 7, 123456));
}

TEST_CASE("H7: the top-level member wins over its Data twin; disagreements are listed", "[H7][H6][notification]") {
    SECTION("twins agree") {
        const auto r = keyhook::parse_notification(
            R"({"FolderName":"F","Data":{"ProductName":"F","EngineName":"","ProductId":"1"},"EntityId":"1"})");
        CHECK(r.folder_name == "F");
        CHECK(r.entity_id == "1");
        CHECK(r.mismatches.empty());
    }
    SECTION("top level missing or empty: the twin fills in") {
        const auto r = keyhook::parse_notification(
            R"({"FolderName":"","Data":{"ProductName":"F","EngineName":"S","ProductId":"1"}})");
        CHECK(r.folder_name == "F");
        CHECK(r.service_name == "S");
        CHECK(r.entity_id == "1");
        CHECK(r.mismatches.empty());
    }
    SECTION("both present and different: top level kept, Data path listed") {
        const auto r = keyhook::parse_notification(R"({"FolderName":"F","ServiceName":"S","EntityId":"1",)"
                                                   R"("Data":{"ProductName":"G","EngineName":"S","ProductId":"2"}})");
        CHECK(r.folder_name == "F");
        CHECK(r.service_name == "S");
        CHECK(r.entity_id == "1");
        CHECK(r.mismatches == std::vector<std::string>{"Data.ProductName", "Data.ProductId"});
    }
    SECTION("the twin empty: no disagreement") {
        const auto r = keyhook::parse_notification(R"({"FolderName":"F","Data":{"ProductName":""}})");
        CHECK(r.folder_name == "F");
        CHECK(r.mismatches.empty());
    }
}

TEST_CASE("H7: wrong JSON types are errors with paths", "[H7][notification]") {
    auto error_of = [](const std::string& body) {
        const auto r = keyhook::try_parse_notification(body);
        REQUIRE_FALSE(r.has_value());
        CHECK_THROWS_AS(keyhook::parse_notification(body), keyhook::exception);
        return r.error();
    };
    CHECK(error_of(R"({"Data":{"FileName":5}})").what() == "Data.FileName: expected a string, got number");
    CHECK(error_of(R"({"Data":{"ProductName":["x"]}})").what() == "Data.ProductName: expected a string, got array");
    CHECK(error_of(R"({"FolderName":true})").what() == "FolderName: expected a string, got boolean");
    CHECK(error_of(R"({"UserAction":{}})").what() == "UserAction: expected a string, got object");
    CHECK(error_of(R"({"RequestTimeStamp":1700000000})").what() == "RequestTimeStamp: expected a string, got number");
    CHECK(error_of(R"({"Data":"x"})").what() == "Data: expected an object, got string");
    CHECK(error_of(R"({"Data":[]})").code == keyhook::errc::wrong_type);
    CHECK(error_of("[]").what() == "expected a JSON object, got array");
    CHECK(error_of("\"text\"").code == keyhook::errc::wrong_type);
}

TEST_CASE("H7: a body that is not JSON is a syntax error that quotes nothing", "[H7][notification]") {
    for (const std::string body :
         {"", "{", "{\"FolderName\":\"secret-ish\"", "{} trailing", "not json", "{\"a\":\"\xFF\"}"}) {
        INFO(body);
        const auto r = keyhook::try_parse_notification(body);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == keyhook::errc::syntax_error);
        CHECK(r.error().message.rfind("expected a JSON body, syntax error at byte ", 0) == 0);
        CHECK(r.error().message.find("secret-ish") == std::string::npos);
    }
}

TEST_CASE("H7: body size and depth limits, both sides", "[H7][notification]") {
    keyhook::body_limits limits;
    limits.max_bytes = 64;
    std::string body = R"({"Tenant":"")";
    body.insert(body.size() - 1, std::string(64 - body.size() - 1, 't'));
    body += '}';
    REQUIRE(body.size() == 64);
    CHECK(keyhook::try_parse_notification(body, limits).has_value());
    body.insert(11, "t");
    REQUIRE(body.size() == 65);
    const auto too_big = keyhook::try_parse_notification(body, limits);
    REQUIRE_FALSE(too_big.has_value());
    CHECK(too_big.error().code == keyhook::errc::limit_exceeded);

    limits = keyhook::body_limits{};
    limits.max_depth = 4;
    // The body object is depth 1; nesting to depth 4 is allowed, 5 is not.
    CHECK(keyhook::try_parse_notification(R"({"x":[[{"y":1}]]})", limits).has_value());
    const auto too_deep = keyhook::try_parse_notification(R"({"x":[[{"y":[1]}]]})", limits);
    REQUIRE_FALSE(too_deep.has_value());
    CHECK(too_deep.error().code == keyhook::errc::limit_exceeded);
    // A pathological nesting far past the default limit is refused, not crashed on.
    const std::string deep = "{\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
    CHECK(keyhook::try_parse_notification(deep).error().code == keyhook::errc::limit_exceeded);
}

TEST_CASE("H9: the depth is counted before the body is parsed", "[H9][H7][J3][notification]") {
    keyhook::body_limits limits;
    limits.max_depth = 3;
    // Malformed at byte 5, then 4 deep: a parser would stop at the bad token;
    // the count before it refuses the depth.
    const auto deep = keyhook::try_parse_notification(R"({"a":x[[[1]]]})", limits);
    REQUIRE_FALSE(deep.has_value());
    CHECK(deep.error().code == keyhook::errc::limit_exceeded);
    CHECK(deep.error().message == "body nests deeper than the limit of 3");
    // 3 deep, the same malformed token: now the parser reports it.
    const auto malformed = keyhook::try_parse_notification(R"({"a":x[[1]]})", limits);
    REQUIRE_FALSE(malformed.has_value());
    CHECK(malformed.error().code == keyhook::errc::syntax_error);
    // Brackets inside strings, escaped quotes included, do not count.
    CHECK(keyhook::try_parse_notification(R"({"Tenant":"[[[\"{{{{","x":[[1]]})", limits).has_value());
    const auto four = keyhook::try_parse_notification(R"({"Tenant":"[[[\"{{{{","x":[[[1]]]})", limits);
    REQUIRE_FALSE(four.has_value());
    CHECK(four.error().code == keyhook::errc::limit_exceeded);
}

TEST_CASE("H7: received_notification is a regular, printable value", "[H7][notification]") {
    const auto a = keyhook::parse_notification(
        R"({"UserAction":"Nope","Tenant":"acme","FolderName":"F","Data":{"ProductName":"G"}})");
    auto b = a;
    CHECK(a == b);
    b.tenant = "other";
    CHECK(a != b);
    std::ostringstream os;
    os << a;
    CHECK(os.str() ==
          "received_notification(\"Nope\" (unknown), tenant \"acme\", folder \"F\", service \"\", at \"\", "
          "Data.ProductName differs)");
}
