// The bare server of the receiver's speed row (scripts/bench-receiver.py):
// examples/shared/http_server with the options webhook_receiver --listen
// uses, and a handler that answers every request 200 with a body of the same
// shape, without keyhook. The row's ratio is then keyhook's cost alone.
//
//   webhook_receiver_bare --listen HOST:PORT [--threads N]
//
// Prints "listening on HOST:PORT" on standard error; stops on SIGINT/SIGTERM.
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>

#include "shared/http_server.hpp"

namespace hs = examples::http_server;

int main(int argc, char** argv) {
    std::string host = "127.0.0.1";
    unsigned short port = 0;
    hs::options o;
    o.threads = std::max(2U, std::thread::hardware_concurrency());  // as webhook_receiver --listen
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view arg = argv[i];
        const std::string value = argv[i + 1];
        if (arg == "--listen") {
            const auto colon = value.rfind(':');
            if (colon == std::string::npos) break;
            host = value.substr(0, colon);
            port = static_cast<unsigned short>(std::stoul(value.substr(colon + 1)));
        } else if (arg == "--threads") {
            o.threads = static_cast<unsigned>(std::stoul(value));
        } else {
            std::cerr << "usage: webhook_receiver_bare --listen HOST:PORT [--threads N]\n";
            return 2;
        }
    }
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    hs::server server(o, [](hs::request&&) { return hs::json_answer(200, "accepted"); });
    std::string why;
    const auto bound = server.listen(host, port, why);
    if (!bound) {
        std::cerr << "webhook_receiver_bare: cannot listen: " << why << '\n';
        return 2;
    }
    std::cerr << "webhook_receiver_bare: listening on " << host << ':' << *bound << std::endl;
    std::thread stopper([&server, stop_signals] {
        int signal = 0;
        sigwait(&stop_signals, &signal);
        server.stop();
    });
    server.run();
    stopper.join();
    return 0;
}
