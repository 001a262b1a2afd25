// key_audit: lists API keys from a list-call response with their live status,
// expiry warning and masked key. The logic lives in key_audit.hpp; this file
// gives it the real streams, the clock and the bundled sample.
//
//   key_audit [--now T] [--since T] [--status active|future|expired|revoked|all] [--format table|json] [FILE|-]
//   key_audit --url BASE_URL --tenant TENANT [--page-size N] [--timeout S] [options]
//
// The bundled sample (sample.json) is written for --now 2026-11-22T12:00:00Z.
// Exit status (rule O1): 0 done, 1 bad input, 2 usage error, 3 the list call
// failed (network, HTTP, or the platform's answer).
#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "fetch.hpp"
#include "key_audit.hpp"
#include "key_audit_sample.hpp"

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    // The one place that reads the clock: the library never does.
    const auto now = keyhook::to_timestamp(std::chrono::system_clock::now());
    try {
        const auto parsed = key_audit::parse_options(args);
        if (!parsed || !parsed->url || parsed->help || parsed->version)
            return key_audit::run(args, std::cin, std::cout, std::cerr, now, key_audit::bundled_sample);
        // --url: fetch every page of the list call (fetch.hpp), then audit it as a file.
        key_audit::fetch::url_options url;
        url.url = parsed->url;
        url.tenant = parsed->tenant;
        url.page_size = parsed->page_size;
        url.timeout_seconds = parsed->timeout_seconds;
        std::string text;
        if (const int status = key_audit::fetch::fetch_all(url, std::cerr, text); status != 0) return status;
        std::istringstream fetched(text);
        auto o = *parsed;
        o.input = "-";
        return key_audit::run(o, fetched, std::cout, std::cerr, now, key_audit::bundled_sample);
    } catch (const std::exception& e) {
        std::cerr << "key_audit: " << e.what() << '\n';
        return key_audit::exit_bad_input;
    }
}
