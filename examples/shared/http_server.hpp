// A small HTTP/1.1 server for the examples that listen (webhook_receiver
// --listen, and later key_gateway), built on Boost.Beast and Boost.Asio. It
// gives rule H13 by itself, whatever the handler does:
//
//   - the header section is limited while it is read (64 KiB, 100 fields:
//     431 and close, nothing more is buffered);
//   - each request must arrive whole within a deadline (10 s: 408 and close),
//     however slowly its bytes trickle; an idle kept-alive connection is
//     closed at the same deadline;
//   - at most `max_connections` connections are served (256); one more is
//     answered 503 and closed at once;
//   - framing follows RFC 9112, checked on the raw header bytes before Beast
//     parses them (Beast unfolds obs-fold lines and accepts "2, 2" and
//     repeated identical Content-Length values): a line without a colon, an
//     obs-fold line, a field name that is not a token (white space before the
//     colon), two Content-Length fields or one that is not digits give 400
//     and close; Transfer-Encoding with Content-Length gives 411 and close,
//     and so does Transfer-Encoding at all unless `allow_chunked`;
//   - pipelined requests are answered in order, one at a time per connection.
//
// The handler sees plain values (no Beast type): a request in, a response out.
// It runs on one of the server's threads and may be called concurrently for
// different connections.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace examples::http_server {

struct field {
    std::string name;
    std::string value;
};

struct request {
    std::string method;
    std::string target;          // path and query, as sent
    unsigned version = 11;       // 10 or 11
    std::vector<field> headers;  // in the order received
    std::string body;
    std::string peer_address;  // the connection's remote IP address, as text

    // The value of the first field named `name` (case-insensitive), if any.
    [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const;
};

struct response {
    int status = 200;
    std::vector<field> headers;  // Content-Length and Connection are the server's
    std::string body;
    bool close = false;  // close the connection once this is written
};

// A JSON error or result body {"error": text} (status >= 300) or {"result": text}.
[[nodiscard]] response json_answer(int status, std::string_view text);

struct options {
    std::size_t max_header_bytes = 64 * 1024;  // request line and fields
    std::size_t max_header_fields = 100;
    std::size_t max_body_bytes = 1024 * 1024;  // a larger Content-Length: 413 before reading
    std::chrono::milliseconds request_deadline{10000};
    std::size_t max_connections = 256;
    unsigned threads = 4;
    bool allow_chunked = false;  // false: any Transfer-Encoding is refused 411
    // Told the status of each answer the server makes on its own, without
    // the handler: H13's refusals (400, 408, 411, 413, 431, 503 past the
    // connection limit) and 500 for a handler that threw, and how long
    // since the request began (its connection was accepted, or the answer
    // before it on the connection was written). On the server's threads,
    // concurrently (the programs count and log them, rules O3 and O4).
    std::function<void(int status, std::chrono::steady_clock::duration took)> server_answered;
};

// Handlers. `check_head`, when set, sees each request before its body is read
// (body empty): a response it returns is sent, and the connection closed,
// without reading the body. `handle` answers the whole request.
using head_check = std::function<std::optional<response>(const request&)>;
using request_handler = std::function<response(request&&)>;
// A handler that answers later, from any thread: it must call the reply it is
// given exactly once (later calls are ignored). Meanwhile the connection reads
// nothing and no server thread waits, so a handler that waits on something
// slower than memory (a database deciding for many gateways) does not hold
// one of the `threads`. The request deadline does not cut an answer under way.
using reply_fn = std::function<void(response)>;
using deferred_handler = std::function<void(request&&, reply_fn)>;

class server {
public:
    server(options o, request_handler handle, head_check check_head = {});
    server(options o, deferred_handler handle, head_check check_head = {});
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Binds and listens; port 0 picks a free one. Returns the port, or an
    // explanation in `error`.
    [[nodiscard]] std::optional<unsigned short> listen(const std::string& host, unsigned short port,
                                                       std::string& error);
    // Serves on `threads` threads until stop(); returns then.
    void run();
    // Thread-safe, and safe to call before run(): run() then returns at once.
    void stop();

    [[nodiscard]] std::size_t open_connections() const;

    struct impl;  // http_server.cpp's; public only so its connections can name it

private:
    std::unique_ptr<impl> impl_;
};

// What the raw header section (request line, fields, the empty line) breaks
// of RFC 9112 or the limits: nullopt when it is acceptable. Exposed for tests.
struct framing_error {
    int status;  // 400, 411 or 431
    std::string why;
};
[[nodiscard]] std::optional<framing_error> check_header_section(std::string_view head, const options& o);

}  // namespace examples::http_server
