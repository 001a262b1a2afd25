// webhook_dispatch: what the service sends for one event (spec 4.3, 6.3; rules
// H1 to H4 and H8), as a command.
//
// Usage:
//   webhook_dispatch [--now T] [--delivery-id-key HEX] [--allow-local] [FILE | -]
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
// from one run to the next. --allow-local permits plain http and loopback or
// private endpoints (H1's opt-in, development only), as webhook_deliver's does:
// the two read the same input.
//
// The printed URLs and headers hold the authentication values in clear: they
// are what the receiver must get, and showing them is this tool's purpose. Do
// not run it on production configuration where others can read the output.
//
// Exit status (rule O1): 0 success, 1 invalid input (the error, with its JSON
// path, on standard error; or a FILE that cannot be read), 2 usage error.
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/dispatch.hpp"
#include "keyhook/timestamps.hpp"
#include "shared/cli.hpp"
#include "shared/dispatch_input.hpp"
#include "webhook_dispatch_sample.hpp"

namespace {

constexpr int exit_ok = examples::cli::exit_ok;
constexpr int exit_invalid = examples::cli::exit_bad_input;

const examples::cli::program program{"webhook_dispatch",
                                     "usage: webhook_dispatch [--now T] [--delivery-id-key HEX] [--allow-local] "
                                     "[FILE | -]",
                                     "give at most one input file"};

int usage_error(std::string_view problem) { return examples::cli::usage_failure(program, problem); }

struct arguments {
    std::optional<keyhook::timestamp> now;
    std::optional<keyhook::delivery_id_key> id_key;
    std::optional<std::string> file;  // "-" for standard input
    bool allow_local = false;
};

// The arguments, or the exit status after --help, --version or a usage error.
std::variant<arguments, int> parse_arguments(int argc, char** argv) {
    CLI::App app;
    examples::cli::configure(app, program,
                             "Prints the requests the service sends for one event to the tenant's webhooks.\n"
                             "Without FILE, runs on the bundled sample. webhook_deliver sends them: give it this\n"
                             "program's input (the same FILE), not its output. See docs/webhooks.md.");
    std::string now, key, file;
    bool allow_local = false;
    app.add_option("--now", now, "RequestTimeStamp of the event (rule T1)")->type_name("T")->default_str("the clock");
    app.add_option("--delivery-id-key", key, "the key delivery ids are made under (H12), 32 hex digits")
        ->type_name("HEX")
        ->default_str("a random key of this run");
    app.add_flag("--allow-local", allow_local,
                 "permit plain http and loopback or private endpoints (development only), as webhook_deliver");
    app.add_option("FILE", file, "the input; '-' reads standard input")
        ->type_name("")
        ->default_str("the bundled sample");
    if (const auto status = examples::cli::parse(app, program, argc, argv)) return *status;
    arguments args;
    if (app.get_option("--now")->count() > 0) {
        auto t = keyhook::try_parse_timestamp(now);
        if (!t) return usage_error("--now: " + t.error().message);
        args.now = *t;
    }
    if (app.get_option("--delivery-id-key")->count() > 0) {
        auto parsed = keyhook::delivery_id_key::try_from_hex(key);
        if (!parsed) return usage_error("--delivery-id-key: " + parsed.error().message);  // never quotes the key
        args.id_key = *parsed;
    }
    if (app.get_option("FILE")->count() > 0) args.file = file;
    args.allow_local = allow_local;
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
    const auto parsed = parse_arguments(argc, argv);
    if (const int* status = std::get_if<int>(&parsed)) return *status;
    const auto* args = &std::get<arguments>(parsed);
    std::string why;
    const auto text = examples::read_input_text(args->file, webhook_dispatch::bundled_sample, &why);
    if (!text) {  // O1: input that cannot be had is bad input, as input that does not parse
        std::cerr << "webhook_dispatch: cannot read " << keyhook::quoted_input(*args->file, 256) << ": " << why << '\n';
        return exit_invalid;
    }
    const std::string source = examples::input_name(args->file);
    // The example may read the clock; the library never does.
    const auto now = args->now ? *args->now : keyhook::to_timestamp(std::chrono::system_clock::now());
    keyhook::endpoint_policy policy;  // H1: https to global addresses, unless --allow-local
    policy.allow_http = args->allow_local;
    policy.allow_non_global_addresses = args->allow_local;
    const auto input = examples::parse_dispatch_input(*text, now, policy);
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
