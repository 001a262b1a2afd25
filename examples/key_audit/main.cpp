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

#include <sstream>

#include "fetch.hpp"
#include "key_audit.hpp"
#include "key_audit_sample.hpp"

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    // The one place that reads the clock: the library never does.
    const auto now = keyhook::to_timestamp(std::chrono::system_clock::now());
    try {
        // --url: fetch every page of the list call (fetch.hpp), then audit it as a file.
        auto split = key_audit::fetch::take_options(args);
        if (split.error) {
            std::cerr << "key_audit: " << *split.error << '\n'
                      << key_audit::usage << '\n'
                      << key_audit::fetch::usage << '\n';
            return key_audit::exit_usage;
        }
        if (split.url.url && !key_audit::fetch::asks_for_help(args)) {
            if (const auto file = key_audit::fetch::input_file(split.rest)) {
                std::cerr << "key_audit: --url reads the list call itself; drop the input "
                          << keyhook::quoted_input(*file, 256) << '\n';
                return key_audit::exit_usage;
            }
            if (key_audit::parse_options(split.rest)) {  // a usage error is reported by run() below
                std::string text;
                if (const int status = key_audit::fetch::fetch_all(split.url, std::cerr, text); status != 0)
                    return status;
                std::istringstream fetched(text);
                split.rest.push_back("-");
                return key_audit::run(split.rest, fetched, std::cout, std::cerr, now, key_audit::bundled_sample);
            }
        }
        if (split.url.url) return key_audit::run(split.rest, std::cin, std::cout, std::cerr, now, {});
        const int status = key_audit::run(args, std::cin, std::cout, std::cerr, now, key_audit::bundled_sample);
        if (key_audit::fetch::asks_for_help(args)) std::cout << key_audit::fetch::usage << '\n';
        return status;
    } catch (const std::exception& e) {
        std::cerr << "key_audit: " << e.what() << '\n';
        return key_audit::exit_bad_input;
    }
}
