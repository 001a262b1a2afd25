// The generative hostile-input stage over the core's public parsers (see
// generative.hpp for the attacks and the properties). One valid sample per
// parser; the attacks are derived from it, so every field of the sample is
// attacked, listed or not.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "generative.hpp"
#include "keyhook/keyhook.hpp"
#include "../../examples/shared/dispatch_input.hpp"

using gen::outcome;
using gen::surface;

namespace {

const keyhook::timestamp now = keyhook::parse_timestamp("2026-11-22T12:00:00Z");

// A full key wrongly held in `masked` (P2: printed masked again).
const std::string full_key = "b1e7c2d4-5a6f-4b8c-9d0e-1f2a3b4c5d0d2";

const std::string key_list_sample = R"({"status":"success","data":{"count":3,"page":1,"pageSize":100,"result":[
 {"id":"9b772295-8ae4-45cc-9715-440fade4e74f","userId":"466e2735-4634-4f8f-bde7-412e6d5a3ca7",
  "name":"nightly-export","description":"Second export worker","masked":")" +
                                    full_key + R"(","status":"Active","type":"Synthetic",
  "groups":["user:pf"],"createdAt":"2026-05-30T16:41:07.5531Z","createdBy":"platform-admin@example.com",
  "updatedAt":"2026-05-30T16:41:07.5531Z","activeFrom":"2026-06-01T00:00:00Z","expireAt":"2027-06-01T00:00:00Z",
  "lastUsedAt":"2026-11-22T02:00:14.62016Z"},
 {"id":"5fd7e3e0-455f-4035-80c3-042dda7fdbe6","name":"Zahlungsdienst Müller","description":null,
  "masked":"f0c******************************7a9","status":"Revoked","groups":["user:pf","user:payments"],
  "activeFrom":"2026-11-22T08:00:00Z","expireAt":"2026-11-23T08:00:00.8538786+01:00","lastUsedAt":null},
 {"id":"a480c58e-54b2-4241-9e03-16177854798c","name":"relay","status":"Active in the future",
  "activeFrom":"2027-01-01T00:00:00Z","expireAt":"9999-12-31T23:59:59Z"}]}})";

template <class T>
std::string print(const T& v) {
    std::ostringstream os;
    if constexpr (std::is_same_v<T, keyhook::timestamp>) {
        os << keyhook::format_timestamp(v);
    } else if constexpr (std::is_same_v<T, keyhook::event_filter>) {
        for (const auto& e : v) os << e << ' ';
    } else {
        os << v;
    }
    return os.str();
}

outcome key_list_outcome(const std::string& in, keyhook::key_list_mode mode) {
    keyhook::key_list_options o;
    o.mode = mode;
    auto page = gen::call([&] { return keyhook::try_parse_key_list(in, o); });
    if (!page) return {page.error(), {}, {}};
    outcome out;
    out.printed = print(*page) + "\n";
    for (const auto& r : page->records) {
        out.kept.push_back(r.id.str());
        out.printed += print(r) + "\n" + keyhook::escape_json_text(nlohmann::json(r).dump()) + "\n";
    }
    // A rejected record's error is output a host prints too.
    for (const auto& e : page->rejected) out.printed += keyhook::escape_text(e.what()) + "\n";
    return out;
}

surface key_list_surface(keyhook::key_list_mode mode) {
    surface s;
    s.name = mode == keyhook::key_list_mode::lenient ? "key list (lenient)" : "key list (strict)";
    s.sample = key_list_sample;
    s.run = [mode](const std::string& in) { return key_list_outcome(in, mode); };
    s.secret_members = {"masked"};
    if (mode == keyhook::key_list_mode::lenient) s.records_path = "data.result";
    return s;
}

surface api_key_surface() {
    surface s;
    s.name = "api key record";
    s.sample = nlohmann::json::parse(key_list_sample)["data"]["result"][0].dump();
    s.run = [](const std::string& in) -> outcome {
        auto r = gen::call([&]() -> keyhook::result<keyhook::api_key> {
            auto j = keyhook::try_parse_json(in);
            if (!j) return j.error();
            return keyhook::try_api_key_from_json(*j);
        });
        if (!r) return {r.error(), {}, {}};
        return {std::nullopt, print(*r) + "\n" + keyhook::escape_json_text(nlohmann::json(*r).dump()), {}};
    };
    s.secret_members = {"masked"};
    return s;
}

surface notification_surface() {
    surface s;
    s.name = "notification body";
    s.sample = R"({"FolderName":"Loans","ServiceName":"Pricing","EntityId":"3f2b8c1e-0d4a-4c55-9b1e-2a7d6e8f9c10",
 "UserAction":"PublishEngine","AuditType":"ProductEngine","Data":{"ProductName":"Loans","EngineName":"Pricing",
 "FileName":"pricing.xlsx","ProductId":"3f2b8c1e-0d4a-4c55-9b1e-2a7d6e8f9c10",
 "ServiceVersionId":"a1b2c3d4-0000-4111-8222-333344445555"},"Tenant":"acme",
 "RequestTimeStamp":"2026-03-04T05:06:07.123Z","RevisionId":null})";
    s.run = [](const std::string& in) -> outcome {
        // Received as a server receives it: the key in the query, the body as sent.
        keyhook::http_request request{"POST", "/hook?api_key=k-0123456789abcdef", {}, in};
        auto r = gen::call(
            [&] { return keyhook::try_receive_notification(request, keyhook::secret("k-0123456789abcdef")); });
        if (!r) return {r.error(), {}, {}};
        std::string printed = print(*r);
        if (auto n = keyhook::try_to_notification(*r)) printed += "\n" + print(*n);
        return {std::nullopt, printed, {}};
    };
    s.secrets = {"k-0123456789abcdef"};
    return s;
}

surface dispatch_surface() {
    surface s;
    s.name = "dispatch input (tenant, webhooks, event)";
    s.sample = R"({"tenant":{"name":"acme-lending","webhooksEnabled":true},"webhooks":[
 {"name":"crm-sync","endpoint":"https://crm.example.com/hooks/keyhook","saved":true,
  "events":["PublishEngine","UpdateEngine"],
  "auth":[{"in":"header","name":"x-api-key","value":"5b0f3c9e-2d7a-4f61-8e4b-9c2a1d0e7f36"}]},
 {"name":"audit-archive","endpoint":"https://audit.example.net/ingest?source=platform&v=2","saved":true,
  "auth":[{"in":"query","name":"api_key","value":"k live/7Qz+9xY=="},
          {"in":"header","name":"X-Tenant","value":"tenant-secret-0042"}]}],
 "event":{"UserAction":"PublishEngine","FolderName":"Loan Calculators","ServiceName":"Mortgage",
  "EntityId":"5c3e8a2f-9d41-4b7e-a1c6-2f8d9e0b7a13","AuditType":"ProductEngine","FileName":"q.xlsx",
  "ServiceVersionId":"a9f1c2d3-4e5f-4a6b-8c7d-9e0f1a2b3c4d"}})";
    s.run = [](const std::string& in) -> outcome {
        std::optional<examples::dispatch_input> input;
        auto requests = gen::call([&]() -> keyhook::result<std::vector<keyhook::outbound_request>> {
            auto j = keyhook::try_parse_json(in);
            if (!j) return j.error();
            auto d = examples::try_dispatch_input_from_json(*j, now);
            if (!d) return d.error();
            input = std::move(*d);
            return keyhook::try_dispatch(input->settings.tenant, input->settings.webhooks, input->event);
        });
        if (!requests) return {requests.error(), {}, {}};
        std::string printed = print(*input);
        for (const auto& r : *requests) printed += "\n" + print(r);
        return {std::nullopt, printed, {}};
    };
    s.secret_members = {"value", "signingSecret"};
    return s;
}

using gen::text_surface;

template <class F>
outcome from(F&& f) {
    const auto r = gen::call(f);
    if (!r) return {r.error(), {}, {}};
    return {std::nullopt, print(*r), {}};
}

std::vector<surface> text_surfaces() {
    std::vector<surface> v;
    v.push_back(text_surface("timestamp", "2026-11-22T02:00:14.62016+05:30", {}, [](const std::string& in) {
        return from([&] { return keyhook::try_parse_timestamp(in); });
    }));
    v.push_back(text_surface("event name", "EventsDataRetentionSucccess", {}, [](const std::string& in) {
        return from([&] { return keyhook::try_parse_event_type(in); });
    }));
    v.push_back(text_surface("event filter", "PublishEngine", {"events", "events[1]"}, [](const std::string& in) {
        return from([&] {
            return keyhook::try_parse_event_filter(std::vector<std::string>{"UpdateEngine", in}, "events");
        });
    }));
    auto endpoint =
        text_surface("endpoint", "https://hooks.example.com:8443/in/x?api_key=s3cr3t-query-value-42&v=2", {"endpoint"},
                     [](const std::string& in) { return from([&] { return keyhook::try_validate_endpoint(in); }); });
    endpoint.secrets = gen::windows("s3cr3t-query-value-42");
    v.push_back(endpoint);
    v.push_back(text_surface("ip address", "2001:4860:4860::8888", {"address"}, [](const std::string& in) {
        return from([&] { return keyhook::try_parse_ip_address(in); });
    }));
    v.push_back(text_surface("checked address", "::ffff:8.8.8.8", {"address"}, [](const std::string& in) {
        return from([&] { return keyhook::try_check_address(in); });
    }));
    v.push_back(
        text_surface("Retry-After", "Wed, 21 Oct 2026 07:28:00 GMT", {"Retry-After"},
                     [](const std::string& in) { return from([&] { return keyhook::try_parse_retry_after(in); }); }));
    v.push_back(
        text_surface("delivery id", "msg_0123456789abcdef0123456789abcdef", {"deliveryId"},
                     [](const std::string& in) { return from([&] { return keyhook::try_parse_delivery_id(in); }); }));
    auto b64 = text_surface("base64 (key material)", "S2V5TWF0ZXJpYWwtMDEyMzQ1Njc4OWFiY2RlZg==", {},
                            [](const std::string& in) {
                                auto r = gen::call([&] { return keyhook::try_base64_decode(in); });
                                if (!r) return outcome{r.error(), {}, {}};
                                return outcome{};
                            });
    b64.secrets = gen::windows(b64.sample);
    v.push_back(b64);
    // The receiving side: the key from the query and from the header (H7).
    const std::string key = "5b0f3c9e-2d7a-4f61-8e4b-9c2a1d0e7f36";
    auto query =
        text_surface("received URL", "/hooks/in?source=platform&api_key=" + key + "&x=1", {"api_key", "x-api-key"},
                     [key](const std::string& in) {
                         keyhook::http_request request{"POST", in, {}, "{}"};
                         return from([&] { return keyhook::try_receive_notification(request, keyhook::secret(key)); });
                     });
    query.secrets = gen::windows(key);
    v.push_back(query);
    auto header = text_surface("received x-api-key", key, {"x-api-key"}, [key](const std::string& in) {
        keyhook::http_request request{"POST", "/hooks/in", {{"x-api-key", in}}, "{}"};
        return from([&] { return keyhook::try_receive_notification(request, keyhook::secret(key)); });
    });
    header.secrets = gen::windows(key);
    v.push_back(header);
    // Creation: the name, and an own key (K2, K3), which is a secret.
    const auto create = [](const std::string& name, const std::string& own) -> outcome {
        keyhook::key_request r;
        r.name = name;
        r.description = "generated";
        r.active_from = now;
        r.expire_at = now + std::chrono::hours(24 * 30);
        r.groups = {"user:pf"};
        r.method = keyhook::own_key{keyhook::secret(own)};
        auto random = [](unsigned char* p, std::size_t n) {
            for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(i * 37 + 11);
        };
        return from([&] {
            return keyhook::try_create_key(r, keyhook::tenant_kind::shared, random, now,
                                           keyhook::key_author{std::nullopt, "admin"});
        });
    };
    const std::string own = "Own-Key_0123456789abcdefXYZ";
    v.push_back(text_surface("key name", "billing sync", {"name"},
                             [create, own](const std::string& in) -> outcome { return create(in, own); }));
    auto own_key = text_surface("own key", own, {"key"},
                                [create](const std::string& in) -> outcome { return create("billing sync", in); });
    own_key.secrets = gen::windows(own);
    v.push_back(own_key);
    // The list call (L1): base URL, tenant, bearer token (a secret).
    const std::string token = "eyJhbGciOiJIUzI1NiJ9.dG9rZW4tYm9keQ.c2lnbmF0dXJl";
    const auto request = [](const std::string& base, const std::string& tenant,
                            const std::string& token_text) -> outcome {
        keyhook::key_list_query q;
        q.base_url = base;
        q.tenant = tenant;
        q.token = keyhook::secret(token_text);
        q.status = "active";
        return from([&] { return keyhook::try_list_keys_request(q); });
    };
    auto base = text_surface("list call base URL", "https://utilities.example.com/base", {"base_url"},
                             [request, token](const std::string& in) { return request(in, "acme lending", token); });
    base.secrets = gen::windows(token);
    v.push_back(base);
    auto tenant = text_surface(
        "list call tenant", "acme lending/ü", {"tenant"},
        [request, token](const std::string& in) { return request("https://utilities.example.com", in, token); });
    tenant.secrets = gen::windows(token);
    v.push_back(tenant);
    auto bearer = text_surface("list call token", token, {"token"}, [request](const std::string& in) {
        return request("https://utilities.example.com", "acme", in);
    });
    bearer.secrets = gen::windows(token);
    v.push_back(bearer);
    return v;
}

void run_all(const std::vector<surface>& surfaces) {
    for (const auto& s : surfaces) {
        const auto st = gen::run_surface(s);
        INFO(s.name);
        // Each surface sees its attacks, and both outcomes occur (the sample is valid).
        CHECK(st.inputs > 0);
        WARN(s.name << ": " << st.inputs << " inputs (" << st.bytes / 1024 << " KiB), " << st.errors << " errors, "
                    << st.accepted << " accepted");
        CHECK(s.run(s.sample).err == std::nullopt);
    }
}

}  // namespace

TEST_CASE("generative: the key list, lenient and strict", "[hostile][generative][L2][J1][J2][J3][P1][P2]") {
    run_all({key_list_surface(keyhook::key_list_mode::lenient), key_list_surface(keyhook::key_list_mode::strict)});
}

TEST_CASE("generative: an API key record", "[hostile][generative][L2][J1][J2][J3][P1][P2][M1]") {
    run_all({api_key_surface()});
}

TEST_CASE("generative: a received notification body", "[hostile][generative][H7][J1][J2][J3][P1]") {
    run_all({notification_surface()});
}

TEST_CASE("generative: the dispatch input (tenant, webhooks, event)",
          "[hostile][generative][H1][H2][H3][H4][J1][J2][J3][P1][P2]") {
    run_all({dispatch_surface()});
}

TEST_CASE("generative: text parsers (timestamps, events, URLs, addresses, keys, tokens)",
          "[hostile][generative][T1][T2][H1][H2][H3][H7][K2][K3][L1][B2][P1][M3]") {
    run_all(text_surfaces());
}

TEST_CASE("generative: the engine's properties can fail", "[hostile][generative]") {
    // The checks find what they look for (a check that cannot fail proves nothing).
    CHECK_FALSE(gen::first_raw_control("a\x1b", true).empty());
    CHECK_FALSE(gen::first_raw_control("a\xc2\x9b", true).empty());
    CHECK_FALSE(gen::first_raw_control("a\xe2\x80\xae", true).empty());
    CHECK_FALSE(gen::first_raw_control("a\n", false).empty());
    CHECK(gen::first_raw_control("a\n\xc2\xa0\xe2\x80\x8d", true).empty());
    CHECK(gen::path_known("data.result[0].name", {"data.result[0].name"}, ""));
    CHECK(gen::path_known("x[0][0]", {}, "x"));
    CHECK_FALSE(gen::path_known("xy", {}, "x"));
    CHECK_FALSE(gen::path_known("data.other", {"data"}, "data.result"));
    CHECK(gen::any_index("keys[12].a[0]") == "keys[].a[]");
    CHECK(gen::any_index("x[\"1\"]") == "x[\"1\"]");
    const auto doc = nlohmann::ordered_json::parse(R"({"a":[1,{"b":"c"}]})");
    CHECK(gen::splice(doc, nlohmann::json::json_pointer("/a/1/b"), "1e400") == R"({"a":[1,{"b":1e400}]})");
    // The secrets of an input: named members' strings of 8 bytes or more
    // without '*', at most 16 levels deep, every value of a repeated member;
    // none when the text is not JSON.
    gen::surface masked;
    masked.secret_members = {"masked"};
    masked.secrets = {"own-secret"};
    using list = std::vector<std::string>;
    CHECK(gen::secrets_of(masked, R"({"masked":"12345678","x":[{"masked":"abcdefgh"}],"y":{"masked":"1234567"}})") ==
          list{"own-secret", "12345678", "abcdefgh"});
    CHECK(gen::secrets_of(masked, R"({"masked":"abc*defgh","other":"12345678","masked":"87654321"})") ==
          list{"own-secret", "87654321"});
    CHECK(gen::secrets_of(masked, R"({"masked":"first-one","masked":"second-one"})") ==
          list{"own-secret", "first-one", "second-one"});
    CHECK(gen::secrets_of(masked, R"({"masked":"12345678")") == list{"own-secret"});
    const auto nested = [](int levels) {
        std::string t;
        for (int i = 0; i < levels; ++i) t += "{\"a\":";
        t += R"({"masked":"deep-secret"})";
        for (int i = 0; i < levels; ++i) t += "}";
        return t;
    };
    CHECK(gen::secrets_of(masked, nested(16)) == list{"own-secret", "deep-secret"});
    CHECK(gen::secrets_of(masked, nested(17)) == list{"own-secret"});
}

// ---------------------------------------------------------------------------
// What the stage found, as tests of their own (with the stage's memory probe, counting_new.cpp).

// Regression test, from the generative hostile stage: a refused key-list request.
TEST_CASE("L1, J3: the list call's URL is measured before it is built: at most 8192 bytes, the long field named",
          "[hostile][L1][J3][H2]") {
    // A 10 MB tenant made a 10 MB URL and took 6 times its size in heap
    // (62.9 MB): the URL now stops at 8192 bytes (H2's limit), measured first.
    keyhook::key_list_query q;
    q.base_url = "https://u.example.com";  // 21 bytes; type "synthetic" counts 27, the rest 96
    q.token = keyhook::secret("token-0123456789");
    q.tenant = std::string(8048, 'a');  // 96 + 21 + 27 + 8048 = 8192
    REQUIRE(keyhook::try_list_keys_request(q));
    q.tenant += 'a';
    auto r = keyhook::try_list_keys_request(q);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == keyhook::errc::limit_exceeded);
    CHECK(r.error().path == "tenant");
    // Percent-encoding counts: 1341 "ü" (6 bytes encoded) and 2 "a" fit, one more byte does not.
    q.tenant.clear();
    for (int i = 0; i < 1341; ++i) q.tenant += "\xc3\xbc";  // 1341 x 6 = 8046
    q.tenant += "aa";
    CHECK(keyhook::try_list_keys_request(q));
    q.tenant += "a";
    CHECK(keyhook::try_list_keys_request(q).error().path == "tenant");
    // Each field is named when it is the long one.
    q.tenant = "acme";
    q.base_url = "https://u.example.com/" + std::string(10u << 20, 'x');
    const auto big = gen::call([&] { return keyhook::try_list_keys_request(q); });
    REQUIRE_FALSE(big);
    CHECK(big.error().path == "base_url");
    CHECK(gen::last_peak() < 4096);  // refused before anything is built
    q.base_url = "https://u.example.com";
    q.status = std::string(3000, 's');
    CHECK(keyhook::try_list_keys_request(q).error().path == "status");
    q.status.reset();
    q.type = std::string(3000, 't');
    CHECK(keyhook::try_list_keys_request(q).error().path == "type");
}
