// The programs' metrics and health (examples/shared/metrics, rule O4): each
// program's families and nothing else, every series of a closed label set
// present from the start, counts exact; /healthz on both sides of the stale
// period, with and without a store, with a probe; the listener's answers over
// loopback. tests/interop/metrics_prometheus.py checks the same through a
// real Prometheus server.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "shared/metrics.hpp"

namespace {

namespace metrics = examples::metrics;

// The value of one sample line "name{labels} value" in a text exposition; -1 when absent.
double sample(const std::string& text, const std::string& series) {
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
}

std::size_t count_of(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

// Polls `condition` until it holds or 30 s have passed (a bound, never a pace).
template <class F>
bool within_bound(F condition) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!condition()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

// One HTTP/1.0 exchange over loopback: the whole answer, read to its close.
std::string http_get(unsigned short port, const std::string& request) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    timeval limit{30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(port);
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    REQUIRE(send(fd, request.data(), request.size(), MSG_NOSIGNAL) == ssize_t(request.size()));
    std::string all;
    char buf[4096];
    for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<std::size_t>(n));
    close(fd);
    return all;
}

}  // namespace

TEST_CASE("O4: the receiver's registry has its request results and replay store errors, every result at 0", "[O4]") {
    REQUIRE(metrics::built());
    metrics::registry r(metrics::program::webhook_receiver);
    const auto text = r.text();
    CHECK(text.find("# HELP keyhook_receiver_requests_total ") != std::string::npos);
    CHECK(text.find("# TYPE keyhook_receiver_requests_total counter") != std::string::npos);
    for (const auto name : metrics::receiver_result_names)
        CHECK(sample(text, "keyhook_receiver_requests_total{result=\"" + std::string(name) + "\"}") == 0);
    CHECK(count_of(text, "\nkeyhook_receiver_requests_total{") == metrics::receiver_result_names.size());
    CHECK(sample(text, "keyhook_store_errors_total{store=\"replay\"}") == 0);
    // Only its own store, and no other program's family.
    CHECK(text.find("store=\"key\"") == std::string::npos);
    CHECK(text.find("store=\"delivery\"") == std::string::npos);
    CHECK(text.find("keyhook_gateway_") == std::string::npos);
    CHECK(text.find("keyhook_deliver") == std::string::npos);
}

TEST_CASE("O4: counts are exact, and recording into another program's family changes nothing", "[O4]") {
    metrics::registry r(metrics::program::webhook_receiver);
    // Four threads at once: no count is lost.
    std::thread threads[4];
    for (auto& t : threads)
        t = std::thread([&r] {
            for (int i = 0; i < 1000; ++i) r.receiver_request(metrics::receiver_result::accepted);
        });
    for (auto& t : threads) t.join();
    r.receiver_request(metrics::receiver_result::bad_signature);
    r.store_error(metrics::store::replay);
    r.store_error(metrics::store::key);  // not the receiver's store
    r.gateway_decision(metrics::gateway_code::VALID, std::chrono::milliseconds(1));
    r.delivery_attempt(metrics::delivery_outcome::delivered, std::chrono::milliseconds(1));
    r.deliveries_pending(3);
    const auto text = r.text();
    CHECK(sample(text, "keyhook_receiver_requests_total{result=\"accepted\"}") == 4000);
    CHECK(sample(text, "keyhook_receiver_requests_total{result=\"bad_signature\"}") == 1);
    CHECK(sample(text, "keyhook_receiver_requests_total{result=\"replay\"}") == 0);
    CHECK(sample(text, "keyhook_store_errors_total{store=\"replay\"}") == 1);
    CHECK(text.find("store=\"key\"") == std::string::npos);
    CHECK(text.find("keyhook_gateway_") == std::string::npos);
    CHECK(text.find("keyhook_deliver") == std::string::npos);
}

TEST_CASE("O4: the gateway's registry: one series per answer code, and a histogram counting every decision", "[O4]") {
    metrics::registry r(metrics::program::key_gateway);
    for (const auto name : metrics::gateway_code_names)
        CHECK(sample(r.text(), "keyhook_gateway_decisions_total{code=\"" + std::string(name) + "\"}") == 0);
    r.gateway_decision(metrics::gateway_code::VALID, std::chrono::microseconds(50));       // below the first bound
    r.gateway_decision(metrics::gateway_code::NOT_FOUND, std::chrono::microseconds(100));  // on it: counted in it
    r.gateway_decision(metrics::gateway_code::UNAVAILABLE, std::chrono::seconds(2));       // past the last bound
    const auto text = r.text();
    CHECK(sample(text, "keyhook_gateway_decisions_total{code=\"VALID\"}") == 1);
    CHECK(sample(text, "keyhook_gateway_decisions_total{code=\"NOT_FOUND\"}") == 1);
    CHECK(sample(text, "keyhook_gateway_decisions_total{code=\"UNAVAILABLE\"}") == 1);
    CHECK(sample(text, "keyhook_gateway_decision_seconds_count") == 3);
    CHECK(sample(text, "keyhook_gateway_decision_seconds_bucket{le=\"0.0001\"}") == 2);
    CHECK(sample(text, "keyhook_gateway_decision_seconds_bucket{le=\"1\"}") == 2);
    CHECK(sample(text, "keyhook_gateway_decision_seconds_bucket{le=\"+Inf\"}") == 3);
    CHECK(sample(text, "keyhook_store_errors_total{store=\"key\"}") == 0);
    CHECK(text.find("keyhook_receiver_") == std::string::npos);
}

TEST_CASE("O4: the deliverer's registry: attempts by outcome, their histogram, and the store-wide gauges", "[O4]") {
    metrics::registry r(metrics::program::webhook_deliver);
    for (const auto name : metrics::delivery_outcome_names)
        CHECK(sample(r.text(), "keyhook_delivery_attempts_total{outcome=\"" + std::string(name) + "\"}") == 0);
    r.delivery_attempt(metrics::delivery_outcome::retry, std::chrono::milliseconds(20));
    r.delivery_attempt(metrics::delivery_outcome::delivered, std::chrono::milliseconds(40));
    r.deliveries_pending(7);
    r.endpoints_disabled(1);
    r.deliveries_pending(6);  // a gauge: the last value, not a sum
    const auto text = r.text();
    CHECK(sample(text, "keyhook_delivery_attempts_total{outcome=\"retry\"}") == 1);
    CHECK(sample(text, "keyhook_delivery_attempts_total{outcome=\"delivered\"}") == 1);
    CHECK(sample(text, "keyhook_delivery_attempt_seconds_count") == 2);
    CHECK(sample(text, "keyhook_delivery_attempt_seconds_bucket{le=\"0.025\"}") == 1);
    CHECK(sample(text, "keyhook_deliveries_pending") == 6);
    CHECK(sample(text, "keyhook_endpoints_disabled") == 1);
    CHECK(sample(text, "keyhook_store_errors_total{store=\"delivery\"}") == 0);
}

TEST_CASE("O4: /healthz without a store is 200 until shutdown, then 503 saying so", "[O4]") {
    metrics::health h;
    CHECK(h.check().ok);
    CHECK(metrics::health::body(h.check()) == "{\"status\":\"ok\"}\n");
    h.shutting_down();
    const auto a = h.check();
    CHECK_FALSE(a.ok);
    CHECK(metrics::health::body(a) == "{\"status\":\"unavailable\",\"reason\":\"shutting down\"}\n");
}

TEST_CASE("O4: /healthz stays 200 while the store has failed for less than the stale period, 503 past it", "[O4]") {
    SECTION("within the period: still serving") {
        metrics::health h(std::chrono::hours(1));
        h.store_failed();
        h.store_failed();
        CHECK(h.check().ok);
    }
    SECTION("past the period: 503 with a one-line reason naming no store") {
        metrics::health h(std::chrono::milliseconds(20));
        h.store_failed();
        CHECK(within_bound([&h] { return !h.check().ok; }));
        const auto a = h.check();
        CHECK(a.reason == "the store has been unreadable or unwritable for more than 0.02 s");
        const auto body = metrics::health::body(a);
        CHECK(body.find('\n') == body.size() - 1);
        // One success ends it: serving again.
        h.store_ok();
        CHECK(h.check().ok);
    }
    SECTION("failures after the first do not restart the period") {
        metrics::health h(std::chrono::milliseconds(20));
        h.store_failed();
        CHECK(within_bound([&h] {
            h.store_failed();
            return !h.check().ok;
        }));
    }
    SECTION("the policy value is 5 s, K17's stale period") {
        CHECK(metrics::health::default_stale_period == std::chrono::seconds(5));
        metrics::health h;
        h.store_failed();
        CHECK(h.check().ok);
    }
}

TEST_CASE("O4: /healthz probes a store nothing has used for a second, at most once a second", "[O4]") {
    metrics::health h(std::chrono::milliseconds(0));
    std::atomic<int> probes{0};
    std::atomic<bool> answers{false};
    h.set_probe([&] {
        ++probes;
        return answers.load();
    });
    // Never heard from: probed at once; it fails, and with no stale period that is 503.
    CHECK(within_bound([&h] { return !h.check().ok; }));
    CHECK(probes == 1);
    // Checked again and again within the second: no second probe.
    for (int i = 0; i < 100; ++i) (void)h.check();
    CHECK(probes == 1);
    // The store recovers while idle: the next probe (a second later) sees it.
    answers = true;
    CHECK(within_bound([&h] { return h.check().ok; }));
    CHECK(probes == 2);
    // A request that used the store just now: no probe needed.
    h.store_ok();
    (void)h.check();
    CHECK(probes == 2);
}

TEST_CASE("O4: the listener's answers: /metrics, /healthz, 404 elsewhere, 405 for another method", "[O4]") {
    metrics::registry r(metrics::program::webhook_receiver);
    metrics::health h;
    r.receiver_request(metrics::receiver_result::replay);
    const auto m = metrics::answer(r, h, "GET", "/metrics");
    CHECK(m.status == 200);
    CHECK(m.content_type == "text/plain; version=0.0.4; charset=utf-8");
    CHECK(sample(m.body, "keyhook_receiver_requests_total{result=\"replay\"}") == 1);
    CHECK(metrics::answer(r, h, "GET", "/metrics?x=1").status == 200);
    const auto ok = metrics::answer(r, h, "GET", "/healthz");
    CHECK(ok.status == 200);
    CHECK(ok.content_type == "application/json");
    CHECK(ok.body == "{\"status\":\"ok\"}\n");
    CHECK(metrics::answer(r, h, "GET", "/").status == 404);
    CHECK(metrics::answer(r, h, "GET", "/metrics/").status == 404);
    CHECK(metrics::answer(r, h, "GET", "/healthz2").status == 404);
    CHECK(metrics::answer(r, h, "POST", "/metrics").status == 405);
    CHECK(metrics::answer(r, h, "POST", "/nowhere").status == 404);
    h.shutting_down();
    CHECK(metrics::answer(r, h, "GET", "/healthz").status == 503);
}

TEST_CASE("O4: --metrics-listen takes HOST:PORT as --listen does", "[O4]") {
    const auto a = metrics::parse_listen_address("127.0.0.1:9100");
    REQUIRE(a);
    CHECK(a->host == "127.0.0.1");
    CHECK(a->port == 9100);
    const auto v6 = metrics::parse_listen_address("[::1]:0");
    REQUIRE(v6);
    CHECK(v6->host == "::1");
    CHECK(v6->port == 0);
    CHECK(metrics::parse_listen_address("127.0.0.1:65535"));
    CHECK_FALSE(metrics::parse_listen_address("127.0.0.1:65536"));
    CHECK_FALSE(metrics::parse_listen_address("127.0.0.1"));
    CHECK_FALSE(metrics::parse_listen_address(":9100"));
    CHECK_FALSE(metrics::parse_listen_address("127.0.0.1:"));
    CHECK_FALSE(metrics::parse_listen_address("127.0.0.1:9x"));
    CHECK_FALSE(metrics::parse_listen_address("[::1:80"));
}

TEST_CASE("O4: the listener serves over loopback on a port of its own, and stops", "[O4]") {
    metrics::registry r(metrics::program::webhook_receiver);
    metrics::health h;
    metrics::listener l(r, h);
    std::string error;
    const auto port = l.start({"127.0.0.1", 0}, error);
    REQUIRE(port);
    r.receiver_request(metrics::receiver_result::accepted);
    const auto m = http_get(*port, "GET /metrics HTTP/1.0\r\n\r\n");
    CHECK(m.rfind("HTTP/1.1 200 ", 0) == 0);
    CHECK(m.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != std::string::npos);
    CHECK(m.find("\nkeyhook_receiver_requests_total{result=\"accepted\"} 1\n") != std::string::npos);
    const auto health = http_get(*port, "GET /healthz HTTP/1.0\r\n\r\n");
    CHECK(health.rfind("HTTP/1.1 200 ", 0) == 0);
    CHECK(health.find("\r\n\r\n{\"status\":\"ok\"}\n") != std::string::npos);
    CHECK(http_get(*port, "GET /other HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 404 ", 0) == 0);
    const auto wrong = http_get(*port, "DELETE /metrics HTTP/1.0\r\n\r\n");
    CHECK(wrong.rfind("HTTP/1.1 405 ", 0) == 0);
    CHECK(wrong.find("\r\nAllow: GET\r\n") != std::string::npos);
    h.shutting_down();
    const auto stopping = http_get(*port, "GET /healthz HTTP/1.0\r\n\r\n");
    CHECK(stopping.rfind("HTTP/1.1 503 ", 0) == 0);
    CHECK(
        std::regex_search(stopping, std::regex("\r\n\r\n\\{\"status\":\"unavailable\",\"reason\":\"[^\"\n]+\"\\}\n$")));
    // A second listener on the address in use: refused, with the reason.
    metrics::listener again(r, h);
    std::string why;
    CHECK_FALSE(again.start({"127.0.0.1", *port}, why));
    CHECK_FALSE(why.empty());
    l.stop();
}
