// Regression tests for defects the fuzzers and the hostile-input catalogue
// found, one test case per defect, named after the behaviour it proves.
#include <catch2/catch.hpp>

#include <string>

#include "keyhook/key_list.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/received_notification.hpp"
#include "keyhook/receiving.hpp"

using namespace std::string_literals;

// Found by the hostile-input catalogue.
TEST_CASE("H7: a notification body with bytes after a NUL is a syntax error, parsed or received", "[hostile][H7]") {
    // nlohmann's lexer ends the input at a NUL byte, so a body could carry a
    // second document after one and have it silently ignored.
    const auto body = R"({"FolderName":"a"})"
                      "\0"
                      R"({"FolderName":"b"})"s;
    const auto r = keyhook::try_parse_notification(body);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == keyhook::errc::syntax_error);
    CHECK(r.error().path.empty());
    CHECK(r.error().message == "expected a JSON body, syntax error at byte 18: a NUL byte");

    // A trailing NUL alone, and one at the very start.
    CHECK_FALSE(keyhook::try_parse_notification(R"({"FolderName":"a"})"
                                                "\0"s));
    CHECK_FALSE(keyhook::try_parse_notification("\0{}"s));
    // An escaped NUL inside a string is fine: it is not a raw NUL byte.
    const auto escaped = keyhook::try_parse_notification(R"({"FolderName":"a\u0000b"})");
    REQUIRE(escaped);
    CHECK(escaped->folder_name == "a\0b"s);

    // Receiving reads the body the same way.
    keyhook::http_request request{"POST", "/hook?api_key=k-123", {}, body};
    const auto received = keyhook::try_receive_notification(request, keyhook::secret("k-123"));
    REQUIRE_FALSE(received);
    CHECK(received.error().code == keyhook::errc::syntax_error);
}

// Found by the fuzzers.
TEST_CASE("J2: a number too large for a double in a notification body is out_of_range at its path, parsed or received",
          "[hostile][H7][J2]") {
    // nlohmann reports such a number with out_of_range, not parse_error; the
    // non-throwing reader let it escape (std::terminate in a receiver). J2 now
    // names the value's path and the reason (it was a syntax error without a
    // path).
    struct number_case {
        std::string body, path, number;
    };
    for (const auto& r : {number_case{"55e0555555555", "", "55e0555555555"},
                          number_case{R"({"FolderName":"a","x":1e999})", "x", "1e999"},
                          number_case{R"({"x":[-1e400]})", "x[0]", "-1e400"}}) {
        INFO(r.body);
        const auto e = keyhook::try_parse_notification(r.body);
        REQUIRE_FALSE(e);
        CHECK(e.error().code == keyhook::errc::out_of_range);
        CHECK(e.error().path == r.path);
        CHECK(e.error().message == "number \"" + r.number + "\" is outside the range of a double");
    }
    keyhook::http_request request{"POST", "/hook?api_key=k-123", {}, R"({"x":1e999})"};
    const auto received = keyhook::try_receive_notification(request, keyhook::secret("k-123"));
    REQUIRE_FALSE(received);
    CHECK(received.error().code == keyhook::errc::out_of_range);
    CHECK(received.error().path == "x");
}

// Found by the hostile-input catalogue.
TEST_CASE("L2: a key list response with bytes after a NUL is a syntax error that quotes none of them",
          "[hostile][L2]") {
    // The same lexer behaviour as for notifications: a valid envelope, a NUL,
    // then anything was accepted and the rest ignored.
    const auto envelope = R"({"status":"success","data":{"count":0,"page":1,"pageSize":1,"result":[]}})"s;
    const auto r = keyhook::try_parse_key_list(envelope + "\0garbage"s);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == keyhook::errc::syntax_error);
    CHECK(r.error().path.empty());
    CHECK(r.error().message == "syntax error at byte " + std::to_string(envelope.size()) + ": a NUL byte");
    CHECK(r.error().message.find("garbage") == std::string::npos);
    // Without the NUL the envelope parses, and an escaped NUL inside a string is fine.
    CHECK(keyhook::try_parse_key_list(envelope));
    CHECK(keyhook::try_parse_key_list(
        R"({"status":"success","message":"a\u0000b","data":{"count":0,"page":1,"pageSize":1,"result":[]}})"));
}
