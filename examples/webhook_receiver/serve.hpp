// webhook_receiver --listen HOST:PORT: the receiving endpoint of spec 4.4 over
// real HTTP (rules H7, H9, B1). See serve.cpp.
#pragma once

#include <optional>

namespace webhook_receiver {

// When the arguments ask for --listen, runs the server until SIGINT or SIGTERM
// and returns the exit status; nullopt otherwise (file mode goes on).
std::optional<int> run_listen_mode(int argc, char** argv);

}  // namespace webhook_receiver
