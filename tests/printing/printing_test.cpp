// P1, P2 as a class: every printable keyhook type, and the escaping and URL
// redaction they share. The checks here do not use keyhook's own classifier:
// they look for the raw bytes of each forbidden character directly.
#include <catch2/catch.hpp>

#include <cstddef>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/keyhook.hpp"
#include "../../examples/shared/dispatch_input.hpp"

using keyhook::secret;
using namespace std::string_literals;

namespace {

template <class T>
std::string printed(const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

// UTF-8 of a code point (test-local, independent of the library's walker).
std::string utf8(char32_t c) {
    std::string s;
    if (c < 0x80) {
        s += static_cast<char>(c);
    } else if (c < 0x800) {
        s += static_cast<char>(0xC0 | (c >> 6));
        s += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        s += static_cast<char>(0xE0 | (c >> 12));
        s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (c & 0x3F));
    }
    return s;
}

// What P1 forbids in output, each as the raw bytes input would carry.
struct forbidden {
    std::string name;
    std::string bytes;
};

std::vector<forbidden> forbidden_items() {
    std::vector<forbidden> out;
    for (char32_t c = 0; c < 0x20; ++c) out.push_back({"C0 " + std::to_string(c), utf8(c)});
    out.push_back({"DEL", "\x7f"});
    for (char32_t c = 0x80; c <= 0x9F; ++c) out.push_back({"C1 " + std::to_string(c), utf8(c)});
    for (char32_t c : {U'\u061C', U'\u200E', U'\u200F', U'\u202A', U'\u202B', U'\u202C', U'\u202D', U'\u202E',
                       U'\u2066', U'\u2067', U'\u2068', U'\u2069', U'\u2028', U'\u2029'})
        out.push_back({"U+" + std::to_string(static_cast<unsigned>(c)), utf8(c)});
    for (const auto& bad : {"\xFF"s, "\xFE"s, "\xC0\xAF"s, "\xC1\xBF"s, "\xE0\x80\xAF"s, "\xED\xA0\x80"s,
                            "\xF0\x80\x80\xAF"s, "\xF4\x90\x80\x80"s, "\xF5\x80\x80\x80"s, "\x80"s, "\xE2\x82"s})
        out.push_back({"invalid UTF-8", bad});
    return out;
}

// Output of a printer holds none of the forbidden characters raw: after the
// ordinary letters the input carried ("é", "東") are taken out, it is ASCII
// with no control character other than the LFs the printer itself writes.
void check_clean(const std::string& text, std::size_t expected_lfs) {
    INFO(text);
    std::string rest;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, 2, "\xC3\xA9") == 0) {
            ++i;
            continue;
        }
        if (text.compare(i, 3, "\xE6\x9D\xB1") == 0) {
            i += 2;
            continue;
        }
        rest += text[i];
    }
    std::size_t lfs = 0;
    for (const char ch : rest) {
        const auto c = static_cast<unsigned char>(ch);
        CHECK(c < 0x80);
        CHECK(c != 0x7f);
        if (c < 0x20) {
            CHECK(c == '\n');
            ++lfs;
        }
    }
    CHECK(lfs == expected_lfs);
    // No line of the output begins with what the input tried to forge.
    CHECK(text.find("\nFORGED") == std::string::npos);
}

struct printer {
    const char* type;
    std::function<std::string(const std::string&)> print;  // prints a value whose strings all hold s
};

keyhook::api_key record(const std::string& s) {
    keyhook::api_key k;
    k.id = keyhook::key_id(s);
    k.name = s;
    k.masked = s;
    k.description = s;
    k.groups = {s};
    k.active_from = keyhook::parse_timestamp("2026-01-01T00:00:00Z");
    k.expire_at = keyhook::parse_timestamp("2026-02-01T00:00:00Z");
    return k;
}

keyhook::notification event_of(const std::string& s) {
    keyhook::notification n;
    n.tenant = n.folder_name = n.service_name = n.entity_id = n.audit_type = n.file_name = n.service_version_id = s;
    return n;
}

keyhook::webhook webhook_of(const std::string& s) {
    keyhook::webhook w;
    w.name = s;
    w.endpoint = "https://" + s + "@hooks.example.com/" + s + "?token=" + s + "#" + s;
    w.auth = {{keyhook::auth_location::header, s, secret(s)}, {keyhook::auth_location::query, s, secret(s)}};
    w.signing_secret = secret(s, keyhook::secret_kind::signing_key);
    return w;
}

std::vector<printer> printers() {
    using namespace keyhook;
    return {
        {"key_id", [](const std::string& s) { return printed(key_id(s)); }},
        {"api_key", [](const std::string& s) { return printed(record(s)); }},
        {"expiry_notice",
         [](const std::string& s) {
             expiry_notice n;
             n.id = key_id(s);
             n.name = s;
             n.masked = s;
             return printed(n);
         }},
        {"notice_digest",
         [](const std::string& s) {
             notice_digest d;
             d.notices.push_back(make_notice(record(s), key_transition{}));
             return printed(d);
         }},
        {"http_header",
         [](const std::string& s) {
             return printed(http_header{s, s, false});
         }},
        {"http_header (sensitive)",
         [](const std::string& s) {
             return printed(http_header{s, s, true});
         }},
        {"http_request",
         [](const std::string& s) {
             return printed(http_request{s,
                                         "https://" + s + "@h.example/" + s + "?" + s + "=" + s + "#" + s,
                                         {{s, s, false}, {"x-api-key", s, false}},
                                         s});
         }},
        {"auth_parameter",
         [](const std::string& s) {
             return printed(auth_parameter{auth_location::query, s, secret(s)});
         }},
        {"webhook", [](const std::string& s) { return printed(webhook_of(s)); }},
        {"tenant_settings",
         [](const std::string& s) {
             return printed(tenant_settings{s, true});
         }},
        {"webhook_settings",
         [](const std::string& s) {
             return printed(webhook_settings{tenant_settings{s, true}, {}});
         }},
        {"endpoint_url",
         [](const std::string& s) {
             endpoint_url e;
             e.url = "https://" + s + "@h.example/" + s + "?a=" + s;
             e.host = s;
             return printed(e);
         }},
        {"notification", [](const std::string& s) { return printed(event_of(s)); }},
        {"received_notification",
         [](const std::string& s) {
             received_notification n;
             n.user_action = n.tenant = n.folder_name = n.service_name = n.request_time_text = s;
             n.mismatches = {s};
             return printed(n);
         }},
        {"dispatch_input",
         [](const std::string& s) {
             return printed(examples::dispatch_input{webhook_settings{{s, true}, {}}, event_of(s)});
         }},
        {"key_list_query",
         [](const std::string& s) {
             key_list_query q;
             q.base_url = "https://" + s + "@h.example/" + s;
             q.tenant = q.type = s;
             q.status = s;
             q.token = secret(s);
             return printed(q);
         }},
        {"key_filter",
         [](const std::string& s) {
             key_filter f;
             f.type = f.group = f.name_contains = s;
             return printed(f);
         }},
        {"error",
         [](const std::string& s) {
             return printed(error{errc::invalid_value, s, s});
         }},
        {"error::what",
         [](const std::string& s) {
             return error{errc::invalid_value, s, s}.what();
         }},
        {"exception::what",
         [](const std::string& s) {
             return std::string(exception(error{errc::invalid_value, s, s}).what());
         }},
        {"secret", [](const std::string& s) { return printed(secret(s + s + s + s)); }},
        {"presented_key", [](const std::string& s) { return printed(presented_key{secret(s + s + s + s)}); }},
        {"api_family", [](const std::string& s) { return printed(api_family(s)); }},
        {"resource", [](const std::string& s) { return printed(resource::service(s, s)); }},
        {"resource_ref", [](const std::string& s) { return printed(resource_ref::in_folder(s)); }},
        {"key_permissions",
         [](const std::string& s) {
             key_permissions p;
             p.grant(resource::folder(s), access_level::read);
             p.add_families({api_family(s)});
             return printed(p);
         }},
        {"key_request",
         [](const std::string& s) {
             key_request r;
             r.name = r.description = s;
             r.groups = {s};
             r.method = own_key{secret(s + s + s + s)};
             return printed(r);
         }},
        {"key_warning",
         [](const std::string& s) {
             return printed(key_warning{{}, s, s});
         }},
        {"created_key",
         [](const std::string& s) {
             return printed(created_key{record(s), one_time_secret(secret(s)), {key_warning{{}, s, s}}});
         }},
        {"rotated_key",
         [](const std::string& s) {
             return printed(rotated_key{record(s), record(s), one_time_secret()});
         }},
        {"deletion_receipt",
         [](const std::string& s) {
             return printed(deletion_receipt{key_id(s), s});
         }},
        {"delivery_state",
         [](const std::string& s) {
             delivery_state d;
             d.webhook = d.body = s;
             d.next_due = parse_timestamp("2026-01-15T00:00:00Z");
             return printed(d);
         }},
        {"operational_notice",
         [](const std::string& s) {
             operational_notice n;
             n.webhook_name = s;
             return printed(n);
         }},
        {"authorization",
         [](const std::string& s) {
             struct fixed_random {
                 void operator()(unsigned char* out, std::size_t n) const {
                     for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>(i * 7 + 1);
                 }
             };
             key_index index(fixed_random{});
             permission_policy policy;
             auto k = record(s);
             k.groups = {"user:pf"};
             index.add("acme", k, secret("the-key-0123456789"), policy);
             return printed(authorize(index, "the-key-0123456789", "other", api_family::execute(), resource_ref::all(),
                                      access_level::read, parse_timestamp("2026-01-15T00:00:00Z")));
         }},
    };
}

}  // namespace

TEST_CASE("P1: every printable type escapes every control, bidi and invalid character of its input",
          "[P1][P2][M3][printing]") {
    const auto items = forbidden_items();
    for (const auto& p : printers()) {
        INFO(p.type);
        // The shape of the output (its own line breaks) with clean input.
        const std::string clean_text = p.print("clean");
        std::size_t lfs = 0;
        for (char c : clean_text) lfs += c == '\n';
        for (const auto& item : items) {
            INFO(item.name);
            // A forbidden character between ordinary letters, and a forged line.
            const std::string s = "\xC3\xA9" + item.bytes + "\xE6\x9D\xB1\nFORGED";
            check_clean(p.print(s), lfs);
        }
    }
}

TEST_CASE("P1: ordinary text, non-ASCII letters included, prints as it is (the other side)", "[P1][printing]") {
    const std::string text = "caf\xC3\xA9 \xE6\x9D\xB1\xE4\xBA\xAC \xF0\x9F\x98\x80 \xC2\xA0 \xE2\x80\x8B \xE2\x80\xAF";
    // é, 東京, U+1F600, U+00A0 (the first code point after C1), U+200B (zero
    // width space: not a control), U+202F (the first after U+202E).
    CHECK(keyhook::escape_text(text) == text);
    CHECK(printed(keyhook::key_id(text)) == text);
    CHECK(printed(keyhook::http_header{"x-name", text, false}) == "x-name: " + text);
    CHECK(keyhook::detail::quote_input(text, 100) == "\"" + text + "\"");
    // Printable ASCII, '\' and '"' aside, is unchanged.
    std::string ascii;
    for (char c = 0x20; c < 0x7f; ++c)
        if (c != '\\' && c != '"') ascii += c;
    CHECK(keyhook::escape_text(ascii) == ascii);
}

TEST_CASE("P1: each forbidden character has one escape, on both sides of each range", "[P1][printing]") {
    using keyhook::escape_text;
    CHECK(escape_text("\x1b[2J") == "\\x1b[2J");
    CHECK(escape_text("a\r\nb") == "a\\x0d\\x0ab");
    CHECK(escape_text(std::string("\0", 1)) == "\\x00");
    CHECK(escape_text("\x1f\x20") == "\\x1f ");
    CHECK(escape_text("~\x7f") == "~\\x7f");
    CHECK(escape_text(utf8(0x80)) == "\\u0080");
    CHECK(escape_text(utf8(0x85)) == "\\u0085");  // NEL
    CHECK(escape_text(utf8(0x9B)) == "\\u009b");  // CSI
    CHECK(escape_text(utf8(0x9F)) == "\\u009f");
    CHECK(escape_text(utf8(0xA0)) == utf8(0xA0));
    CHECK(escape_text(utf8(0x061B)) == utf8(0x061B));
    CHECK(escape_text(utf8(0x061C)) == "\\u061c");  // ARABIC LETTER MARK
    CHECK(escape_text(utf8(0x061D)) == utf8(0x061D));
    CHECK(escape_text(utf8(0x200D)) == utf8(0x200D));  // zero width joiner: kept (emoji sequences)
    CHECK(escape_text(utf8(0x200E)) == "\\u200e");     // LRM
    CHECK(escape_text(utf8(0x200F)) == "\\u200f");     // RLM
    CHECK(escape_text(utf8(0x2027)) == utf8(0x2027));
    CHECK(escape_text(utf8(0x2028)) == "\\u2028");
    CHECK(escape_text(utf8(0x2029)) == "\\u2029");
    CHECK(escape_text(utf8(0x202A)) == "\\u202a");
    CHECK(escape_text(utf8(0x202E)) == "\\u202e");  // RLO
    CHECK(escape_text(utf8(0x202F)) == utf8(0x202F));
    CHECK(escape_text(utf8(0x2065)) == utf8(0x2065));
    CHECK(escape_text(utf8(0x2066)) == "\\u2066");
    CHECK(escape_text(utf8(0x2069)) == "\\u2069");
    CHECK(escape_text(utf8(0x206A)) == utf8(0x206A));
    // Bytes outside UTF-8: one escape per byte, the valid text around them kept.
    CHECK(escape_text("a\xFF"
                      "b") == "a\\xffb");
    CHECK(escape_text("\xC0\xAF") == "\\xc0\\xaf");
    CHECK(escape_text("\xED\xA0\x80") == "\\xed\\xa0\\x80");
    CHECK(escape_text("\xE2\x82"
                      "A") == "\\xe2\\x82A");
    // A backslash is doubled, so "\x1b" typed as four characters never reads as ESC.
    CHECK(escape_text("\\x1b") == "\\\\x1b");
}

TEST_CASE("P1: quoted_input escapes quotes and never splits a character at its limit", "[P1][printing]") {
    using keyhook::quoted_input;
    CHECK(quoted_input("a\"b\\c") == "\"a\\\"b\\\\c\"");
    CHECK(quoted_input("abc", 3) == "\"abc\"");
    CHECK(quoted_input("abcd", 3) == "\"abc\"...");
    // "ab€": the euro sign's 3 bytes would cross a limit of 3.
    CHECK(quoted_input("ab\xE2\x82\xAC", 3) == "\"ab\"...");
    CHECK(quoted_input("ab\xE2\x82\xAC", 5) == "\"ab\xE2\x82\xAC\"");
    CHECK(quoted_input("a\xE2\x80\xAE", 10) == "\"a\\u202e\"");
    // The default limit is 64 bytes: both sides of it.
    CHECK(quoted_input(std::string(64, 'x')) == "\"" + std::string(64, 'x') + "\"");
    CHECK(quoted_input(std::string(65, 'x')) == "\"" + std::string(64, 'x') + "\"...");
    // Controls, a byte that is not UTF-8 and an empty input.
    CHECK(quoted_input("a\r\nb\x1b[2J") == "\"a\\x0d\\x0ab\\x1b[2J\"");
    CHECK(quoted_input("\xff") == "\"\\xff\"");
    CHECK(quoted_input("") == "\"\"");
    CHECK(quoted_input("abcd", 0) == "\"\"...");
    // The library's own errors quote input the same way.
    for (const char* s : {"plain", "a\"b", "x\x1b\n", "ab\xE2\x82\xAC"})
        CHECK(keyhook::detail::quote_input(s, 4) == quoted_input(s, 4));
    const auto t = keyhook::try_parse_timestamp("2026-13-01\n");
    REQUIRE(!t);
    CHECK(t.error().message == "expected an ISO 8601 timestamp, got " + quoted_input("2026-13-01\n"));
}

TEST_CASE("P1: error paths and messages are escaped when printed; the values keep their bytes", "[P1][printing]") {
    const keyhook::error e{keyhook::errc::wrong_type, "headers.x\x1b[2J\r\nFORGED", "expected a string"};
    CHECK(e.path == "headers.x\x1b[2J\r\nFORGED");
    CHECK(e.what() == "headers.x\\x1b[2J\\x0d\\x0aFORGED: expected a string");
    CHECK(printed(e) == "[keyhook.wrong_type] headers.x\\x1b[2J\\x0d\\x0aFORGED: expected a string");
    CHECK(std::string(keyhook::exception(e).what()) ==
          "[keyhook.wrong_type] headers.x\\x1b[2J\\x0d\\x0aFORGED: expected a string");
    // A message made of quoted parts is not escaped twice.
    const keyhook::error q{keyhook::errc::invalid_value, "status", "got " + keyhook::quoted_input("a\nb\\c")};
    CHECK(q.what() == "status: got \"a\\x0ab\\\\c\"");
    // A clean error prints exactly as before.
    const keyhook::error clean{keyhook::errc::missing_member, "data.result[3].id", "required member is missing"};
    CHECK(clean.what() == "data.result[3].id: required member is missing");
}

TEST_CASE("P1: escape_json_text keeps JSON valid and its values equal, with no raw control", "[P1][printing]") {
    const std::string name = "a" + utf8(0x202E) + "b" + utf8(0x9B) + "c\x7f" + utf8(0x2028) + "\xC3\xA9\n";
    const nlohmann::json j = {{"name", name}, {"n", 1}};
    const std::string dumped = j.dump(2);
    const std::string safe = keyhook::escape_json_text(dumped);
    CHECK(nlohmann::json::parse(safe) == j);
    CHECK(safe.find(utf8(0x202E)) == std::string::npos);
    CHECK(safe.find(utf8(0x9B)) == std::string::npos);
    CHECK(safe.find('\x7f') == std::string::npos);
    CHECK(safe.find(utf8(0x2028)) == std::string::npos);
    CHECK(safe.find("\xC3\xA9") != std::string::npos);  // é stays as it is
    CHECK(safe.find("\\u202e") != std::string::npos);
    // The layout (indentation, line breaks) is the serializer's.
    CHECK(std::count(safe.begin(), safe.end(), '\n') == std::count(dumped.begin(), dumped.end(), '\n'));
    // Clean JSON is unchanged.
    const std::string plain = nlohmann::json({{"k", "caf\xC3\xA9"}}).dump(2);
    CHECK(keyhook::escape_json_text(plain) == plain);
}

TEST_CASE("P2: redact_url hides user-info, query values and fragments, and keeps the rest", "[P2][printing]") {
    using keyhook::redact_url;
    CHECK(redact_url("https://hooks.example.com/a/b") == "https://hooks.example.com/a/b");
    CHECK(redact_url("https://hooks.example.com:8443/") == "https://hooks.example.com:8443/");
    CHECK(redact_url("https://user:hunter2@h.example/p") == "https://[redacted]@h.example/p");
    CHECK(redact_url("https://h.example/p?api_key=s3cret&page=2") ==
          "https://h.example/p?api_key=[redacted]&page=[redacted]");
    CHECK(redact_url("https://h.example/p?token") == "https://h.example/p?[redacted]");
    CHECK(redact_url("https://h.example/p?a=&b") == "https://h.example/p?a=&[redacted]");
    CHECK(redact_url("https://h.example/p?") == "https://h.example/p?");
    CHECK(redact_url("https://h.example/p#access_token=x") == "https://h.example/p#[redacted]");
    CHECK(redact_url("/hook?api_key=s3cret") == "/hook?api_key=[redacted]");
    CHECK(redact_url("api_key=s3cret") == "api_key=s3cret");  // no '?': nothing says it is a query
    CHECK(redact_url("//u:p@h.example/x") == "//[redacted]@h.example/x");
    // '@' in the path or query is not user-info.
    CHECK(redact_url("https://h.example/a@b?c=d@e") == "https://h.example/a@b?c=[redacted]");
    CHECK(redact_url("https://u@h.example?x=1#f") == "https://[redacted]@h.example?x=[redacted]#[redacted]");
}

// Regression test: printing: text from input printed raw (P1, P2, M3).
TEST_CASE("P2: a request's URL prints without query values or user-info", "[P2][M3][printing]") {
    const keyhook::http_request r{
        "POST", "https://svc:hunter2@hooks.example.com/in?api_key=receiver-key-0123456789&team=data", {}, "{}"};
    const auto text = printed(r);
    CHECK(text.find("receiver-key-0123456789") == std::string::npos);
    CHECK(text.find("hunter2") == std::string::npos);
    CHECK(text == "POST https://[redacted]@hooks.example.com/in?api_key=[redacted]&team=[redacted]\n(2 body bytes)");
    // The other side: a URL with neither prints whole.
    const keyhook::http_request plain{"POST", "https://hooks.example.com/in", {}, ""};
    CHECK(printed(plain) == "POST https://hooks.example.com/in\n(0 body bytes)");
}

// Regression test: printing: text from input printed raw (P1, P2, M3).
TEST_CASE("P2, M3: a dispatched request (the README's out.request()) prints no key, with query authentication too",
          "[P2][M3][printing]") {
    keyhook::webhook hook;
    hook.name = "folder-sync";
    hook.endpoint = "https://hooks.example.com/platform?team=data";
    hook.auth = {{keyhook::auth_location::query, "api_key", secret("receiver-key-0123456789")},
                 {keyhook::auth_location::header, "x-client-token", secret("header-key-9876543210")}};
    hook.saved = true;
    keyhook::notification event;
    event.user_action = keyhook::event_type::AddProduct;
    event.tenant = "acme";
    const auto out = keyhook::dispatch({"acme", true}, keyhook::validate_webhooks({hook}), event);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].url().find("receiver-key-0123456789") != std::string::npos);  // what is sent
    for (const auto& text : {printed(out[0].request()), printed(out[0]), printed(out[0].webhook()), printed(hook)}) {
        INFO(text);
        CHECK(text.find("receiver-key-0123456789") == std::string::npos);
        CHECK(text.find("header-key-9876543210") == std::string::npos);
        CHECK(text.find("hooks.example.com/platform?") != std::string::npos);
    }
    CHECK(printed(out[0].request()).find("api_key=[redacted]") != std::string::npos);
    CHECK(printed(out[0].request()).find("x-client-token: [redacted]") != std::string::npos);
}

// Regression test: printing: text from input printed raw (P1, P2, M3).
TEST_CASE("P2, M3: received headers that carry credentials print redacted even unmarked", "[P2][M3][printing]") {
    for (const auto* name : {"x-api-key", "X-Synthetic-Key", "Authorization", "proxy-authorization", "Cookie",
                             "x-auth-token", "X-Client-Secret", "x-password", "session-id"}) {
        INFO(name);
        CHECK(printed(keyhook::http_header{name, "value-0123456789", false}) == std::string(name) + ": [redacted]");
    }
    // The other side: ordinary headers print their values.
    for (const auto* name : {"x-tenant-name", "Content-Type", "webhook-id", "webhook-signature", "Accept"}) {
        INFO(name);
        CHECK(printed(keyhook::http_header{name, "v", false}) == std::string(name) + ": v");
    }
}

// Regression test: printing: text from input printed raw (P1, P2, M3).
TEST_CASE("P2, M3: a list request prints no token and no user-info of the base URL", "[P2][M3][printing]") {
    keyhook::key_list_query q;
    q.base_url = "https://svc:hunter2@utilities.example.com";
    q.tenant = "acme";
    q.token = secret("eyJhbGciOiJSUzI1NiJ9.payload-part.signature-part");
    for (const auto& text : {printed(q), printed(keyhook::list_keys_request(q))}) {
        INFO(text);
        CHECK(text.find("hunter2") == std::string::npos);
        CHECK(text.find("payload-part") == std::string::npos);
        CHECK(text.find("utilities.example.com") != std::string::npos);
    }
}

// Regression test: raw control characters printed (P1).
TEST_CASE("P1: header names with ESC, CR, LF and bidi controls print escaped, in a request and in an error path",
          "[P1][printing]") {
    const std::string name = "x-evil\x1b]0;owned\x07\r\nFORGED: 1" + utf8(0x202E);
    const keyhook::http_request r{"POST", "/hook", {{name, "v", false}}, ""};
    const auto text = printed(r);
    CHECK(text == "POST /hook\nx-evil\\x1b]0;owned\\x07\\x0d\\x0aFORGED: 1\\u202e: v\n(0 body bytes)");
    // As a JSON path in an error, too (the receiver example reports it so).
    const keyhook::error e{keyhook::errc::wrong_type, keyhook::json_path_member("headers", name), "expected a string"};
    CHECK(printed(e).find('\x1b') == std::string::npos);
    CHECK(printed(e).find('\n') == std::string::npos);
    CHECK(printed(e).find(utf8(0x202E)) == std::string::npos);
}

TEST_CASE("P1: a validated webhook and its outbound request escape what validation lets through",
          "[P1][P2][printing]") {
    // H1 refuses C0 and DEL in a webhook's name; C1 and bidirectional controls pass
    // validation, so printing must escape them.
    for (char32_t c : {U'\u0085', U'\u009B', U'\u061C', U'\u200E', U'\u202E', U'\u2066', U'\u2028'}) {
        INFO(static_cast<unsigned>(c));
        keyhook::webhook w;
        w.name = "hook" + utf8(c) + "name";
        w.endpoint = "https://hooks.example.com/in?token=endpoint-secret";
        w.auth = {{keyhook::auth_location::query, "api_key", secret("query-key-0123456789")}};
        w.saved = true;
        const auto v = keyhook::try_validate_webhook(w);
        REQUIRE(v.has_value());
        keyhook::notification n;
        n.user_action = keyhook::event_type::AddProduct;
        n.tenant = "acme" + utf8(c);
        const auto out = keyhook::dispatch({n.tenant, true}, {*v}, n);
        REQUIRE(out.size() == 1);
        for (const auto& text : {printed(*v), printed(out[0]), printed(out[0].request()),
                                 printed(examples::dispatch_input{{{n.tenant, true}, {*v}}, n})}) {
            INFO(text);
            CHECK(text.find(utf8(c)) == std::string::npos);
            CHECK(text.find("endpoint-secret") == std::string::npos);
            CHECK(text.find("query-key-0123456789") == std::string::npos);
        }
    }
}

namespace {

// One enum's table, checked through both entry points: every enumerator from
// first to last prints its to_string, and the values just outside print "unknown".
template <class E>
void check_enum_spellings(E first, E last, const std::vector<std::string>& expected) {
    const auto lo = static_cast<long long>(first);
    const auto hi = static_cast<long long>(last);
    REQUIRE(hi - lo + 1 == static_cast<long long>(expected.size()));
    for (long long v = lo; v <= hi; ++v) {
        const auto e = static_cast<E>(v);
        CHECK(keyhook::to_string(e) == expected[static_cast<std::size_t>(v - lo)]);
        CHECK(printed(e) == expected[static_cast<std::size_t>(v - lo)]);
    }
    CHECK(keyhook::to_string(static_cast<E>(lo - 1)) == "unknown");
    CHECK(printed(static_cast<E>(hi + 1)) == "unknown");
}

}  // namespace

TEST_CASE("P1: every enum prints its spelling through one table; a value outside the enumerators prints unknown",
          "[P1][S3][printing]") {
    using namespace keyhook;
    check_enum_spellings(key_status::active, key_status::revoked,
                         {"Active", "Active in the future", "Expired", "Revoked"});
    check_enum_spellings(errc::syntax_error, errc::host_failure,
                         {"syntax_error",      "missing_member",    "wrong_type",
                          "invalid_timestamp", "invalid_value",     "out_of_range",
                          "not_success",       "limit_exceeded",    "invalid_utf8",
                          "unknown_event",     "invalid_endpoint",  "forbidden_address",
                          "invalid_header",    "invalid_parameter", "invalid_name",
                          "invalid_key",       "invalid_period",    "invalid_group",
                          "not_confirmed",     "invalid_signature", "timestamp_out_of_tolerance",
                          "unauthorized",      "conflicting_keys",  "method_not_allowed",
                          "duplicate_member",  "host_failure"});
    check_enum_spellings(tenant_kind::shared, tenant_kind::restricted, {"shared", "private"});
    check_enum_spellings(key_list_mode::lenient, key_list_mode::strict, {"lenient", "strict"});
    check_enum_spellings(ip_family::v4, ip_family::v6, {"v4", "v6"});
    // The 53 wire names keep spec 6.1's spelling at both ends of the table.
    CHECK(to_string(static_cast<event_type>(0)) == "PlatformLogin");
    CHECK(printed(static_cast<event_type>(event_type_count - 1)) == "EventsDataRetentionFailed");
    CHECK(printed(static_cast<event_type>(event_type_count)) == "unknown");
    // Compile-time, as before.
    static_assert(to_string(key_status::active_in_future) == "Active in the future");
}
