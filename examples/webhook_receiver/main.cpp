// webhook_receiver: what an integrator's receiving endpoint does with a webhook
// call (spec 4.4, rule H7), as a command that reads the call from a file.
//
// Usage:
//   KEYHOOK_RECEIVER_KEY=<expected key> webhook_receiver [--key-env NAME] [REQUEST.json | -]
//
// The expected key comes from an environment variable (KEYHOOK_RECEIVER_KEY, or
// the one named by --key-env), never from the command line, where other users
// could read it. REQUEST.json (or standard input when absent or "-") describes
// the received request:
//   {"method": "POST",
//    "url": "/hook?api_key=...",                      (a URL, target or query string)
//    "headers": {"x-api-key": "..."}                  (or [["name", "value"], ...])
//    "body": "<raw body text>"}                       (or any JSON value, sent compact)
// examples/webhook_receiver/sample_request.json is one; its key is
// 5b0f3c9e-2d7a-4f61-8e4b-9c2a1d0e7f36.
//
// Prints the accepted notification, or the refusal with the HTTP status a
// server would answer. Exit status (rule O1): 0 accepted, 1 refused or invalid
// input (a REQUEST file that cannot be read included), 2 usage error (bad
// arguments, no expected key); with --listen (serve.cpp) 3 when it cannot
// listen or open its store.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "keyhook/json_input.hpp"
#include "keyhook/received_notification.hpp"
#include "keyhook/receiving.hpp"
#include "serve.hpp"
#include "shared/cli.hpp"
#include "shared/read_file.hpp"
#include "shared/metrics.hpp"

namespace {

constexpr int exit_accepted = examples::cli::exit_ok;
constexpr int exit_refused = examples::cli::exit_bad_input;

const examples::cli::program program{
    "webhook_receiver",
    "usage: KEYHOOK_RECEIVER_KEY=<key> webhook_receiver [--key-env NAME] [REQUEST.json | -]\n"
    "       KEYHOOK_RECEIVER_KEY=<key> webhook_receiver --listen HOST:PORT [--key-env NAME] [--request-timeout S]\n"
    "         [--max-connections N] [--threads N] [--store S] [--replay-scope NAME] [--pending-bound S]\n"
    "         [--metrics-listen HOST:PORT] [--log json|none]",
    "only one request file"};

int usage(std::string_view problem) { return examples::cli::usage_failure(program, problem); }

// The request description of the header comment; a wrong shape is reported
// like a refusal (the input is invalid), with the member's path.
keyhook::result<keyhook::http_request> read_request(const std::string& text) {
    using keyhook::errc;
    using keyhook::error;
    // The strict reader (J1-J3): its depth limit also bounds the recursion of
    // dump() below (a body nested 100,000 deep once crashed it).
    auto parsed = keyhook::try_parse_json(text);
    if (!parsed) {
        error e = parsed.error();
        e.message = "request description: " + e.message;
        return e;
    }
    const nlohmann::json& j = *parsed;
    if (!j.is_object()) return error{errc::wrong_type, {}, "expected a JSON object describing the request"};
    keyhook::http_request r;
    for (const auto* key : {"method", "url"}) {
        const auto it = j.find(key);
        if (it == j.end()) return error{errc::missing_member, key, "missing"};
        if (!it->is_string())
            return error{errc::wrong_type, key, std::string("expected a string, got ") + it->type_name()};
        (std::string_view(key) == "method" ? r.method : r.url) = it->get<std::string>();
    }
    if (const auto h = j.find("headers"); h != j.end()) {
        if (h->is_object()) {
            for (const auto& item : h->items()) {
                if (!item.value().is_string())
                    return error{errc::wrong_type, keyhook::json_path_member("headers", item.key()),
                                 "expected a string"};
                r.headers.push_back({item.key(), item.value().get<std::string>(), true});
            }
        } else if (h->is_array()) {
            for (std::size_t i = 0; i < h->size(); ++i) {
                const auto& pair = (*h)[i];
                if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string())
                    return error{errc::wrong_type, keyhook::json_path_index("headers", i),
                                 "expected [\"name\", \"value\"]"};
                r.headers.push_back({pair[0].get<std::string>(), pair[1].get<std::string>(), true});
            }
        } else {
            return error{errc::wrong_type, "headers", "expected an object or an array of pairs"};
        }
    }
    if (const auto b = j.find("body"); b != j.end()) r.body = b->is_string() ? b->get<std::string>() : b->dump();
    return r;
}

// Received text is untrusted: print it as JSON strings, so control characters
// cannot reach the terminal.
// nlohmann escapes C0 only: escape_json_text adds DEL, C1 and bidirectional
// controls (P1).
std::string shown(const std::string& s) {
    return keyhook::escape_json_text(nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void print(const keyhook::received_notification& n, keyhook::key_source source) {
    std::cout << "accepted (key from " << source << ")\n";
    std::cout << "  UserAction:       " << shown(n.user_action);
    if (n.event)
        std::cout << " (" << keyhook::meaning(*n.event) << ")\n";
    else
        std::cout << " (not a known event type; closest: " << keyhook::closest_event_type(n.user_action) << ")\n";
    std::cout << "  Tenant:           " << shown(n.tenant) << "\n"
              << "  FolderName:       " << shown(n.folder_name) << "\n"
              << "  ServiceName:      " << shown(n.service_name) << "\n"
              << "  EntityId:         " << shown(n.entity_id) << "\n"
              << "  AuditType:        " << shown(n.audit_type) << "\n"
              << "  FileName:         " << shown(n.file_name) << "\n"
              << "  ServiceVersionId: " << shown(n.service_version_id) << "\n"
              << "  RequestTimeStamp: " << shown(n.request_time_text);
    if (!n.request_time && !n.request_time_text.empty()) std::cout << " (not a timestamp)";
    std::cout << "\n";
    for (const auto& m : n.mismatches)
        std::cout << "  note: " << keyhook::escaped(m) << " differs from its top-level twin\n";
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app;
    examples::cli::configure(
        app, program,
        "Reads a received webhook request (a JSON description, see docs/receiving.md) and accepts or\n"
        "refuses it as a receiving endpoint would (spec 4.4, rule H7); with --listen, serves HTTP\n"
        "instead, one JSON line per accepted delivery on standard output (H9, H13, B1, B6).\n"
        "The expected key is read from the environment, never from the command line;\n"
        "KEYHOOK_SIGNING_SECRET=\"whsec_... whpk_...\" (--listen) also requires signatures.");
    webhook_receiver::listen_arguments listen;
    std::string path = "-";
    std::string request_timeout, read_timeout, max_connections, threads, store, replay_scope, pending_bound,
        metrics_listen, log_format;
    app.add_option("REQUEST", path, "the request description; '-' reads standard input")
        ->type_name("")
        ->default_str("-");
    app.add_option("--key-env", listen.key_env, "the environment variable holding the expected key")->type_name("NAME");
    const std::string serving = "With --listen HOST:PORT (port 0 picks a free one)";
    app.add_option("--listen", listen.listen, "serve HTTP on HOST:PORT instead of reading a file")
        ->type_name("HOST:PORT")
        ->group(serving);
    auto* timeout_option =
        app.add_option("--request-timeout", request_timeout, "a request must be whole within S seconds (0.01 to 3600)")
            ->type_name("S")
            ->default_str("10")
            ->group(serving);
    auto* read_timeout_option = app.add_option("--read-timeout", read_timeout, "the older name of --request-timeout")
                                    ->type_name("S")
                                    ->group(serving);
    app.add_option("--max-connections", max_connections, "503 past N open connections (1 to 100000)")
        ->type_name("N")
        ->default_str("256")
        ->group(serving);
    app.add_option("--threads", threads, "the server's threads (1 to 256)")
        ->type_name("N")
        ->default_str("the cores, at least 2")
        ->group(serving);
    app.add_option("--store", store,
                   "keep H9's replay ids in a store (B6): sqlite:PATH or a plain PATH (SQLite), "
                   "postgresql://... or postgres://...")
        ->type_name("S")
        ->default_str("in memory, 65,536 ids")
        ->group(serving);
    app.add_option("--replay-scope", replay_scope, "this receiver's ids in the store (1 to 128 printable characters)")
        ->type_name("NAME")
        ->default_str("default")
        ->group(serving);
    app.add_option("--pending-bound", pending_bound,
                   "a claimed id not written within S seconds is taken over (0.1 to 3600)")
        ->type_name("S")
        ->default_str("30")
        ->group(serving);
    app.add_option("--metrics-listen", metrics_listen,
                   "serve GET /metrics (Prometheus) and GET /healthz on HOST:PORT, a separate address (O4)")
        ->type_name("HOST:PORT")
        ->default_str("off")
        ->group(serving);
    app.add_option("--log", log_format,
                   "json: one JSON line per request on standard error (O3); none: no request lines; any case")
        ->type_name("json|none")
        ->default_str("json")
        ->group(serving);
    if (const auto status = examples::cli::parse(app, program, argc, argv)) return *status;

    const auto given = [&app](const char* name) { return app.get_option(name)->count() > 0; };
    // O4: refused before anything else in a build without prometheus-cpp (or Boost.Beast).
    if (given("--metrics-listen") && !examples::metrics::built()) return usage(examples::metrics::not_built_message());
    if (given("--listen")) {
        if (given("REQUEST")) return usage("--listen reads requests from the network, not REQUEST");
        if (timeout_option->count() > 0 && read_timeout_option->count() > 0)
            return usage("give --request-timeout or its older name --read-timeout, not both");
        if (timeout_option->count() > 0) listen.request_timeout = request_timeout;
        if (read_timeout_option->count() > 0) {
            listen.request_timeout = read_timeout;
            listen.request_timeout_name = "--read-timeout";
        }
        if (given("--max-connections")) listen.max_connections = max_connections;
        if (given("--threads")) listen.threads = threads;
        if (given("--store")) listen.store = store;
        if (given("--replay-scope")) listen.replay_scope = replay_scope;
        if (given("--pending-bound")) listen.pending_bound = pending_bound;
        if (given("--metrics-listen")) listen.metrics_listen = metrics_listen;
        if (given("--log")) listen.log_format = log_format;
        return webhook_receiver::run_listen_mode(listen);
    }
    for (const char* name : {"--request-timeout", "--read-timeout", "--max-connections", "--threads", "--store",
                             "--replay-scope", "--pending-bound", "--metrics-listen", "--log"})
        if (given(name)) return usage(std::string(name) + " goes with --listen");
    const std::string& key_env = listen.key_env;

    const char* key_text = std::getenv(key_env.c_str());
    if (key_text == nullptr || *key_text == '\0')
        return usage("environment variable " + keyhook::quoted_input(key_env) + " is not set");
    const keyhook::secret expected(key_text);

    std::string text;
    if (path == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
        std::string why;
        auto read = examples::cli::read_whole_file(path, why);
        if (!read) {  // O1: input that cannot be had is bad input, as input that does not parse
            std::cerr << "webhook_receiver: cannot read " << keyhook::quoted_input(path, 256) << ": " << why << '\n';
            return exit_refused;
        }
        text = std::move(*read);
    }

    const auto request = read_request(text);
    if (!request) {
        std::cout << "invalid request description: " << request.error() << "\n";
        return exit_refused;
    }
    // The whole check is one call; authenticate() again only to say where the
    // key came from (it cannot fail once receive_notification succeeded).
    const auto received = keyhook::try_receive_notification(*request, expected);
    if (!received) {
        std::cout << "refused (HTTP " << keyhook::suggested_http_status(received.error().code)
                  << "): " << received.error() << "\n";
        return exit_refused;
    }
    print(*received, keyhook::authenticate(*request, expected));
    return exit_accepted;
}
