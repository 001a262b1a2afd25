// The H13 server of http_server.hpp. One connection object per accepted
// socket, on its own strand. Bytes are read into `in_`; the header section is
// found, counted and checked there (framing, limits) before Beast's parser
// sees it, then the parser reads the body. One request at a time per
// connection: bytes after it stay in `in_` for the next (pipelining, answered
// in order). One timer per connection enforces the whole-request deadline.
#include "shared/http_server.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <cstdint>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <nlohmann/json.hpp>

namespace examples::http_server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

bool iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

// RFC 9110 tchar.
bool is_token_char(char c) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// How long a connection that is being closed after an error answer keeps
// reading (and dropping) what the client still sends, so that closing with
// unread data (a TCP reset) does not destroy the answer before the client
// reads it. Bounded in time and bytes; nothing is kept.
constexpr std::chrono::milliseconds linger_time{1000};
constexpr std::size_t linger_bytes = 4 << 20;

}  // namespace

std::optional<std::string_view> request::header(std::string_view name) const {
    for (const auto& f : headers)
        if (iequal(f.name, name)) return std::string_view(f.value);
    return std::nullopt;
}

response json_answer(int status, std::string_view text) {
    nlohmann::json body;
    body[status < 300 ? "result" : "error"] = std::string(text);
    response r;
    r.status = status;
    r.headers.push_back({"Content-Type", "application/json"});
    // ensure_ascii and replace: whatever the text holds, the answer is ASCII JSON.
    r.body = body.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
    return r;
}

std::optional<framing_error> check_header_section(std::string_view head, const options& o) {
    if (head.size() > o.max_header_bytes)
        return framing_error{431, "the header section exceeds " + std::to_string(o.max_header_bytes) + " bytes"};
    std::size_t line_no = 0, fields = 0, content_lengths = 0;
    bool transfer_encoding = false;
    while (!head.empty()) {
        const auto end = head.find("\r\n");
        const std::string_view line = head.substr(0, end);
        head.remove_prefix(end == std::string_view::npos ? head.size() : end + 2);
        ++line_no;
        // Lines are shown by number, never quoted: a malformed line may hold a key.
        const std::string where = "header line " + std::to_string(line_no);
        if (line.find_first_of("\r\n") != std::string_view::npos)
            return framing_error{400, where + " holds a bare CR or LF"};
        if (line_no == 1 || line.empty()) continue;  // the request line is Beast's to read
        if (line.front() == ' ' || line.front() == '\t')
            return framing_error{400, where + " is an obs-fold line (a field continued on a new line)"};
        if (++fields > o.max_header_fields)
            return framing_error{431, "more than " + std::to_string(o.max_header_fields) + " header fields"};
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) return framing_error{400, where + " has no colon"};
        const std::string_view name = line.substr(0, colon);
        if (name.empty()) return framing_error{400, where + " has an empty field name"};
        for (const char c : name) {
            if (c == ' ' || c == '\t') return framing_error{400, where + " has white space before its colon"};
            if (!is_token_char(c)) return framing_error{400, where + " has a field name that is not a token"};
        }
        const std::string_view value = trim_ows(line.substr(colon + 1));
        if (iequal(name, "content-length")) {
            if (++content_lengths > 1) return framing_error{400, "more than one Content-Length field"};
            if (value.empty() || value.find_first_not_of("0123456789") != std::string_view::npos)
                return framing_error{400, "Content-Length is not a number of digits"};
        } else if (iequal(name, "transfer-encoding")) {
            transfer_encoding = true;
        }
    }
    if (transfer_encoding && content_lengths > 0)
        return framing_error{411, "Transfer-Encoding and Content-Length together; send Content-Length alone"};
    if (transfer_encoding && !o.allow_chunked)
        return framing_error{411, "a body must come with its Content-Length, not a Transfer-Encoding"};
    return std::nullopt;
}

// Whether the server still exists, for replies that outlive it (a deferred
// handler's reply called, or only destroyed, after the server is gone): a
// reply takes the mutex and posts only while `alive`; the server clears it
// first thing as it is destroyed, so nothing is posted to a dead io_context.
struct lifeline {
    std::mutex mutex;
    bool alive = true;
};

struct server::impl {
    options opts;
    request_handler handle;
    deferred_handler deferred;  // instead of `handle`, when set
    head_check check_head;
    // Declared before the io_context: connections destroyed with it still count down.
    std::atomic<std::size_t> open{0};
    std::atomic<std::size_t> rejecting{0};
    asio::io_context ioc;
    tcp::acceptor acceptor{ioc};
    asio::steady_timer accept_pause{ioc};
    std::shared_ptr<lifeline> life = std::make_shared<lifeline>();
    // The connections a deferred handler holds a request of: kept here, not
    // by the replies (which hold them weakly), so that they are closed with
    // the server, before its io_context, whoever still holds a reply.
    // Declared after the io_context: destroyed before it.
    std::mutex answering_mutex;
    std::map<const void*, std::shared_ptr<void>> answering;

    impl(options o, request_handler h, deferred_handler d, head_check c)
        : opts(std::move(o)), handle(std::move(h)), deferred(std::move(d)), check_head(std::move(c)) {}
    impl(const impl&) = delete;
    impl& operator=(const impl&) = delete;
    ~impl() {
        {
            std::lock_guard<std::mutex> hold(life->mutex);
            life->alive = false;
        }
        std::map<const void*, std::shared_ptr<void>> held;
        {
            std::lock_guard<std::mutex> hold(answering_mutex);
            held.swap(answering);
        }
    }
    void accept();
};

namespace {

class connection : public std::enable_shared_from_this<connection> {
public:
    connection(server::impl& srv, tcp::socket sock, bool rejected)
        : srv_(srv), sock_(std::move(sock)), timer_(sock_.get_executor()), rejected_(rejected) {}
    ~connection() {
        if (rejected_)
            --srv_.rejecting;
        else
            --srv_.open;
    }
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    void start() {
        began_ = std::chrono::steady_clock::now();
        if (rejected_) {
            auto r = json_answer(503, "too many open connections; retry later");
            r.headers.push_back({"Retry-After", "1"});
            r.close = true;
            told(503);
            return send(std::move(r));
        }
        arm(srv_.opts.request_deadline);
        process();
    }

private:
    void arm(std::chrono::milliseconds after) {
        const unsigned generation = ++generation_;
        timer_.expires_after(after);
        timer_.async_wait([self = shared_from_this(), generation](beast::error_code ec) {
            if (!ec && generation == self->generation_) self->on_deadline();
        });
    }

    void on_deadline() {
        if (answering_) return;                     // the handler holds the request; its answer re-arms the deadline
        if (closing_ || writing_) return finish();  // a client that does not read its answer
        // A request under way gets 408; an idle kept-alive connection is just closed.
        const bool under_way = !in_.empty() || parser_.has_value();
        if (!under_way) return finish();
        beast::error_code ignored;
        sock_.cancel(ignored);  // the pending read ends; its handler sees closing_
        auto r = json_answer(408, "the request did not arrive whole within " +
                                      std::to_string(srv_.opts.request_deadline.count()) + " ms");
        r.close = true;
        told(408);
        send(std::move(r));
    }

    void read_more() {
        reading_ = true;
        sock_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
            self->reading_ = false;
            if (self->closing_ || self->writing_) return;  // the deadline answered meanwhile
            if (ec) return self->finish();
            self->in_.append(self->chunk_.data(), n);
            self->process();
        });
    }

    void refuse(int status, std::string why) {
        auto r = json_answer(status, why);
        r.close = true;
        told(status);
        send(std::move(r));
    }

    // An answer the server makes on its own, told to whoever asked (options::server_answered).
    void told(int status) {
        if (srv_.opts.server_answered) srv_.opts.server_answered(status, std::chrono::steady_clock::now() - began_);
    }

    // Reads as far as the bytes in `in_` allow; asks for more, or answers.
    void process() {
        if (!parser_) {
            // RFC 9112 2.2: empty lines before a request line are ignored.
            while (scanned_ == 0 && in_.size() >= 2 && in_[0] == '\r' && in_[1] == '\n') in_.erase(0, 2);
            // Count lines as they arrive: past either limit, answer at once.
            std::size_t end = std::string::npos;
            for (std::size_t at; (at = in_.find("\r\n", scanned_)) != std::string::npos; scanned_ = at + 2) {
                if (at == scanned_ && scanned_ > 0) {
                    end = at + 2;
                    break;
                }
                if (scanned_ > 0 && ++fields_ > srv_.opts.max_header_fields)
                    return refuse(431, "more than " + std::to_string(srv_.opts.max_header_fields) + " header fields");
            }
            if (end == std::string::npos) {
                if (in_.size() > srv_.opts.max_header_bytes)
                    return refuse(
                        431, "the header section exceeds " + std::to_string(srv_.opts.max_header_bytes) + " bytes");
                return read_more();
            }
            const std::string_view head(in_.data(), end);
            if (auto bad = check_header_section(head, srv_.opts)) return refuse(bad->status, std::move(bad->why));
            parser_.emplace();
            parser_->header_limit(static_cast<std::uint32_t>(srv_.opts.max_header_bytes + 4));
            parser_->body_limit(static_cast<std::uint64_t>(srv_.opts.max_body_bytes));
            parser_->eager(true);
            beast::error_code ec;
            const std::size_t used = parser_->put(asio::buffer(head), ec);
            if (ec == bhttp::error::body_limit)
                return refuse(413, "the body exceeds " + std::to_string(srv_.opts.max_body_bytes) + " bytes");
            if (ec || !parser_->is_header_done() || used != head.size())
                return refuse(400, "malformed request: " + ec.message());
            in_.erase(0, used);
            const auto& h = parser_->get();
            head_.method = std::string(h.method_string());
            head_.target = std::string(h.target());
            head_.version = h.version();
            beast::error_code peer_ec;
            const auto peer = sock_.remote_endpoint(peer_ec);
            head_.peer_address = peer_ec ? std::string() : peer.address().to_string();
            head_.headers.clear();
            for (const auto& f : h) head_.headers.push_back({std::string(f.name_string()), std::string(f.value())});
            if (srv_.check_head) {
                if (auto early = srv_.check_head(head_)) {
                    // A body left unread: the connection cannot carry another request.
                    if (!parser_->is_done() || !parser_->keep_alive()) early->close = true;
                    next_request();
                    return send(std::move(*early));
                }
            }
            if (!parser_->is_done() && in_.empty() && head_.version >= 11) {
                if (const auto expect = head_.header("expect"); expect && iequal(*expect, "100-continue"))
                    return write_continue();
            }
        }
        while (!parser_->is_done()) {
            if (in_.empty()) return read_more();
            beast::error_code ec;
            const std::size_t used = parser_->put(asio::buffer(in_), ec);
            in_.erase(0, used);
            if (ec == bhttp::error::need_more) {
                if (used == 0) return read_more();
                continue;
            }
            if (ec == bhttp::error::body_limit)
                return refuse(413, "the body exceeds " + std::to_string(srv_.opts.max_body_bytes) + " bytes");
            if (ec) return refuse(400, "malformed body framing: " + ec.message());
        }
        const bool keep_alive = parser_->keep_alive();
        request req = std::move(head_);
        req.body = parser_->release().body();
        next_request();
        if (srv_.deferred) return hand_over(std::move(req), keep_alive);
        response r;
        try {
            r = srv_.handle(std::move(req));
        } catch (const std::exception&) {
            r = json_answer(500, "the request could not be handled");
            r.close = true;
            told(500);
        }
        if (!keep_alive) r.close = true;
        send(std::move(r));
    }

    // To a deferred handler: its reply is taken once, on this connection's
    // strand; a handler that throws before replying gets the 500 the
    // synchronous handler's exception gets.
    void hand_over(request req, bool keep_alive) {
        answering_ = true;
        {
            std::lock_guard<std::mutex> hold(srv_.answering_mutex);
            srv_.answering.emplace(this, shared_from_this());
        }
        struct once {
            std::atomic<bool> done{false};
        };
        auto state = std::make_shared<once>();
        reply_fn reply = [weak = weak_from_this(), life = srv_.life, state, keep_alive](response r) {
            if (state->done.exchange(true)) return;
            if (!keep_alive) r.close = true;
            std::lock_guard<std::mutex> hold(life->mutex);
            const auto self = weak.lock();
            if (!life->alive || !self) return;  // the server is gone, and the connection with it
            asio::post(self->sock_.get_executor(), [self, r = std::move(r)]() mutable {
                {
                    std::lock_guard<std::mutex> held(self->srv_.answering_mutex);
                    self->srv_.answering.erase(self.get());
                }
                self->answering_ = false;
                self->send(std::move(r));
            });
        };
        try {
            srv_.deferred(std::move(req), reply);
        } catch (const std::exception&) {
            if (state->done.load()) return;
            told(500);
            auto r = json_answer(500, "the request could not be handled");
            r.close = true;
            reply(std::move(r));
        }
    }

    // Forgets the request just read; bytes after it stay in `in_`.
    void next_request() {
        parser_.reset();
        scanned_ = fields_ = 0;
        head_ = request{};
    }

    void write_continue() {
        writing_ = true;
        static constexpr std::string_view text = "HTTP/1.1 100 Continue\r\n\r\n";
        asio::async_write(sock_, asio::buffer(text.data(), text.size()),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              self->writing_ = false;
                              if (ec || self->closing_) return self->finish();
                              self->process();
                          });
    }

    void send(response r) {
        closing_ = r.close;
        auto msg = std::make_shared<bhttp::response<bhttp::string_body>>();
        msg->version(11);
        msg->result(static_cast<unsigned>(r.status));
        for (auto& f : r.headers) msg->insert(f.name, f.value);
        msg->body() = std::move(r.body);
        msg->keep_alive(!r.close);
        msg->prepare_payload();
        writing_ = true;
        bhttp::async_write(sock_, *msg, [self = shared_from_this(), msg](beast::error_code ec, std::size_t) {
            self->writing_ = false;
            if (ec) return self->finish();
            if (self->closing_) return self->linger();
            // The next request's deadline starts now; bytes already here are its start.
            self->began_ = std::chrono::steady_clock::now();
            self->arm(self->srv_.opts.request_deadline);
            self->process();
        });
    }

    // After an answer that closes: no more writes; what the client still
    // sends is read and dropped for a moment, then the socket is closed.
    void linger() {
        beast::error_code ignored;
        sock_.shutdown(tcp::socket::shutdown_send, ignored);
        in_.clear();
        arm(std::min(linger_time, srv_.opts.request_deadline));
        drain();
    }

    void drain() {
        if (reading_) return;  // a read from before the answer is still pending: it ends in finish()
        reading_ = true;
        sock_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
            self->reading_ = false;
            self->drained_ += n;
            if (ec || self->drained_ > linger_bytes) return self->finish();
            self->drain();
        });
    }

    void finish() {
        ++generation_;
        beast::error_code ignored;
        timer_.cancel();
        sock_.shutdown(tcp::socket::shutdown_both, ignored);
        sock_.close(ignored);
    }

    server::impl& srv_;
    tcp::socket sock_;
    asio::steady_timer timer_;
    bool rejected_;
    unsigned generation_ = 0;
    std::chrono::steady_clock::time_point began_{};  // the current request's start (options::server_answered)
    bool reading_ = false, writing_ = false, closing_ = false;
    bool answering_ = false;  // a deferred handler holds the request
    std::size_t scanned_ = 0, fields_ = 0, drained_ = 0;
    std::string in_;
    std::array<char, 16384> chunk_{};
    std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
    request head_;
};

}  // namespace

void server::impl::accept() {
    acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket sock) {
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
        if (!ec) {
            if (open.load() < opts.max_connections) {
                ++open;
                std::make_shared<connection>(*this, std::move(sock), false)->start();
            } else if (rejecting.load() < std::max<std::size_t>(64, opts.max_connections)) {
                ++rejecting;
                std::make_shared<connection>(*this, std::move(sock), true)->start();
            }
            // Past the cap, answered 503 while few are; else closed unanswered (its
            // destructor): a flood of connections cannot hold more.
            return accept();
        }
        // Out of descriptors or memory: try again shortly rather than spin.
        accept_pause.expires_after(std::chrono::milliseconds(50));
        accept_pause.async_wait([this](beast::error_code wait_ec) {
            if (!wait_ec) accept();
        });
    });
}

server::server(options o, request_handler handle, head_check check_head)
    : impl_(std::make_unique<impl>(std::move(o), std::move(handle), deferred_handler{}, std::move(check_head))) {}
server::server(options o, deferred_handler handle, head_check check_head)
    : impl_(std::make_unique<impl>(std::move(o), request_handler{}, std::move(handle), std::move(check_head))) {}

server::~server() = default;

std::optional<unsigned short> server::listen(const std::string& host, unsigned short port, std::string& error) {
    beast::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec) {
        error = "not an IP address";
        return std::nullopt;
    }
    const tcp::endpoint at(address, port);
    auto& a = impl_->acceptor;
    if (!a.open(at.protocol(), ec)) a.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) a.bind(at, ec);
    if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
        error = ec.message();
        a.close(ec);
        return std::nullopt;
    }
    impl_->accept();
    return a.local_endpoint().port();
}

void server::run() {
    std::vector<std::thread> extra;
    for (unsigned i = 1; i < std::max(1U, impl_->opts.threads); ++i) extra.emplace_back([this] { impl_->ioc.run(); });
    impl_->ioc.run();
    for (auto& t : extra) t.join();
}

void server::stop() { impl_->ioc.stop(); }

std::size_t server::open_connections() const { return impl_->open.load(); }

}  // namespace examples::http_server
