// Constant-time comparison, proved: replacing constant_time_equal by an early-exit `a == b`
// left every test green. These tests fail under that mutation: the comparison
// reads every byte position whatever the contents (counted through an
// instrumented byte sequence), and the signing and receiving code go through
// it (counted with the probe of detail/constant_time.hpp). No timing here: a
// statistical timing comparison belongs in a benchmark, never in a unit test.
#include "keyhook/crypto/signing.hpp"
#include "keyhook/detail/constant_time.hpp"
#include "keyhook/receiving.hpp"
#include "keyhook/secret.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using keyhook::http_header;
using keyhook::http_headers;
using keyhook::http_request;
using keyhook::detail::scoped_constant_time_probe;
namespace kc = keyhook::crypto;

namespace {

// A byte sequence that counts the reads of each position.
struct counted_bytes {
    std::string bytes;
    mutable std::vector<std::size_t> reads;

    explicit counted_bytes(std::string b) : bytes(std::move(b)), reads(bytes.size(), 0) {}
    [[nodiscard]] std::size_t size() const noexcept { return bytes.size(); }
    char operator[](std::size_t i) const {
        ++reads.at(i);
        return bytes[i];
    }
    [[nodiscard]] bool each_read_once() const {
        for (const auto r : reads)
            if (r != 1) return false;
        return true;
    }
};

}  // namespace

// Regression test: constant-time comparison, proved rather than assumed.
TEST_CASE("K10, M3: the comparison reads every byte once, wherever the first difference is",
          "[M3][K10][constant_time]") {
    const std::string base(64, 'a');
    // The first difference at every position, and none at all.
    for (std::size_t at = 0; at <= base.size(); ++at) {
        INFO("first difference at " << at);
        std::string other = base;
        if (at < other.size()) other[at] = 'b';
        const counted_bytes a(base), b(other);
        CHECK(keyhook::detail::constant_time_equal_bytes(a, b) == (at == base.size()));
        CHECK(a.each_read_once());
        CHECK(b.each_read_once());
    }
    // Different lengths: both read in full, the shorter padded, never equal.
    for (const auto& [x, y] : {std::pair<std::string, std::string>{"", "abc"},
                               {"abc", ""},
                               {"ab", "abc"},
                               {"xbc", "ab"},
                               {std::string("ab\0", 3), "ab"}}) {
        INFO(x.size() << " vs " << y.size());
        const counted_bytes a(x), b(y);
        CHECK_FALSE(keyhook::detail::constant_time_equal_bytes(a, b));
        CHECK(a.each_read_once());
        CHECK(b.each_read_once());
    }
}

// Regression test: constant-time comparison, proved rather than assumed.
TEST_CASE("K10, M3: constant_time_equal and secret equality go through the counted loop", "[M3][K10][constant_time]") {
    scoped_constant_time_probe probe;
    CHECK_FALSE(keyhook::constant_time_equal("xaaaaaaaaaaaaaaa", "yaaaaaaaaaaaaaaa"));
    CHECK(keyhook::constant_time_equal("same", "same"));
    CHECK_FALSE(keyhook::constant_time_equal("short", "longer!"));
    CHECK(probe.counts().calls == 3);
    CHECK(probe.counts().positions == 16 + 4 + 7);
    // keyhook::secret's equality too
    CHECK_FALSE(keyhook::secret("k1-aaaaaaaaaaaa") == keyhook::secret("k2-aaaaaaaaaaaa"));
    CHECK(probe.counts().calls == 4);
    CHECK(probe.counts().positions == 16 + 4 + 7 + 15);
}

// Regression test: constant-time comparison, proved rather than assumed.
TEST_CASE("B1: verification compares every signature candidate with every secret in constant time",
          "[B1][M3][constant_time][signing]") {
    const auto s = kc::parse_signing_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    const auto other = kc::parse_signing_secret("whsec_" + keyhook::base64_encode(std::string(32, 'k')));
    const keyhook::timestamp now{std::chrono::seconds{1614265330}};
    const std::string body = R"({"test": 2432232314})";
    const http_headers headers{{"webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek", false},
                               {"webhook-timestamp", "1614265330", false},
                               {"webhook-signature",
                                "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= v1a,ignored "
                                "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
                                false}};
    scoped_constant_time_probe probe;
    REQUIRE(kc::try_verify_signature(std::vector<kc::signing_secret>{other, s}, headers, body, now).has_value());
    // 2 v1 candidates x 2 secrets, each a 44-character base64 digest; no early
    // exit on the first match either.
    CHECK(probe.counts().calls == 4);
    CHECK(probe.counts().positions == 4 * 44);
}

// Regression test: constant-time comparison, proved rather than assumed.
TEST_CASE("H7, K10: the receiving key checks compare in constant time", "[H7][K10][constant_time]") {
    const keyhook::secret expected("5b0f3c9e-2d7a-4f61-8e4b-9c2a1d0e7f36");
    http_request r{"POST", "/hook", {{"x-api-key", "Xb0f3c9e-2d7a-4f61-8e4b-9c2a1d0e7f36", true}}, "{}"};
    {
        scoped_constant_time_probe probe;
        CHECK_FALSE(keyhook::try_authenticate(r, expected).has_value());
        CHECK(probe.counts().calls == 1);
        CHECK(probe.counts().positions == 36);
    }
    {
        // header and query both present: compared with each other, then with the expected key
        r.url = "/hook?api_key=" + expected.reveal();
        r.headers[0].value = expected.reveal();
        scoped_constant_time_probe probe;
        CHECK(keyhook::try_authenticate(r, expected).has_value());
        CHECK(probe.counts().calls == 2);
        CHECK(probe.counts().positions == 72);
    }
}
