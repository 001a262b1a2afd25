// The load generator of the receiver's speed row (scripts/bench-receiver.py):
// N keep-alive connections, each sending one request, reading its whole
// answer and sending the next, on one thread (Boost.Asio). The request is
// sent byte for byte as read from a file, so both servers of the row get the
// same bytes; the answer is read just enough to find its end and status, so
// the generator spends little CPU of its own.
//
//   webhook_receiver_load --connect HOST:PORT --request FILE --connections N
//     --seconds S [--warmup S]
//
// Prints one JSON line: {"requests": answered after the warm-up, "seconds",
// "rps", "statuses": {"200": n, ...}, "answered": all answers, warm-up
// included, "errors": connection failures}.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio.hpp>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

namespace {

struct totals {
    steady::time_point counting_from, until;
    std::size_t requests = 0, all = 0, errors = 0;  // all: the warm-up's answers too
    std::map<int, std::size_t> statuses;
};

// The end of the answer at the start of `in` (header and Content-Length
// bytes), or 0 when it is not all there yet; its status in `status`.
std::size_t answer_end(const std::string& in, int& status) {
    const auto head_end = in.find("\r\n\r\n");
    if (head_end == std::string::npos) return 0;
    status = in.size() > 12 ? std::atoi(in.c_str() + 9) : 0;
    std::size_t length = 0;
    for (std::size_t at = in.find('\n'); at < head_end; at = in.find('\n', at + 1)) {
        static constexpr std::string_view name = "content-length:";
        if (head_end - at < name.size()) break;
        bool same = true;
        for (std::size_t i = 0; i < name.size() && same; ++i)
            same = static_cast<char>(std::tolower(static_cast<unsigned char>(in[at + 1 + i]))) == name[i];
        if (same) length = std::strtoul(in.c_str() + at + 1 + name.size(), nullptr, 10);
    }
    const std::size_t end = head_end + 4 + length;
    return in.size() >= end ? end : 0;
}

class connection : public std::enable_shared_from_this<connection> {
public:
    connection(asio::io_context& io, const std::string& request, totals& t) : socket_(io), request_(request), t_(t) {}

    void start(const tcp::endpoint& to) {
        socket_.async_connect(to, [self = shared_from_this()](boost::system::error_code ec) {
            if (ec) return self->fail();
            self->socket_.set_option(tcp::no_delay(true));
            self->send();
        });
    }

private:
    void send() {
        if (steady::now() >= t_.until) return;
        asio::async_write(socket_, asio::buffer(request_),
                          [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                              if (ec) return self->fail();
                              self->read();
                          });
    }
    void read() {
        socket_.async_read_some(asio::buffer(chunk_),
                                [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                                    if (ec) return self->fail();
                                    self->in_.append(self->chunk_, n);
                                    int status = 0;
                                    const std::size_t end = answer_end(self->in_, status);
                                    if (end == 0) return self->read();
                                    self->in_.erase(0, end);
                                    ++self->t_.all;
                                    if (steady::now() >= self->t_.counting_from) {
                                        ++self->t_.requests;
                                        ++self->t_.statuses[status];
                                    }
                                    self->send();
                                });
    }
    void fail() { ++t_.errors; }

    tcp::socket socket_;
    const std::string& request_;
    totals& t_;
    std::string in_;
    char chunk_[16384];
};

int usage() {
    std::cerr << "usage: webhook_receiver_load --connect HOST:PORT --request FILE --connections N --seconds S "
                 "[--warmup S]\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string connect, request_file;
    std::size_t connections = 1;
    double seconds = 3, warmup = 0.5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view arg = argv[i];
        const char* value = argv[i + 1];
        if (arg == "--connect")
            connect = value;
        else if (arg == "--request")
            request_file = value;
        else if (arg == "--connections")
            connections = std::strtoul(value, nullptr, 10);
        else if (arg == "--seconds")
            seconds = std::strtod(value, nullptr);
        else if (arg == "--warmup")
            warmup = std::strtod(value, nullptr);
        else
            return usage();
    }
    const auto colon = connect.rfind(':');
    if (colon == std::string::npos || request_file.empty() || connections == 0 || seconds <= 0) return usage();
    std::ifstream in(request_file, std::ios::binary);
    const std::string request((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (request.empty()) return usage();

    asio::io_context io(1);
    const tcp::endpoint to(asio::ip::make_address(connect.substr(0, colon)),
                           static_cast<unsigned short>(std::stoul(connect.substr(colon + 1))));
    totals t;
    const auto started = steady::now();
    const auto ms = [](double s) { return std::chrono::microseconds(static_cast<long long>(s * 1e6)); };
    t.counting_from = started + ms(warmup);
    t.until = t.counting_from + ms(seconds);
    for (std::size_t i = 0; i < connections; ++i) std::make_shared<connection>(io, request, t)->start(to);
    io.run();  // each connection stops sending at `until`; the last answers end the run
    std::cout << "{\"requests\": " << t.requests << ", \"seconds\": " << seconds
              << ", \"rps\": " << static_cast<double>(t.requests) / seconds << ", \"statuses\": {";
    const char* sep = "";
    for (const auto& [status, n] : t.statuses) {
        std::cout << sep << '"' << status << "\": " << n;
        sep = ", ";
    }
    std::cout << "}, \"answered\": " << t.all << ", \"errors\": " << t.errors << "}" << std::endl;
    return t.errors == 0 ? 0 : 1;
}
