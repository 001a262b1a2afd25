// key_audit: lists API keys from a list-call response with their live status,
// expiry warning and masked key. The logic lives in key_audit.hpp; this file
// gives it the real streams, the clock and the bundled sample.
//
//   key_audit [--now T] [--since T] [--status active|future|expired|revoked|all] [--format table|json] [FILE|-]
//
// The bundled sample (sample.json) is written for --now 2026-11-22T12:00:00Z.
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "key_audit.hpp"
#include "key_audit_sample.hpp"

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    // The one place that reads the clock: the library never does.
    const auto now = keyhook::to_timestamp(std::chrono::system_clock::now());
    try {
        return key_audit::run(args, std::cin, std::cout, std::cerr, now, key_audit::bundled_sample);
    } catch (const std::exception& e) {
        std::cerr << "key_audit: " << e.what() << '\n';
        return key_audit::exit_bad_input;
    }
}
