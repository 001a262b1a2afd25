// The programs' request log (examples/shared/request_log.hpp, rule O3): the
// line's members, client text capped and escaped (P1), a presented key never
// written, a repeated error reported at most once a second with its count,
// and a writer that never holds its caller on a standard error that does not
// keep up.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "shared/request_log.hpp"

namespace rl = examples::request_log;
using namespace std::chrono_literals;

namespace {

rl::request_line sample_line() {
    rl::request_line r;
    r.time = keyhook::parse_timestamp("2026-11-28T12:00:00.123456Z");
    r.tenant = std::string_view("acme");
    r.tenant_known = true;
    r.key_id = std::string_view("8b50bb0e-0c46-4be9-843c-f26ce1a438ad");
    r.method = "GET";
    r.path = "/api/things";
    r.code = "VALID";
    r.latency = std::chrono::microseconds{42};
    return r;
}

}  // namespace

TEST_CASE("O3: a request line has its members in order; a tenant by name only when the store knows it",
          "[O3][gateway]") {
    auto r = sample_line();
    CHECK(rl::format_request_line(r) ==
          R"({"time":"2026-11-28T12:00:00.123Z","tenant":"acme","keyId":"8b50bb0e-0c46-4be9-843c-f26ce1a438ad",)"
          R"("method":"GET","path":"/api/things","code":"VALID","latencyMs":0.042})");
    // A tenant the store does not know: null, and its length.
    r.tenant_known = false;
    r.tenant = std::string_view("an unknown tenant");
    r.key_id.reset();
    r.code = "NOT_FOUND";
    const auto unknown = nlohmann::json::parse(rl::format_request_line(r));
    CHECK(unknown.at("tenant").is_null());
    CHECK(unknown.at("tenantLength") == 17);
    CHECK(unknown.at("keyId").is_null());
    // No tenant header: null, no length.
    r.tenant.reset();
    const auto none = nlohmann::json::parse(rl::format_request_line(r));
    CHECK(none.at("tenant").is_null());
    CHECK_FALSE(none.contains("tenantLength"));
    CHECK(none.size() == 7);
    // latencyMs: microseconds, three decimals, on both sides of a millisecond.
    const auto latency = [&r](std::chrono::nanoseconds d) {
        r.latency = d;
        return nlohmann::json::parse(rl::format_request_line(r)).at("latencyMs").dump();
    };
    CHECK(latency(0ns) == "0.0");
    CHECK(latency(999ns) == "0.0");
    CHECK(latency(999us) == "0.999");
    CHECK(latency(1000us) == "1.0");
    CHECK(latency(1234567us) == "1234.567");
    CHECK(rl::format_request_line(r).find("\"latencyMs\":1234.567}") != std::string::npos);
}

TEST_CASE("O3: client text is cut to 256 bytes, never inside a character", "[O3][P1][gateway]") {
    CHECK(rl::client_text(std::string(256, 'a')) == std::string(256, 'a'));
    CHECK(rl::client_text(std::string(257, 'a')) == std::string(256, 'a'));
    // A two-byte character at bytes 255 and 256 is left out whole; one at 254 and 255 is kept.
    CHECK(rl::client_text(std::string(255, 'a') + "\xc3\xa9") == std::string(255, 'a'));
    CHECK(rl::client_text(std::string(254, 'a') + "\xc3\xa9" + "b") == std::string(254, 'a') + "\xc3\xa9");
    auto r = sample_line();
    const std::string long_path = "/" + std::string(1000, 'p');
    r.path = long_path;
    CHECK(nlohmann::json::parse(rl::format_request_line(r)).at("path").get<std::string>().size() == 256);
}

TEST_CASE("O3: client text is escaped (P1): no control, DEL, C1 or bidirectional character is written raw",
          "[O3][P1][gateway]") {
    auto r = sample_line();
    const std::string hostile = "/a\nb\rc\x1b[31m\x7f\xc2\x9b\xe2\x80\xae\"\\\xff\xe6\x9d\xb1";
    r.path = hostile;
    r.method = "G\tET";
    r.tenant = std::string_view("ac\nme");
    const auto line = rl::format_request_line(r);
    for (const char c : line) {
        const auto u = static_cast<unsigned char>(c);
        CHECK((u >= 0x20 && u != 0x7f));
    }
    CHECK(line.find("\xc2\x9b") == std::string::npos);      // CSI (C1)
    CHECK(line.find("\xe2\x80\xae") == std::string::npos);  // RIGHT-TO-LEFT OVERRIDE
    CHECK(line.find("\\u001b") != std::string::npos);
    CHECK(line.find("\\u007f") != std::string::npos);
    CHECK(line.find("\\u009b") != std::string::npos);
    CHECK(line.find("\\u202e") != std::string::npos);
    CHECK(line.find("\xe6\x9d\xb1") != std::string::npos);  // a letter stays as it is
    const auto j = nlohmann::json::parse(line);
    // The same text back, but the byte that is not UTF-8, which reads as U+FFFD.
    CHECK(j.at("path") == "/a\nb\rc\x1b[31m\x7f\xc2\x9b\xe2\x80\xae\"\\\xef\xbf\xbd\xe6\x9d\xb1");
    CHECK(j.at("method") == "G\tET");
    CHECK(j.at("tenant") == "ac\nme");
}

TEST_CASE("O3: the key a request presented is written nowhere in its line", "[O3][gateway]") {
    const std::string key = "0450e9d6-8381-4649-8c37-c690a9e94868";
    auto r = sample_line();
    const std::string path = "/api/" + key + "/x" + key;
    r.path = path;
    r.method = key;
    r.tenant = std::string_view(key);
    r.tenant_known = true;  // even a tenant the store knows
    r.secrets = {key};
    const auto line = rl::format_request_line(r);
    CHECK(line.find(key) == std::string::npos);
    const auto j = nlohmann::json::parse(line);
    CHECK(j.at("path") == "/api/[redacted]/x[redacted]");
    CHECK(j.at("tenant") == "[redacted]");
    // Replaced before the cut: a key across byte 256 leaves no part of itself.
    const std::string across = std::string(240, 'a') + key;
    r.path = across;
    CHECK(rl::client_text(across, {key}) == std::string(240, 'a') + "[redacted]");
    CHECK(rl::format_request_line(r).find(key.substr(0, 16)) == std::string::npos);
    // An empty secret changes nothing.
    CHECK(rl::client_text("/a/b", {""}) == "/a/b");
}

TEST_CASE("O3: a repeated error is reported at most once a second, with the count it stands for", "[O3][gateway]") {
    using clock = rl::repeated_error::clock;
    rl::repeated_error e;
    const clock::time_point t0{std::chrono::hours{1}};
    CHECK(e.occurred(t0) == 0ul);           // the first at once
    CHECK_FALSE(e.occurred(t0 + 1ms));      // counted
    CHECK_FALSE(e.occurred(t0 + 999ms));    // still within the second
    CHECK(e.occurred(t0 + 1000ms) == 2ul);  // exactly a second after: reported, naming the 2 not reported
    CHECK_FALSE(e.occurred(t0 + 1999ms));
    CHECK(e.occurred(t0 + 5s) == 1ul);
    CHECK_FALSE(e.occurred(t0 + 5s + 1us));
    CHECK(e.ended() == 7ul);                  // every occurrence since it began
    CHECK_FALSE(e.ended());                   // over: nothing more to say
    CHECK(e.occurred(t0 + 5s + 2us) == 0ul);  // a new episode is reported at once
}

namespace {

std::string read_pipe(int fd) {
    std::string out;
    char buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    return out;
}

}  // namespace

TEST_CASE("O3: the writer writes whole lines in order to a file", "[O3][gateway]") {
    char name[] = "/tmp/keyhook-request-log-XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    {
        rl::line_writer w("test", fd);
        for (int i = 0; i < 1000; ++i) w.write("line " + std::to_string(i));
        w.write("a notice", rl::line_writer::kind::notice);
        CHECK(w.flush(10s));
        CHECK(w.dropped() == 0);
    }
    ::close(fd);
    std::ifstream in(name);
    std::string line;
    int i = 0;
    while (std::getline(in, line) && i < 1000) CHECK(line == "line " + std::to_string(i++));
    CHECK(i == 1000);
    CHECK(line == "a notice");
    ::unlink(name);
}

TEST_CASE("O3: a standard error nobody reads never holds the caller: lines are dropped, counted and reported",
          "[O3][gateway]") {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    // Fill the pipe so the writer cannot write a byte.
    const int flags = ::fcntl(p[1], F_GETFL);
    ::fcntl(p[1], F_SETFL, flags | O_NONBLOCK);
    std::size_t filled = 0;
    const std::string block(4096, 'f');
    for (ssize_t n; (n = ::write(p[1], block.data(), block.size())) > 0;) filled += static_cast<std::size_t>(n);
    ::fcntl(p[1], F_SETFL, flags);
    REQUIRE(filled > 0);

    rl::line_writer w("test", p[1], 1000);
    const std::string line(99, 'x');
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < 10000; ++i) w.write(line);  // 1 MB against 1000 bytes of room
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(took < 5s);  // each call appends or drops; none waits on the pipe (about a millisecond in all)
    CHECK(w.dropped() >= 10000 - 30);  // what waits is bounded: 1000 bytes queued, and a batch being written
    CHECK_FALSE(w.flush(50ms));        // nothing can be written while the pipe is full

    // A reader at last: the queued lines come out, and notices that count the dropped ones.
    std::string text;
    std::thread reader([&] { text = read_pipe(p[0]); });
    CHECK(w.flush(10s));
    w.close(10s);
    ::close(p[1]);
    reader.join();
    ::close(p[0]);
    REQUIRE(text.size() > filled);
    std::istringstream written(text.substr(filled));
    std::uint64_t lines = 0, counted = 0;
    for (std::string l; std::getline(written, l);) {
        if (l == line) {
            ++lines;
            continue;
        }
        const std::string tail = " log lines dropped: standard error did not keep up";
        REQUIRE(l.rfind("test: ", 0) == 0);
        REQUIRE(l.size() > tail.size());
        CHECK(l.substr(l.size() - tail.size()) == tail);
        counted += std::stoull(l.substr(6));
    }
    CHECK(lines >= 1);
    CHECK(counted == w.dropped());
    CHECK(lines + counted == 10000);
}

TEST_CASE("O3: closing gives up on a standard error that stays full, within its patience", "[O3][gateway]") {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    const int flags = ::fcntl(p[1], F_GETFL);
    ::fcntl(p[1], F_SETFL, flags | O_NONBLOCK);
    const std::string block(4096, 'f');
    while (::write(p[1], block.data(), block.size()) > 0) {
    }
    ::fcntl(p[1], F_SETFL, flags);
    auto w = std::make_unique<rl::line_writer>("test", p[1]);
    w->write("stuck");
    const auto started = std::chrono::steady_clock::now();
    w->close(200ms);
    CHECK(std::chrono::steady_clock::now() - started < 5s);  // 200 ms, and a poll of at most 100 ms
    w->write("after close");
    CHECK(w->dropped() == 1);
    w.reset();
    ::close(p[1]);
    ::close(p[0]);
}
