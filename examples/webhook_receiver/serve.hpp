// webhook_receiver --listen HOST:PORT: the receiving endpoint of spec 4.4 over
// real HTTP (rules H7, H9, B1). See serve.cpp.
#pragma once

#include <optional>
#include <string>

namespace webhook_receiver {

// The options of --listen as given on the command line (main.cpp reads them
// with CLI11); run_listen_mode checks them. An option left out is nullopt.
struct listen_arguments {
    std::string listen;  // HOST:PORT
    std::string key_env = "KEYHOOK_RECEIVER_KEY";
    std::optional<std::string> request_timeout;  // --request-timeout (or its older name --read-timeout)
    std::string request_timeout_name = "--request-timeout";
    std::optional<std::string> max_connections;
    std::optional<std::string> threads;
    std::optional<std::string> store;
    std::optional<std::string> replay_scope;
    std::optional<std::string> pending_bound;
    std::optional<std::string> metrics_listen;  // --metrics-listen HOST:PORT (O4)
};

// Runs the server until SIGINT or SIGTERM and returns the exit status (rule
// O1: 0 stopped, 2 usage error, 3 cannot listen or the store cannot be opened).
// With metrics_listen, /metrics and /healthz are served there (O4).
int run_listen_mode(const listen_arguments& args);

}  // namespace webhook_receiver
