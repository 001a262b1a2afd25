// webhook_dispatch: what the service sends for one event (spec 4.3, 6.3; rules
// H1 to H4 and H8), as a command.
//
// Usage:
//   webhook_dispatch [--now T] [--delivery-id-key HEX] [FILE | -]
//
// Reads one JSON object from FILE (standard input for "-"; the bundled sample
// when no file is given):
//   {"tenant":   {"name": "...", "webhooksEnabled": true},
//    "webhooks": [{"name", "endpoint", "saved", "events": [...],
//                  "auth": [{"in": "header"|"query", "name", "value"}]}, ...],
//    "event":    {"UserAction", "FolderName", "ServiceName", "EntityId",
//                 "AuditType", "FileName", "ServiceVersionId"}}
// (members of "event" other than UserAction may be missing) and prints
//   {"requests": [{"webhook", "method", "url", "headers": {...}, "body", "deliveryId"}, ...]}
// one per webhook that fires, in the order given; "body" is the exact body.
// --now T sets RequestTimeStamp (T as in rule T1); by default the current time.
// --delivery-id-key HEX (32 hex digits) is the key delivery ids are made under
// (H12); without it ids come from a random key of this run, so they differ
// from one run to the next.
//
// The printed URLs and headers hold the authentication values in clear: they
// are what the receiver must get, and showing them is this tool's purpose. Do
// not run it on production configuration where others can read the output.
//
// Exit status: 0 success, 1 invalid input (the error, with its JSON path, on
// standard error), 2 usage error (bad arguments, unreadable file).
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/dispatch.hpp"
#include "keyhook/timestamps.hpp"
#include "shared/dispatch_input.hpp"
#include "webhook_dispatch_sample.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_invalid = 1;
constexpr int exit_usage = 2;

constexpr std::string_view usage_line = "usage: webhook_dispatch [--now T] [--delivery-id-key HEX] [FILE | -]\n";

int usage_error(std::string_view problem) {
    std::cerr << "webhook_dispatch: " << problem << '\n' << usage_line;
    return exit_usage;
}

struct arguments {
    std::optional<keyhook::timestamp> now;
    std::optional<keyhook::delivery_id_key> id_key;
    std::optional<std::string> file;  // "-" for standard input
    bool help = false;
};

// nullopt after reporting a usage error.
std::optional<arguments> parse_arguments(int argc, char** argv, int& status) {
    arguments args;
    const std::vector<std::string_view> list(argv + 1, argv + argc);
    bool options_done = false;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto arg = list[i];
        if (!options_done && (arg == "--help" || arg == "-h")) {
            args.help = true;
            return args;
        }
        if (!options_done && arg == "--") {
            options_done = true;
            continue;
        }
        if (!options_done && (arg == "--now" || arg.substr(0, 6) == "--now=")) {
            std::string_view value;
            if (arg == "--now") {
                if (i + 1 == list.size()) {
                    status = usage_error("--now needs a timestamp");
                    return std::nullopt;
                }
                value = list[++i];
            } else {
                value = arg.substr(6);
            }
            auto t = keyhook::try_parse_timestamp(value);
            if (!t) {
                status = usage_error("--now: " + t.error().message);
                return std::nullopt;
            }
            args.now = *t;
            continue;
        }
        if (!options_done && (arg == "--delivery-id-key" || arg.substr(0, 18) == "--delivery-id-key=")) {
            std::string_view value;
            if (arg == "--delivery-id-key") {
                if (i + 1 == list.size()) {
                    status = usage_error("--delivery-id-key needs 32 hex digits");
                    return std::nullopt;
                }
                value = list[++i];
            } else {
                value = arg.substr(18);
            }
            auto key = keyhook::delivery_id_key::try_from_hex(value);
            if (!key) {  // the message never quotes the key
                status = usage_error("--delivery-id-key: " + key.error().message);
                return std::nullopt;
            }
            args.id_key = *key;
            continue;
        }
        if (!options_done && arg.size() > 1 && arg[0] == '-') {
            status = usage_error("unknown option " + keyhook::quoted_input(arg));
            return std::nullopt;
        }
        if (args.file) {
            status = usage_error("give at most one input file");
            return std::nullopt;
        }
        args.file = std::string(arg);
    }
    return args;
}

// The output document. Header values are printed as they will be sent,
// credentials included (see the header comment).
nlohmann::ordered_json to_output(const std::vector<keyhook::outbound_request>& requests) {
    auto list = nlohmann::ordered_json::array();
    for (const auto& r : requests) {
        auto headers = nlohmann::ordered_json::object();
        for (const auto& h : r.headers()) headers[h.name] = h.value;
        nlohmann::ordered_json item;
        item["webhook"] = r.webhook_name();
        item["method"] = std::string(r.method());
        item["url"] = r.url();
        item["headers"] = std::move(headers);
        item["body"] = r.body();
        item["deliveryId"] = to_string(r.id());
        list.push_back(std::move(item));
    }
    nlohmann::ordered_json out;
    out["requests"] = std::move(list);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    int status = exit_ok;
    const auto args = parse_arguments(argc, argv, status);
    if (!args) return status;
    if (args->help) {
        std::cout << usage_line
                  << "Prints the requests the service sends for one event to the tenant's webhooks.\n"
                     "Without FILE, runs on the bundled sample. See docs/webhooks.md.\n";
        return exit_ok;
    }
    const auto text = examples::read_input_text(args->file, webhook_dispatch::bundled_sample);
    if (!text) return usage_error("cannot read " + keyhook::quoted_input(*args->file, 256));
    const std::string source = examples::input_name(args->file);
    // The example may read the clock; the library never does.
    const auto now = args->now ? *args->now : keyhook::to_timestamp(std::chrono::system_clock::now());
    const auto input = examples::parse_dispatch_input(*text, now);
    if (!input) {
        std::cerr << "webhook_dispatch: " << source << ": " << input.error() << '\n';
        return exit_invalid;
    }
    keyhook::dispatch_options options;
    options.id_key = args->id_key;
    const auto requests =
        keyhook::try_dispatch(input->settings.tenant, input->settings.webhooks, input->event, options);
    if (!requests) {
        std::cerr << "webhook_dispatch: " << source << ": " << requests.error() << '\n';
        return exit_invalid;
    }
    // P1: dump() leaves DEL, C1 and bidirectional controls raw in strings.
    std::cout << keyhook::escape_json_text(to_output(*requests).dump(2)) << '\n';
    return exit_ok;
}
