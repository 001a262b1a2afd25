#include "keyhook/endpoint.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <unordered_set>

using keyhook::address_class;
using keyhook::classify_address;
using keyhook::endpoint_policy;
using keyhook::errc;
using keyhook::ip_address;
using keyhook::parse_ip_address;
using keyhook::try_check_address;
using keyhook::try_parse_ip_address;
using keyhook::try_validate_endpoint;

namespace {

address_class class_of(const std::string& text) { return classify_address(parse_ip_address(text)); }

// The error kind of validating `url` with the default policy, or nothing.
std::string verdict(const std::string& url, const endpoint_policy& policy = {}) {
    const auto r = try_validate_endpoint(url, policy);
    return r ? std::string("ok") : std::string(to_string(r.error().code));
}

endpoint_policy local_development() {
    endpoint_policy p;
    p.allow_http = true;
    p.allow_non_global_addresses = true;
    return p;
}

}  // namespace

TEST_CASE("H1: IPv4 ranges, both sides of every boundary", "[H1][address]") {
    struct row {
        const char* below;
        address_class below_class;
        const char* first;
        const char* last;
        address_class range;
        const char* above;
        address_class above_class;
    };
    const address_class g = address_class::global;
    const row rows[] = {
        {nullptr, g, "0.0.0.0", "0.255.255.255", address_class::unspecified, "1.0.0.0", g},
        {"9.255.255.255", g, "10.0.0.0", "10.255.255.255", address_class::private_network, "11.0.0.0", g},
        {"100.63.255.255", g, "100.64.0.0", "100.127.255.255", address_class::carrier_grade_nat, "100.128.0.0", g},
        {"126.255.255.255", g, "127.0.0.0", "127.255.255.255", address_class::loopback, "128.0.0.0", g},
        {"169.253.255.255", g, "169.254.0.0", "169.254.255.255", address_class::link_local, "169.255.0.0", g},
        {"172.15.255.255", g, "172.16.0.0", "172.31.255.255", address_class::private_network, "172.32.0.0", g},
        {"192.167.255.255", g, "192.168.0.0", "192.168.255.255", address_class::private_network, "192.169.0.0", g},
        {"223.255.255.255", g, "224.0.0.0", "239.255.255.255", address_class::multicast, "240.0.0.0",
         address_class::reserved},
        {"239.255.255.255", address_class::multicast, "240.0.0.0", "255.255.255.255", address_class::reserved, nullptr,
         g},
    };
    for (const auto& r : rows) {
        INFO(r.first);
        if (r.below) CHECK(class_of(r.below) == r.below_class);
        CHECK(class_of(r.first) == r.range);
        CHECK(class_of(r.last) == r.range);
        if (r.above) CHECK(class_of(r.above) == r.above_class);
    }
    CHECK(class_of("8.8.8.8") == g);
    CHECK(class_of("127.0.0.1") == address_class::loopback);
}

TEST_CASE("H1: IPv6 ranges, both sides of every boundary", "[H1][address]") {
    const address_class g = address_class::global;
    CHECK(class_of("::") == address_class::unspecified);
    CHECK(class_of("::1") == address_class::loopback);
    CHECK(class_of("::2") == address_class::reserved);  // rest of ::/8 (IPv4-compatible and such)
    CHECK(class_of("::127.0.0.1") == address_class::reserved);
    CHECK(class_of("0:0:0:0:0:0:0:1") == address_class::loopback);
    // fe80::/10 link-local
    CHECK(class_of("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff") == g);
    CHECK(class_of("fe80::") == address_class::link_local);
    CHECK(class_of("fe80::1") == address_class::link_local);
    CHECK(class_of("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff") == address_class::link_local);
    CHECK(class_of("fec0::") == address_class::reserved);  // deprecated site-local
    CHECK(class_of("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") == address_class::reserved);
    // fc00::/7 unique local
    CHECK(class_of("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") == g);
    CHECK(class_of("fc00::") == address_class::unique_local);
    CHECK(class_of("fd12:3456::1") == address_class::unique_local);
    CHECK(class_of("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") == address_class::unique_local);
    CHECK(class_of("fe00::") == g);
    // ff00::/8 multicast
    CHECK(class_of("ff00::") == address_class::multicast);
    CHECK(class_of("ff02::1") == address_class::multicast);
    CHECK(class_of("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") == address_class::multicast);
    CHECK(class_of("2001:4860:4860::8888") == g);
    CHECK(class_of("2606:4700::1111") == g);
}

TEST_CASE("H1: IPv6 forms that carry an IPv4 address are classified by it", "[H1][address]") {
    // IPv4-mapped, dotted and hex forms
    CHECK(class_of("::ffff:127.0.0.1") == address_class::loopback);
    CHECK(class_of("::ffff:7f00:1") == address_class::loopback);
    CHECK(class_of("::FFFF:7F00:0001") == address_class::loopback);
    CHECK(class_of("0:0:0:0:0:ffff:10.1.2.3") == address_class::private_network);
    CHECK(class_of("::ffff:a9fe:a9fe") == address_class::link_local);  // 169.254.169.254
    CHECK(class_of("::ffff:0.0.0.0") == address_class::unspecified);
    CHECK(class_of("::ffff:100.63.255.255") == address_class::global);
    CHECK(class_of("::ffff:100.64.0.0") == address_class::carrier_grade_nat);
    CHECK(class_of("::ffff:172.15.255.255") == address_class::global);
    CHECK(class_of("::ffff:172.16.0.0") == address_class::private_network);
    CHECK(class_of("::ffff:8.8.8.8") == address_class::global);
    CHECK(class_of("::ffff:224.0.0.1") == address_class::multicast);
    // ::fffe:... is not mapped: it stays in ::/8
    CHECK(class_of("::fffe:7f00:1") == address_class::reserved);
    // NAT64 and 6to4
    CHECK(class_of("64:ff9b::127.0.0.1") == address_class::loopback);
    CHECK(class_of("64:ff9b::8.8.8.8") == address_class::global);
    CHECK(class_of("64:ff9b:1::127.0.0.1") == address_class::special_purpose);  // local-use NAT64, refused whole
    CHECK(class_of("2002:7f00:1::") == address_class::loopback);
    CHECK(class_of("2002:c0a8:101::1") == address_class::private_network);
    CHECK(class_of("2002:808:808::") == address_class::global);
}

TEST_CASE("H1: IPv4 text is parsed strictly", "[H1][address]") {
    CHECK(parse_ip_address("192.0.2.1") == ip_address::v4(192, 0, 2, 1));
    CHECK(parse_ip_address("0.0.0.0") == ip_address::v4(0, 0, 0, 0));
    CHECK(parse_ip_address("255.255.255.255") == ip_address::v4(255, 255, 255, 255));
    // Forms that some parsers read as 127.0.0.1 are not addresses here.
    for (const char* bad : {"0177.0.0.1", "2130706433", "127.1", "127.0.1", "0x7f.0.0.1", "0x7f000001", "127.0.0.01",
                            "127.000.000.001", "256.0.0.1", "1.2.3.4.5", "1.2.3.", ".1.2.3", "1..2.3", "1.2.3.-4",
                            "+1.2.3.4", "1.2.3.4 ", " 1.2.3.4", "", "1.2.3.1000"}) {
        INFO(bad);
        const auto r = try_parse_ip_address(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_value);
        CHECK(r.error().path == "address");
    }
}

TEST_CASE("H1: IPv6 text: compression, embedded IPv4, canonical output", "[H1][address]") {
    const auto full = parse_ip_address("2001:0db8:0000:0000:0000:0000:0000:0001");
    CHECK(full == parse_ip_address("2001:db8::1"));
    CHECK(full.family == keyhook::ip_family::v6);
    CHECK(full.octets[0] == 0x20);
    CHECK(full.octets[1] == 0x01);
    CHECK(full.octets[15] == 0x01);
    CHECK(parse_ip_address("1:2:3:4:5:6:7:8") == parse_ip_address("1:2:3:4:5:6:0.7.0.8"));
    CHECK(parse_ip_address("::ffff:1.2.3.4") == parse_ip_address("::ffff:102:304"));
    CHECK(parse_ip_address("1:2:3:4:5:6:1.2.3.4") == parse_ip_address("1:2:3:4:5:6:102:304"));
    CHECK(parse_ip_address("1::") == parse_ip_address("1:0:0:0:0:0:0:0"));
    CHECK(parse_ip_address("1::8") == parse_ip_address("1:0:0:0:0:0:0:8"));
    CHECK(parse_ip_address("1:2:3:4:5:6:7::") == parse_ip_address("1:2:3:4:5:6:7:0"));
    CHECK(parse_ip_address("::2:3:4:5:6:7:8") == parse_ip_address("0:2:3:4:5:6:7:8"));
    for (const char* bad : {"1:2:3:4:5:6:7:8:9",
                            "1:2:3:4:5:6:7",
                            "1::2::3",
                            "12345::",
                            ":1::",
                            "1:",
                            "::1:",
                            ":::",
                            "1:::2",
                            "1:2:3:4:5:6:7:8::",
                            "::1:2:3:4:5:6:7:8",
                            "fe80::1%eth0",
                            "fe80::1%25eth0",
                            "[::1]",
                            "1:2:3:4:5:6:7:1.2.3.4",
                            "::ffff:1.2.3",
                            "::ffff:01.2.3.4",
                            "::g",
                            "::1.2.3.4:5",
                            "1.2.3.4::",
                            "::-1"}) {
        INFO(bad);
        CHECK_FALSE(try_parse_ip_address(bad));
    }
    CHECK(to_string(parse_ip_address("2001:0DB8::0001")) == "2001:db8::1");
    CHECK(to_string(parse_ip_address("0:0:0:0:0:0:0:0")) == "::");
    CHECK(to_string(parse_ip_address("0:0:0:0:0:0:0:1")) == "::1");
    CHECK(to_string(parse_ip_address("1:0:0:2:0:0:0:3")) == "1:0:0:2::3");
    CHECK(to_string(parse_ip_address("1:0:2:3:4:5:6:7")) == "1:0:2:3:4:5:6:7");  // one zero group stays
    CHECK(to_string(parse_ip_address("1:2:3:4:5:6:7:0")) == "1:2:3:4:5:6:7:0");
    CHECK(to_string(parse_ip_address("1:0:0:0:0:0:0:0")) == "1::");
    CHECK(to_string(parse_ip_address("::ffff:7f00:1")) == "::ffff:127.0.0.1");
    CHECK(to_string(parse_ip_address("10.0.0.1")) == "10.0.0.1");
    std::ostringstream os;
    os << parse_ip_address("FE80::A");
    CHECK(os.str() == "fe80::a");
    const std::unordered_set<ip_address> set{parse_ip_address("::1"), parse_ip_address("0::1"),
                                             parse_ip_address("127.0.0.1")};
    CHECK(set.size() == 2);
}

TEST_CASE("H1: check_address for use after name resolution", "[H1][address]") {
    const auto ok = try_check_address("93.184.216.34");
    REQUIRE(ok);
    CHECK(*ok == ip_address::v4(93, 184, 216, 34));
    for (const char* refused :
         {"10.0.0.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "::1", "::", "fe80::1",
          "fc00::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:192.168.0.1"}) {
        INFO(refused);
        const auto r = try_check_address(refused);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::forbidden_address);
        CHECK(r.error().path == "address");
        CHECK(r.error().message.find(std::string(to_string(class_of(refused)))) != std::string::npos);
    }
    const auto not_ip = try_check_address("example.com");
    REQUIRE_FALSE(not_ip);
    CHECK(not_ip.error().code == errc::invalid_value);
    CHECK(try_check_address("127.0.0.1", local_development()));
    CHECK_THROWS_AS(keyhook::check_address("10.1.1.1"), keyhook::exception);
    CHECK(keyhook::check_address("1.1.1.1") == ip_address::v4(1, 1, 1, 1));
}

TEST_CASE("H1: accepted endpoints and their parts", "[H1][endpoint]") {
    const auto e = keyhook::validate_endpoint("HTTPS://Hooks.Example.COM:8443/a/b?x=1&y=%2F");
    CHECK(e.url == "HTTPS://Hooks.Example.COM:8443/a/b?x=1&y=%2F");
    CHECK(e.scheme == "https");
    CHECK(e.host == "hooks.example.com");
    CHECK(e.port == 8443);
    CHECK(e.has_query);
    CHECK_FALSE(e.address);

    const auto plain = keyhook::validate_endpoint("https://example.com");
    CHECK(plain.port == 443);
    CHECK_FALSE(plain.has_query);
    CHECK(plain.host == "example.com");

    CHECK(keyhook::validate_endpoint("https://example.com./hook").host == "example.com");
    const auto v4 = keyhook::validate_endpoint("https://93.184.216.34/hook");
    REQUIRE(v4.address);
    CHECK(*v4.address == ip_address::v4(93, 184, 216, 34));
    const auto v6 = keyhook::validate_endpoint("https://[2606:4700:4700::1111]:9000/");
    REQUIRE(v6.address);
    CHECK(v6.host == "2606:4700:4700::1111");
    CHECK(v6.port == 9000);
    for (const char* good : {"https://a.b-c.example/x_y/~z;p=1,2!$'()*+@:/", "https://xn--bcher-kva.example/",
                             "https://under_score.example/", "https://example.com/?", "https://example.com:1/",
                             "https://example.com:65535/", "https://host/%41%2f", "https://localhost.example.com/",
                             "https://mylocalhost/", "https://127.0.0.1.nip.io/", "https://1.2.3.4a/"}) {
        INFO(good);
        CHECK(verdict(good) == "ok");
    }
}

TEST_CASE("H1: scheme: https, plain http only with the opt-in", "[H1][endpoint]") {
    CHECK(verdict("http://example.com/hook") == "invalid_endpoint");
    endpoint_policy http_ok;
    http_ok.allow_http = true;
    const auto r = try_validate_endpoint("http://example.com/hook", http_ok);
    REQUIRE(r);
    CHECK(r->port == 80);
    CHECK(r->scheme == "http");
    // The http opt-in does not open up local addresses.
    CHECK(verdict("http://127.0.0.1:8080/", http_ok) == "forbidden_address");
    CHECK(verdict("http://localhost:8080/", local_development()) == "ok");
    for (const char* bad :
         {"ftp://example.com/", "ws://example.com/", "example.com/hook", "/hook", "//example.com/", "https:example.com",
          "https:/example.com", "mailto:a@example.com", "https//example.com", "1https://example.com"}) {
        INFO(bad);
        const auto e = try_validate_endpoint(bad);
        REQUIRE_FALSE(e);
        CHECK(e.error().code == errc::invalid_endpoint);
        CHECK(e.error().path == "endpoint");
    }
}

TEST_CASE("H1: user-info, fragments, missing hosts and bad ports are refused", "[H1][endpoint]") {
    for (const char* bad : {"https://user:pass@example.com/",
                            "https://user@example.com",
                            "https://@example.com/",
                            "https://example.com/#frag",
                            "https://example.com/a?b=1#c",
                            "https://example.com#",
                            "https:///path",
                            "https://:443/",
                            "https://?x=1",
                            "https://",
                            "https://example.com:0/",
                            "https://example.com:65536/",
                            "https://example.com:/",
                            "https://example.com:44a/",
                            "https://example.com:443:443/",
                            "https://[::1/",
                            "https://[::1]x/",
                            "https://[v1.x]/",
                            "https://[fe80::1%25eth0]/",
                            "https://[127.0.0.1]/",
                            "https://ex ample.com/"}) {
        INFO(bad);
        CHECK(verdict(bad) == "invalid_endpoint");
    }
    const auto userinfo = try_validate_endpoint("https://alice:hunter2@example.com/");
    REQUIRE_FALSE(userinfo);
    CHECK(userinfo.error().message.find("user-info") != std::string::npos);
    CHECK(userinfo.error().message.find("hunter2") == std::string::npos);  // never quoted
    const auto fragment = try_validate_endpoint("https://example.com/#x");
    REQUIRE_FALSE(fragment);
    CHECK(fragment.error().message.find("fragment") != std::string::npos);
}

TEST_CASE("H1: spaces, control characters and other bytes a URL may not hold", "[H1][endpoint]") {
    using namespace std::string_literals;
    for (const auto& bad : {"https://example.com/a b"s,
                            "https://example.com/\t"s,
                            "https://example.com/\r\nX: y"s,
                            "https://example.com/\n"s,
                            "https://example.com/\0x"s,
                            "https://exa\x7fmple.com/"s,
                            " https://example.com/"s,
                            "https://example.com/ "s,
                            "https://example.com/\xc3\xa9"s,
                            "https://exam\xc3\xa9ple.com/"s,
                            "https://example.com/<script>"s,
                            "https://example.com/a\\b"s,
                            "https://example.com\\@evil.com/"s,
                            "https://example.com/{x}"s,
                            "https://example.com/[x]"s,
                            "https://example.com/%zz"s,
                            "https://example.com/%4"s,
                            "https://example.com/%"s,
                            "https://%6c%6fcalhost/"s,
                            "https://exa%20mple.com/"s,
                            "https://-example.com/"s,
                            "https://example-.com/"s,
                            "https://a..b/"s,
                            "https://./"s,
                            "https://example.com../"s,
                            ""s}) {
        INFO(keyhook::detail::quote_input(bad));
        CHECK(verdict(bad) == "invalid_endpoint");
    }
    const auto r = try_validate_endpoint("https://example.com/?key=s3cr3t value");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("byte 31") != std::string::npos);
    CHECK(r.error().message.find("s3cr3t") == std::string::npos);
}

TEST_CASE("H1: at most 2048 bytes", "[H1][endpoint]") {
    const std::string prefix = "https://example.com/";
    const std::string exactly = prefix + std::string(keyhook::max_endpoint_length - prefix.size(), 'a');
    REQUIRE(exactly.size() == 2048);
    CHECK(verdict(exactly) == "ok");
    const std::string one_more = exactly + "a";
    const auto r = try_validate_endpoint(one_more);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_endpoint);
    CHECK(r.error().message.find("2049") != std::string::npos);
    CHECK(r.error().message.find("2048") != std::string::npos);
}

TEST_CASE("H1: localhost names are refused in any case and with a trailing dot", "[H1][endpoint]") {
    for (const char* bad : {"https://localhost/", "https://LOCALHOST/", "https://LocalHost:8443/x",
                            "https://localhost./", "https://api.localhost/", "https://a.b.LocalHost./hook"}) {
        INFO(bad);
        const auto r = try_validate_endpoint(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::forbidden_address);
        CHECK(r.error().path == "endpoint");
        CHECK(verdict(bad, local_development()) == "ok");
    }
}

TEST_CASE("H1: IP-literal hosts in refused ranges, with both sides of the boundaries", "[H1][endpoint]") {
    for (const char* refused : {"https://127.0.0.1/",
                                "https://127.255.255.255/",
                                "https://10.0.0.0/",
                                "https://10.255.255.255/",
                                "https://172.16.0.0/",
                                "https://172.31.255.255/",
                                "https://192.168.0.0/",
                                "https://192.168.255.255/",
                                "https://169.254.169.254/latest/meta-data",
                                "https://100.64.0.0/",
                                "https://100.127.255.255/",
                                "https://0.0.0.0/",
                                "https://224.0.0.0/",
                                "https://239.255.255.255/",
                                "https://255.255.255.255/",
                                "https://127.0.0.1./",
                                "https://[::1]/",
                                "https://[::]/",
                                "https://[fe80::1]/",
                                "https://[febf::1]/",
                                "https://[fc00::1]/",
                                "https://[fdff::1]/",
                                "https://[ff02::1]/",
                                "https://[::ffff:127.0.0.1]/",
                                "https://[::ffff:7f00:1]/",
                                "https://[::FFFF:10.0.0.1]:8443/",
                                "https://[::ffff:a9fe:a9fe]/",
                                "https://[64:ff9b::10.0.0.1]/"}) {
        INFO(refused);
        CHECK(verdict(refused) == "forbidden_address");
        CHECK(verdict(refused, local_development()) == "ok");
    }
    for (const char* allowed : {"https://126.255.255.255/",  "https://128.0.0.0/",
                                "https://9.255.255.255/",    "https://11.0.0.0/",
                                "https://172.15.255.255/",   "https://172.32.0.0/",
                                "https://192.167.255.255/",  "https://192.169.0.0/",
                                "https://169.253.255.255/",  "https://169.255.0.0/",
                                "https://100.63.255.255/",   "https://100.128.0.0/",
                                "https://1.0.0.0/",          "https://223.255.255.255/",
                                "https://[fe7f::1]/",        "https://[fbff::1]/",
                                "https://[fe00::1]/",        "https://[2001:4860:4860::8888]/",
                                "https://[::ffff:8.8.8.8]/", "https://[::ffff:100.63.255.255]/"}) {
        INFO(allowed);
        CHECK(verdict(allowed) == "ok");
    }
    const auto r = try_validate_endpoint("https://172.16.0.1/hook");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("private_network") != std::string::npos);
}

TEST_CASE("H1: ambiguous numeric hosts are refused outright", "[H1][endpoint]") {
    // Each of these reaches 127.0.0.1 through some URL parser.
    for (const char* bad :
         {"https://0177.0.0.1/", "https://2130706433/", "https://127.1/", "https://127.0.1/", "https://0x7f.0.0.1/",
          "https://0x7f000001/", "https://127.0.0.01/", "https://0/", "https://1.2.3.4.5/", "https://256.1.1.1/",
          "https://example.0x1/", "https://a.123/", "https://017700000001/"}) {
        INFO(bad);
        const auto r = try_validate_endpoint(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_endpoint);
        CHECK(r.error().message.find("ambiguous") != std::string::npos);
        CHECK(verdict(bad, local_development()) == "invalid_endpoint");
    }
}

TEST_CASE("H1: printing an endpoint hides its query", "[H1][endpoint]") {
    std::ostringstream os;
    os << keyhook::validate_endpoint("https://example.com/hook?token=abc123");
    CHECK(os.str() == "https://example.com/hook?token=[redacted]");  // P2: query names show, values do not
    CHECK(keyhook::validate_endpoint("https://example.com/a") == keyhook::validate_endpoint("https://example.com/a"));
    CHECK(keyhook::validate_endpoint("https://example.com/a") != keyhook::validate_endpoint("https://example.com/b"));
}

// ---------------------------------------------------------------------------
// H1: every IANA special-purpose entry that is not globally reachable, both sides of
// each boundary, however the address is met.

namespace {

struct range_row {
    const char* below;  // nullptr at the start of the address space
    address_class below_class;
    const char* first;
    const char* last;
    address_class range;
    const char* above;  // nullptr at the end
    address_class above_class;
};

constexpr address_class g = address_class::global;
constexpr address_class unspec = address_class::unspecified;
constexpr address_class loop = address_class::loopback;
constexpr address_class priv = address_class::private_network;
constexpr address_class link = address_class::link_local;
constexpr address_class cgn = address_class::carrier_grade_nat;
constexpr address_class mcast = address_class::multicast;
constexpr address_class ula = address_class::unique_local;
constexpr address_class rsv = address_class::reserved;
constexpr address_class doc_range = address_class::documentation;
constexpr address_class bench = address_class::benchmarking;
constexpr address_class special = address_class::special_purpose;

const range_row v4_rows[] = {
    {nullptr, g, "0.0.0.0", "0.255.255.255", unspec, "1.0.0.0", g},
    {"9.255.255.255", g, "10.0.0.0", "10.255.255.255", priv, "11.0.0.0", g},
    {"100.63.255.255", g, "100.64.0.0", "100.127.255.255", cgn, "100.128.0.0", g},
    {"126.255.255.255", g, "127.0.0.0", "127.255.255.255", loop, "128.0.0.0", g},
    {"169.253.255.255", g, "169.254.0.0", "169.254.255.255", link, "169.255.0.0", g},
    {"172.15.255.255", g, "172.16.0.0", "172.31.255.255", priv, "172.32.0.0", g},
    {"191.255.255.255", g, "192.0.0.0", "192.0.0.255", special, "192.0.1.0", g},
    {"192.0.1.255", g, "192.0.2.0", "192.0.2.255", doc_range, "192.0.3.0", g},
    {"192.88.98.255", g, "192.88.99.0", "192.88.99.255", special, "192.88.100.0", g},
    {"192.167.255.255", g, "192.168.0.0", "192.168.255.255", priv, "192.169.0.0", g},
    {"198.17.255.255", g, "198.18.0.0", "198.19.255.255", bench, "198.20.0.0", g},
    {"198.51.99.255", g, "198.51.100.0", "198.51.100.255", doc_range, "198.51.101.0", g},
    {"203.0.112.255", g, "203.0.113.0", "203.0.113.255", doc_range, "203.0.114.0", g},
    {"223.255.255.255", g, "224.0.0.0", "239.255.255.255", mcast, "240.0.0.0", rsv},
    {"239.255.255.255", mcast, "240.0.0.0", "255.255.255.254", rsv, "255.255.255.255", rsv},
    {"255.255.255.254", rsv, "255.255.255.255", "255.255.255.255", rsv, nullptr, g},
};

const range_row v6_rows[] = {
    {nullptr, g, "::", "::", unspec, "::1", loop},
    {"::", unspec, "::1", "::1", loop, "::2", rsv},
    // The rest of ::/8 (IPv4-compatible and unassigned forms).
    {"::1", loop, "::2", "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", rsv, "100::", special},
    {"64:ff9b:0:ffff:ffff:ffff:ffff:ffff", rsv, "64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", special,
     "64:ff9b:2::", rsv},
    {"ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", rsv, "100::", "100::ffff:ffff:ffff:ffff", special,
     "100:0:0:1::", special},
    {"100::ffff:ffff:ffff:ffff", special, "100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff", special, "100:0:0:2::", g},
    // 2001::/23 and the entries inside it.
    {"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "2001::", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", special,
     "2001:1::", special},
    {"2001:1::", special, "2001:1::1", "2001:1::3", g, "2001:1::4", special},
    {"2001:1:ffff:ffff:ffff:ffff:ffff:ffff", special, "2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff", bench,
     "2001:2:1::", special},
    {"2001:2:ffff:ffff:ffff:ffff:ffff:ffff", special, "2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff", g,
     "2001:4::", special},
    {"2001:4:111:ffff:ffff:ffff:ffff:ffff", special, "2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff", g,
     "2001:4:113::", special},
    {"2001:f:ffff:ffff:ffff:ffff:ffff:ffff", special, "2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", special,
     "2001:20::", g},  // deprecated ORCHID
    {"2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", special, "2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", g,
     "2001:30::", g},
    {"2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", g, "2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", g,
     "2001:40::", special},
    {"2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", g, "2001:40::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", special,
     "2001:200::", g},
    {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", g, "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", doc_range,
     "2001:db9::", g},
    {"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", doc_range,
     "3fff:1000::", g},
    {"5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", special,
     "5f01::", g},
    {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ula,
     "fe00::", g},
    {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g, "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", link,
     "fec0::", rsv},
    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", link, "fec0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", rsv,
     "ff00::", mcast},
    {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", rsv, "ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", mcast,
     nullptr, g},
};

// The verdict of every way of meeting an address: classified, checked after
// name resolution, and as an endpoint's host.
void check_everywhere(const char* text, address_class expected) {
    INFO(text);
    CHECK(class_of(text) == expected);
    const auto checked = keyhook::try_check_address(text);
    CHECK(checked.has_value() == (expected == g));
    if (!checked) {
        CHECK(checked.error().code == errc::forbidden_address);
        CHECK(checked.error().message.find(std::string(keyhook::to_string(expected))) != std::string::npos);
    }
    const std::string t = text;
    const std::string url = "https://" + (t.find(':') == std::string::npos ? t : "[" + t + "]") + "/hook";
    const auto e = keyhook::try_validate_endpoint(url);
    CHECK(e.has_value() == (expected == g));
    if (!e) CHECK(e.error().code == errc::forbidden_address);
    keyhook::endpoint_policy dev;
    dev.allow_non_global_addresses = true;
    CHECK(keyhook::try_check_address(text, dev));
    CHECK(keyhook::try_validate_endpoint(url, dev));
}

void check_rows(const range_row* rows, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const auto& r = rows[i];
        if (r.below) check_everywhere(r.below, r.below_class);
        check_everywhere(r.first, r.range);
        check_everywhere(r.last, r.range);
        if (r.above) check_everywhere(r.above, r.above_class);
    }
}

}  // namespace

// Regression test: refused address ranges follow IANA's registries (H1).
TEST_CASE("H1: every IPv4 special-purpose entry not globally reachable is refused, both sides of each boundary",
          "[H1][address][endpoint]") {
    check_rows(v4_rows, std::size(v4_rows));
    // Globally reachable registry entries stay reachable.
    for (const char* reachable : {"192.31.196.1", "192.52.193.1", "192.175.48.1", "8.8.8.8", "1.1.1.1"})
        check_everywhere(reachable, g);
}

// Regression test: refused address ranges follow IANA's registries (H1).
TEST_CASE("H1: every IPv6 special-purpose entry not globally reachable is refused, both sides of each boundary",
          "[H1][address][endpoint]") {
    check_rows(v6_rows, std::size(v6_rows));
    for (const char* reachable : {"2620:4f:8000::1", "2606:4700:4700::1111", "2001:4860:4860::8888"})
        check_everywhere(reachable, g);
    // IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and 6to4 2002::/16: by the
    // embedded IPv4 address, whose first and last are refused themselves.
    for (const char* outside :
         {"::fffe:ffff:ffff", "::1:0:0:0", "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", "64:ff9b::1:0:0"})
        check_everywhere(outside, rsv);  // the rest of ::/8
    for (const char* first : {"::ffff:0.0.0.0", "64:ff9b::", "2002::"}) check_everywhere(first, unspec);
    for (const char* last : {"::ffff:255.255.255.255", "64:ff9b::ffff:ffff", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff"})
        check_everywhere(last, rsv);
    check_everywhere("2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", g);
    check_everywhere("2003::", g);
    check_everywhere("2001:1::2", g);         // TURN anycast
    check_everywhere("2001::1", special);     // Teredo
    check_everywhere("2001:1::5", special);   // 2001:1::/32 besides its three anycast addresses
    check_everywhere("64:ff9b::808:808", g);  // NAT64 of a public address
    check_everywhere("2002:808:808::1", g);   // 6to4 of a public address
    check_everywhere("::ffff:8.8.8.8", g);    // IPv4-mapped public address
}

// Regression test: refused address ranges follow IANA's registries (H1).
TEST_CASE("H1: IPv4-mapped, NAT64 and 6to4 forms of every IPv4 boundary address take its class", "[H1][address]") {
    for (const auto& r : v4_rows) {
        for (const char* text : {r.below, r.first, r.last, r.above}) {
            if (!text) continue;
            const auto v4 = keyhook::parse_ip_address(text);
            const auto expected = keyhook::classify_address(v4);
            std::array<std::uint8_t, 16> mapped{}, nat64{}, six_to_four{};
            mapped[10] = mapped[11] = 0xFF;
            nat64[1] = 0x64;
            nat64[2] = 0xFF;
            nat64[3] = 0x9B;
            six_to_four[0] = 0x20;
            six_to_four[1] = 0x02;
            for (std::size_t k = 0; k < 4; ++k) {
                mapped[12 + k] = nat64[12 + k] = v4.octets[k];
                six_to_four[2 + k] = v4.octets[k];
            }
            six_to_four[15] = 1;  // the host part does not matter
            INFO(text);
            CHECK(keyhook::classify_address(keyhook::ip_address::v6(mapped)) == expected);
            CHECK(keyhook::classify_address(keyhook::ip_address::v6(nat64)) == expected);
            CHECK(keyhook::classify_address(keyhook::ip_address::v6(six_to_four)) == expected);
            const auto as_text = keyhook::to_string(keyhook::ip_address::v6(nat64));
            CHECK(keyhook::try_check_address(as_text).has_value() == (expected == g));
        }
    }
}
