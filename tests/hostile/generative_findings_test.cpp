// Regression tests for what the generative stage (generative.hpp) found, one
// test case per finding, named after it.
#include <catch2/catch.hpp>

#include <string>

#include "generative.hpp"
#include "keyhook/key_list.hpp"

TEST_CASE("outside finding hostile-1: the list call's URL is measured before it is built", "[hostile][L1][J3]") {
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
