#include "keyhook/received_notification.hpp"
#include "keyhook/receiving.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

using keyhook::errc;
using keyhook::http_request;
using keyhook::key_source;
using keyhook::secret;

namespace {
const std::string the_key = "6f1d0c2a-7b5e-4e8f-9a3d-2c1b0e9f8a7d";
const std::string other_key = "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d";

const std::string body =
    R"({"FolderName":"Loans","ServiceName":"Pricing","EntityId":"e1","UserAction":"PublishEngine",)"
    R"("AuditType":"ProductEngine","Data":{"ProductName":"Loans","EngineName":"Pricing","FileName":"p.xlsx",)"
    R"("ProductId":"e1","ServiceVersionId":"v7"},"Tenant":"acme","RequestTimeStamp":"2026-03-04T05:06:07.123Z",)"
    R"("RevisionId":null})";

http_request with_header(const std::string& name, const std::string& value, const std::string& url = "/hook") {
    return http_request{"POST", url, {{name, value, true}}, body};
}

http_request with_query(const std::string& url) { return http_request{"POST", url, {}, body}; }

// No refusal may show either key, whole or in part (M3).
void check_no_key_in(const keyhook::error& e) {
    const std::string text = e.what();
    for (const auto& key : {the_key, other_key}) {
        CHECK(text.find(key) == std::string::npos);
        CHECK(text.find(key.substr(0, 8)) == std::string::npos);
    }
}
}  // namespace

TEST_CASE("H7: only POST is accepted (spec 4.4)", "[H7][receiving]") {
    auto request = with_header("x-api-key", the_key);
    CHECK(keyhook::try_check_method(request).has_value());
    for (const char* method : {"GET", "PUT", "PATCH", "DELETE", "post", "Post", "POST ", ""}) {
        INFO(method);
        request.method = method;
        const auto r = keyhook::try_check_method(request);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::method_not_allowed);
        CHECK(r.error().path == "method");
        CHECK(r.error().message == "expected POST, got " + keyhook::detail::quote_input(method));
        CHECK_THROWS_AS(keyhook::check_method(request), keyhook::exception);
    }
}

TEST_CASE("H7: the key from header x-api-key, name case-insensitive", "[H7][receiving]") {
    for (const char* name : {"x-api-key", "X-API-KEY", "X-Api-Key"}) {
        INFO(name);
        const auto k = keyhook::extract_api_key(with_header(name, the_key));
        CHECK(k.key.reveal() == the_key);
        CHECK(k.source == key_source::header);
    }
    // Surrounding spaces and tabs are not part of the value.
    CHECK(keyhook::extract_api_key(with_header("x-api-key", " \t" + the_key + " ")).key.reveal() == the_key);
    // Other names do not count.
    for (const char* name : {"x-api-keys", "api-key", "x_api_key", "x-api-ke", "x-synthetic-key"}) {
        INFO(name);
        const auto r = keyhook::try_extract_api_key(with_header(name, the_key));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::unauthorized);
    }
}

TEST_CASE("H7: the key from query parameter api_key, percent-decoded", "[H7][receiving]") {
    const std::vector<std::string> urls{
        "https://example.com/hook?api_key=" + the_key,
        "/hook?a=1&api_key=" + the_key + "&b=2",
        "api_key=" + the_key,
        "/hook?api%5Fkey=" + the_key,
        "/hook?api_key=" + the_key + "#frag",
    };
    for (const auto& url : urls) {
        INFO(url);
        const auto k = keyhook::extract_api_key(with_query(url));
        CHECK(k.key.reveal() == the_key);
        CHECK(k.source == key_source::query);
    }
    CHECK(keyhook::extract_api_key(with_query("/hook?api_key=a%2Bb%20c+d")).key.reveal() == "a+b c d");
    CHECK(keyhook::extract_api_key(with_query("/hook?api_key=" + keyhook::percent_encode("k&=?#%+ey"))).key.reveal() ==
          "k&=?#%+ey");
    // Not the parameter: other names, the fragment, the path.
    for (const std::string url : {"/hook?xapi_key=abc", "/hook?api_keys=abc", "/hook#api_key=abc", "/api_key=abc",
                                  "https://h/api_key=abc", "/hook?api_key", "/hook?api_key="}) {
        INFO(url);
        const auto r = keyhook::try_extract_api_key(with_query(url));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::unauthorized);
    }
}

TEST_CASE("H7: malformed percent-encoding of api_key is refused", "[H7][receiving]") {
    for (const std::string url : {"/hook?api_key=%zz", "/hook?api_key=abc%4", "/hook?api_key=abc%"}) {
        INFO(url);
        const auto r = keyhook::try_extract_api_key(with_query(url));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_parameter);
        CHECK(r.error().path == "api_key");
    }
    CHECK(keyhook::try_extract_api_key(with_query("/hook?api_key=abc%41")).has_value());
}

TEST_CASE("H7: header and query both present: the same key is accepted, different keys refused", "[H7][receiving]") {
    const auto same = keyhook::extract_api_key(with_header("x-api-key", the_key, "/hook?api_key=" + the_key));
    CHECK(same.key.reveal() == the_key);
    CHECK(same.source == key_source::header_and_query);

    // Differing in the last character only, or in length only.
    for (const auto& query_key : std::vector<std::string>{other_key, the_key.substr(0, the_key.size() - 1) + "e",
                                                          the_key + "0", the_key.substr(0, the_key.size() - 1)}) {
        INFO(query_key);
        const auto r = keyhook::try_extract_api_key(with_header("x-api-key", the_key, "/hook?api_key=" + query_key));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::conflicting_keys);
        CHECK(r.error().path == "api_key");
        CHECK(r.error().what() == "api_key: differs from header x-api-key; send the key once");
        check_no_key_in(r.error());
        CHECK(r.error().what().find(query_key) == std::string::npos);
        CHECK_THROWS_AS(keyhook::extract_api_key(with_header("x-api-key", the_key, "/hook?api_key=" + query_key)),
                        keyhook::exception);
    }
}

TEST_CASE("H7: a repeated header or parameter must repeat the same key", "[H7][receiving]") {
    http_request twice = with_header("x-api-key", the_key);
    twice.headers.push_back({"X-Api-Key", the_key, true});
    CHECK(keyhook::extract_api_key(twice).key.reveal() == the_key);
    twice.headers.back().value = other_key;
    const auto r = keyhook::try_extract_api_key(twice);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::conflicting_keys);
    CHECK(r.error().path == "x-api-key");
    check_no_key_in(r.error());

    CHECK(keyhook::extract_api_key(with_query("/h?api_key=" + the_key + "&api_key=" + the_key)).key.reveal() ==
          the_key);
    const auto q = keyhook::try_extract_api_key(with_query("/h?api_key=" + the_key + "&api_key=" + other_key));
    REQUIRE_FALSE(q.has_value());
    CHECK(q.error().code == errc::conflicting_keys);
    CHECK(q.error().path == "api_key");
    check_no_key_in(q.error());
}

TEST_CASE("H7: no key, or only empty ones, is unauthorized", "[H7][receiving]") {
    for (const auto& request : {with_query("/hook"), with_query("/hook?other=1"), with_header("x-api-key", ""),
                                with_header("x-api-key", "  "), with_header("x-api-key", "", "/hook?api_key=")}) {
        const auto r = keyhook::try_extract_api_key(request);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::unauthorized);
        CHECK(r.error().what() == "x-api-key: no API key: expected header x-api-key or query parameter api_key");
    }
    // An empty header next to a query key: the query key is the key.
    const auto k = keyhook::extract_api_key(with_header("x-api-key", "", "/hook?api_key=" + the_key));
    CHECK(k.source == key_source::query);
}

TEST_CASE("H7: the key is checked against the expected one", "[H7][receiving]") {
    const secret expected(the_key);
    CHECK(keyhook::authenticate(with_header("x-api-key", the_key), expected) == key_source::header);
    CHECK(keyhook::authenticate(with_query("/hook?api_key=" + the_key), expected) == key_source::query);

    for (const auto& wrong :
         std::vector<std::string>{other_key, the_key.substr(0, the_key.size() - 1) + "e", "0" + the_key.substr(1),
                                  the_key + "0", the_key.substr(0, the_key.size() - 1)}) {
        INFO(wrong);
        const auto by_header = keyhook::try_authenticate(with_header("x-api-key", wrong), expected);
        REQUIRE_FALSE(by_header.has_value());
        CHECK(by_header.error().code == errc::unauthorized);
        CHECK(by_header.error().what() == "x-api-key: the API key does not match");
        check_no_key_in(by_header.error());

        const auto by_query = keyhook::try_authenticate(with_query("/hook?api_key=" + wrong), expected);
        REQUIRE_FALSE(by_query.has_value());
        CHECK(by_query.error().what() == "api_key: the API key does not match");
        CHECK_THROWS_AS(keyhook::authenticate(with_query("/hook?api_key=" + wrong), expected), keyhook::exception);
    }
    // Case matters in keys.
    std::string upper = the_key;
    for (auto& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    CHECK_FALSE(keyhook::try_authenticate(with_header("x-api-key", upper), expected).has_value());
}

TEST_CASE("H7: a receiver without an expected key refuses everything", "[H7][receiving]") {
    const auto r = keyhook::try_authenticate(with_header("x-api-key", the_key), secret());
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_key);
    CHECK(r.error().path == "expected_key");
    // Not even an empty-looking presented key gets through.
    CHECK_FALSE(keyhook::try_authenticate(with_header("x-api-key", ""), secret()).has_value());
}

TEST_CASE("H7: receive_notification checks method, then key, then body", "[H7][H6][receiving]") {
    const secret expected(the_key);
    SECTION("accepted") {
        const auto n = keyhook::receive_notification(with_header("X-API-KEY", the_key), expected);
        CHECK(n.event == keyhook::event_type::PublishEngine);
        CHECK(n.folder_name == "Loans");
        CHECK(n.service_name == "Pricing");
        CHECK(n.file_name == "p.xlsx");
        CHECK(n.service_version_id == "v7");
        CHECK(n.tenant == "acme");
        CHECK(n.audit_type == "ProductEngine");
        CHECK(n.request_time_text == "2026-03-04T05:06:07.123Z");
        CHECK(n.mismatches.empty());
        CHECK(keyhook::receive_notification(with_query("/hook?api_key=" + the_key), expected) == n);
    }
    SECTION("the method is checked first") {
        http_request r = with_header("x-api-key", other_key);
        r.method = "GET";
        r.body = "not json";
        CHECK(keyhook::try_receive_notification(r, expected).error().code == errc::method_not_allowed);
    }
    SECTION("the key is checked before the body is read") {
        http_request r = with_header("x-api-key", other_key);
        r.body = "not json";
        const auto refused = keyhook::try_receive_notification(r, expected);
        REQUIRE_FALSE(refused.has_value());
        CHECK(refused.error().code == errc::unauthorized);
        check_no_key_in(refused.error());
        r.headers.clear();
        r.url = "/hook?api_key=" + the_key + "&api_key=" + other_key;
        CHECK(keyhook::try_receive_notification(r, expected).error().code == errc::conflicting_keys);
    }
    SECTION("then the body") {
        http_request r = with_header("x-api-key", the_key);
        r.body = "not json";
        CHECK(keyhook::try_receive_notification(r, expected).error().code == errc::syntax_error);
        r.body = R"({"Data":{"FileName":1}})";
        CHECK(keyhook::try_receive_notification(r, expected).error().what() ==
              "Data.FileName: expected a string, got number");
        CHECK_THROWS_AS(keyhook::receive_notification(r, expected), keyhook::exception);
        keyhook::body_limits small;
        small.max_bytes = 10;
        r.body = body;
        CHECK(keyhook::try_receive_notification(r, expected, small).error().code == errc::limit_exceeded);
    }
    SECTION("a tolerant body: unknown event and members") {
        http_request r = with_header("x-api-key", the_key);
        r.body = R"({"UserAction":"BrandNewEvent","Other":1})";
        const auto n = keyhook::receive_notification(r, expected);
        CHECK(n.user_action == "BrandNewEvent");
        CHECK_FALSE(n.event.has_value());
    }
}

TEST_CASE("H7: suggested HTTP statuses for refusals", "[H7][receiving]") {
    CHECK(keyhook::suggested_http_status(errc::method_not_allowed) == 405);
    CHECK(keyhook::suggested_http_status(errc::unauthorized) == 401);
    CHECK(keyhook::suggested_http_status(errc::limit_exceeded) == 413);
    CHECK(keyhook::suggested_http_status(errc::invalid_key) == 500);
    CHECK(keyhook::suggested_http_status(errc::conflicting_keys) == 400);
    CHECK(keyhook::suggested_http_status(errc::syntax_error) == 400);
    CHECK(keyhook::suggested_http_status(errc::wrong_type) == 400);
}

TEST_CASE("H7: a presented key prints masked", "[H7][M3][receiving]") {
    const auto k = keyhook::extract_api_key(with_header("x-api-key", the_key, "/hook?api_key=" + the_key));
    std::ostringstream os;
    os << k;
    CHECK(os.str() == "secret(" + keyhook::mask_key(the_key) + ") from header x-api-key and query parameter api_key");
    CHECK(os.str().find(the_key) == std::string::npos);
    // Equality compared with copies and changed copies,
    // not with itself (k == k cannot fail).
    const auto same = k;
    CHECK(k == same);
    CHECK_FALSE(k != same);
    auto other = k;
    other.source = key_source::header;
    CHECK(k != other);
    CHECK_FALSE(k == other);
    auto changed_key = k;
    changed_key.key = keyhook::secret(the_key + "x");
    CHECK(k != changed_key);
    CHECK_FALSE(k == changed_key);
}
