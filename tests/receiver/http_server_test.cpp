// The H13 server of the examples (examples/shared/http_server): the raw header
// checks on both sides of each limit, and the server itself over loopback
// with small limits (pipelining in order, the connection cap, the deadline).
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "shared/http_server.hpp"

namespace {

namespace hs = examples::http_server;

std::string head_with(const std::string& fields) { return "POST / HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n"; }

int status_of(const std::string& fields, const hs::options& o = {}) {
    const auto bad = hs::check_header_section(head_with(fields), o);
    return bad ? bad->status : 0;
}

// A connected loopback socket; reads wait at most 30 s (a bound, never a pace).
class client {
public:
    explicit client(unsigned short port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
        REQUIRE(fd_ >= 0);
        timeval limit{30, 0};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
        sockaddr_in at{};
        at.sin_family = AF_INET;
        at.sin_port = htons(port);
        at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(connect(fd_, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    }
    ~client() { close(fd_); }
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    void send_text(const std::string& s) const {
        REQUIRE(send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size()));
    }
    // Everything until the server closes (or the 30 s bound).
    [[nodiscard]] std::string read_to_eof() const {
        std::string all;
        char buf[4096];
        for (ssize_t n; (n = recv(fd_, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<std::size_t>(n));
        return all;
    }

private:
    int fd_;
};

// Polls `condition` until it holds or 30 s have passed (a bound, never a pace).
template <class F>
bool eventually(F condition) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!condition()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

std::vector<int> statuses(const std::string& text) {
    static const std::regex line("(^|\n)HTTP/1\\.1 ([0-9]{3}) ");
    std::vector<int> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it)
        out.push_back(std::stoi((*it)[2]));
    return out;
}

// A server on a free loopback port, run on a thread of its own.
class running {
public:
    explicit running(hs::options o)
        : server_(std::move(o), [](hs::request&& r) {
              auto a = hs::json_answer(200, r.target + " from " + r.peer_address);
              return a;
          }) {
        std::string why;
        const auto port = server_.listen("127.0.0.1", 0, why);
        REQUIRE(port);
        port_ = *port;
        thread_ = std::thread([this] { server_.run(); });
    }
    ~running() {
        server_.stop();
        thread_.join();
    }
    running(const running&) = delete;
    running& operator=(const running&) = delete;
    [[nodiscard]] unsigned short port() const { return port_; }
    [[nodiscard]] std::size_t open() const { return server_.open_connections(); }

private:
    hs::server server_;
    unsigned short port_ = 0;
    std::thread thread_;
};

}  // namespace

TEST_CASE("header section: RFC 9112 framing refused on the raw bytes", "[H13]") {
    CHECK(status_of("Content-Length: 2\r\n") == 0);
    CHECK(status_of("content-length:\t 2 \r\n") == 0);  // OWS around the value is allowed
    CHECK(status_of("Content-Length: 2\r\nContent-Length: 2\r\n") == 400);
    CHECK(status_of("Content-Length: 2\r\nContent-Length: 3\r\n") == 400);
    CHECK(status_of("Content-Length: 2abc\r\n") == 400);
    CHECK(status_of("Content-Length: +2\r\n") == 400);
    CHECK(status_of("Content-Length: 2, 2\r\n") == 400);
    CHECK(status_of("Content-Length: \r\n") == 400);
    CHECK(status_of("Transfer-Encoding : chunked\r\n") == 400);
    CHECK(status_of("x-a\t: 1\r\n") == 400);
    CHECK(status_of("no colon here\r\n") == 400);
    CHECK(status_of(": no name\r\n") == 400);
    CHECK(status_of("x-a: 1\r\n folded\r\n") == 400);
    CHECK(status_of("x-a: 1\r\n\tfolded\r\n") == 400);
    CHECK(status_of("x-a: 1\nx-b: 2\r\n") == 400);  // a bare LF
    CHECK(status_of("Transfer-Encoding: chunked\r\nContent-Length: 2\r\n") == 411);
    CHECK(status_of("Transfer-Encoding: chunked\r\n") == 411);
    hs::options chunked;
    chunked.allow_chunked = true;
    CHECK(status_of("Transfer-Encoding: chunked\r\n", chunked) == 0);
    CHECK(status_of("Transfer-Encoding: chunked\r\nContent-Length: 2\r\n", chunked) == 411);
}

TEST_CASE("header section: 100 fields and 64 KiB, not one more", "[H13]") {
    std::string fields;
    for (int i = 0; i < 99; ++i) fields += "h" + std::to_string(i) + ": v\r\n";  // + Host: 100
    CHECK(status_of(fields) == 0);
    CHECK(status_of(fields + "h99: v\r\n") == 431);
    const std::string base = head_with("x-pad: \r\n");
    const std::string pad(65536 - base.size(), 'p');
    CHECK_FALSE(hs::check_header_section(head_with("x-pad: " + pad + "\r\n"), {}));
    const auto over = hs::check_header_section(head_with("x-pad: " + pad + "p\r\n"), {});
    REQUIRE(over);
    CHECK(over->status == 431);
}

TEST_CASE("server: pipelined requests answered in order", "[H13]") {
    hs::options o;
    o.request_deadline = std::chrono::milliseconds(500);
    running s(o);
    client c(s.port());
    c.send_text(
        "GET /one HTTP/1.1\r\nHost: x\r\n\r\nPOST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
        "GET /three HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string all = c.read_to_eof();
    CHECK(statuses(all) == std::vector<int>{200, 200, 200});
    const auto one = all.find("/one"), two = all.find("/two"), three = all.find("/three");
    CHECK((one < two && two < three && three != std::string::npos));
    // The handler sees the connection's peer (key_gateway's caller when no proxy is trusted, K16).
    CHECK(all.find("/three from 127.0.0.1\"") != std::string::npos);
}

TEST_CASE("server: past the connection cap, 503 and close; the slot frees at the deadline", "[H13]") {
    hs::options o;
    o.max_connections = 1;
    o.request_deadline = std::chrono::milliseconds(300);
    running s(o);
    client slow(s.port());
    slow.send_text("GET / HTTP/1.1\r\n");  // never finished
    client second(s.port());
    CHECK(statuses(second.read_to_eof()) == std::vector<int>{503});
    // The slow one is answered 408 at the deadline, and closed.
    CHECK(statuses(slow.read_to_eof()) == std::vector<int>{408});
    // Its slot frees once the server has closed it (after a short linger).
    CHECK(eventually([&] { return s.open() == 0; }));
    client third(s.port());
    third.send_text("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(statuses(third.read_to_eof()) == std::vector<int>{200});
}

TEST_CASE("server: a body over the limit is refused 413 before it is read", "[H13]") {
    hs::options o;
    o.max_body_bytes = 10;
    running s(o);
    client c(s.port());
    c.send_text("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n");
    CHECK(statuses(c.read_to_eof()) == std::vector<int>{413});
    client d(s.port());
    d.send_text("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123456789");
    CHECK(statuses(d.read_to_eof()) == std::vector<int>{200});
}

TEST_CASE("server: a deferred handler answers later without holding a server thread", "[H13][K17]") {
    // One server thread. The first request to /hold is kept (its reply stored)
    // while other connections are answered; it is answered after the request
    // deadline has passed, and its pipelined successor comes after it.
    hs::options o;
    o.threads = 1;
    o.request_deadline = std::chrono::milliseconds(300);
    std::mutex m;
    std::vector<hs::reply_fn> held;
    auto server = std::make_unique<hs::server>(o, [&](hs::request&& r, hs::reply_fn reply) {
        if (r.target == "/hold") {
            std::lock_guard<std::mutex> hold(m);
            held.push_back(std::move(reply));
            return;
        }
        if (r.target == "/throw") throw std::runtime_error("handler failed");
        reply(hs::json_answer(200, r.target));
    });
    std::string why;
    const auto port = server->listen("127.0.0.1", 0, why);
    REQUIRE(port);
    std::thread runner([&] { server->run(); });

    client kept(*port);
    kept.send_text("GET /hold HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    REQUIRE(eventually([&] {
        std::lock_guard<std::mutex> hold(m);
        return held.size() == 1;
    }));
    {
        client other(*port);  // answered while /hold waits: no server thread is held
        other.send_text("GET /other HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        const auto text = other.read_to_eof();
        CHECK(statuses(text) == std::vector<int>{200});
        CHECK(text.find("/other") != std::string::npos);
    }
    {
        client failing(*port);  // a handler that throws before replying: 500 and close
        failing.send_text("GET /throw HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(statuses(failing.read_to_eof()) == std::vector<int>{500});
    }
    // The deadline passes while the handler holds the request: nothing is cut.
    const auto past_deadline = std::chrono::steady_clock::now() + 2 * o.request_deadline;
    CHECK(eventually([&] { return std::chrono::steady_clock::now() >= past_deadline; }));
    hs::reply_fn reply;
    {
        std::lock_guard<std::mutex> hold(m);
        reply = held.front();
    }
    reply(hs::json_answer(200, "held answer"));
    reply(hs::json_answer(500, "a second reply is ignored"));
    const auto text = kept.read_to_eof();
    CHECK(statuses(text) == std::vector<int>{200, 200});
    const auto first = text.find("held answer"), second = text.find("/after");
    CHECK((first != std::string::npos && second != std::string::npos && first < second));
    CHECK(text.find("a second reply") == std::string::npos);

    // A reply that outlives the server (held, never called, then called late):
    // the connection closes with the server, and the late reply does nothing.
    client late(*port);
    late.send_text("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
    REQUIRE(eventually([&] {
        std::lock_guard<std::mutex> hold(m);
        return held.size() == 2;
    }));
    server->stop();
    runner.join();
    server.reset();
    CHECK(late.read_to_eof().empty());
    held.back()(hs::json_answer(200, "too late"));
}
