// webhook_deliver: sends what webhook_dispatch prints (spec 4.3, H8) over HTTP
// and runs the retry plan of rule B2 on each delivery, under rule B4.
//
// Usage:
//   webhook_deliver [--allow-local] [--time-scale F] [--timeout S]
//                   [--resolve HOST:PORT:ADDRESS]... [FILE | -]
//
// Reads the input of webhook_dispatch (a tenant, its webhooks, one event) from
// FILE, or from standard input when FILE is "-" or absent. Every request of the
// dispatch is sent, signed (B1) when its webhook has a "signingSecret", signed
// again at each attempt; the deliveries are interleaved by their next attempt
// time, one request at a time:
//   - B2: the schedule with jitter (OpenSSL's random source), Retry-After on
//     429 and 503, 2xx ends a delivery, 410 disables its webhook for the rest
//     of the run, the last failed attempt gives up;
//   - B4: no redirect is followed (a 3xx is a failed attempt), each resolved
//     address passes the H1 check before connecting, TLS is verified, proxies
//     from the environment are not used.
// --allow-local    permits plain http and loopback or private addresses (in the
//                  endpoints and after resolution): development and tests only.
// --time-scale F   multiplies every wait by F (0.001 turns 5 minutes into 0.3 s;
//                  0 sends the attempts back to back).
// --timeout S      a transfer's overall limit in seconds (default 30; the
//                  connection must be made within min(S, 10)).
// --resolve H:P:A  resolves host H, port P to address A (as curl's --resolve);
//                  the address is still checked. For tests and pinning.
//
// One JSON line per attempt on standard output:
//   {"deliveryId", "webhook", "attempt" (from 1), "sentAt" (on the run's
//    timeline, see --time-scale), "status" (HTTP status or null), "error" (null or what failed in transport), "outcome"
//    ("delivered", "retry", "disabled" or "gave_up"), "retryAt" (for "retry": when)}
// Nothing of an authentication value or signing secret is printed.
//
// Exit status: 0 once every delivery has ended (delivered, given up or
// disabled), 1 invalid input, 2 usage error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/retry.hpp"
#include "keyhook/timestamps.hpp"
#include "shared/curl_client.hpp"
#include "shared/dispatch_input.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_invalid = 1;
constexpr int exit_usage = 2;

constexpr std::string_view usage_line =
    "usage: webhook_deliver [--allow-local] [--time-scale F] [--timeout S] [--resolve HOST:PORT:ADDRESS]... "
    "[FILE | -]\n";

int usage_error(std::string_view problem) {
    std::cerr << "webhook_deliver: " << problem << '\n' << usage_line;
    return exit_usage;
}

struct arguments {
    bool allow_local = false;
    double time_scale = 1.0;
    double timeout_seconds = 30.0;
    std::vector<std::string> resolve;
    std::optional<std::string> file;
    bool help = false;
};

std::optional<double> parse_non_negative(std::string_view text) {
    const std::string s(text);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
    return v;
}

std::optional<arguments> parse_arguments(int argc, char** argv, int& status) {
    using keyhook::detail::quote_input;
    arguments args;
    const std::vector<std::string_view> list(argv + 1, argv + argc);
    bool options_done = false;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto arg = list[i];
        if (options_done || arg == "-" || arg.empty() || arg[0] != '-') {
            if (args.file) {
                status = usage_error("give at most one input file");
                return std::nullopt;
            }
            args.file = std::string(arg);
            continue;
        }
        if (arg == "--") {
            options_done = true;
            continue;
        }
        if (arg == "--help" || arg == "-h") {
            args.help = true;
            return args;
        }
        if (arg == "--allow-local") {
            args.allow_local = true;
            continue;
        }
        std::string_view name = arg;
        std::optional<std::string_view> value;
        if (const auto eq = arg.find('='); eq != std::string_view::npos) {
            name = arg.substr(0, eq);
            value = arg.substr(eq + 1);
        }
        if (name != "--time-scale" && name != "--timeout" && name != "--resolve") {
            status = usage_error("unknown option " + quote_input(arg));
            return std::nullopt;
        }
        if (!value) {
            if (i + 1 == list.size()) {
                status = usage_error(std::string(name) + " needs a value");
                return std::nullopt;
            }
            value = list[++i];
        }
        if (name == "--resolve") {
            // HOST:PORT:ADDRESS, no control characters (curl reads it as is).
            const bool printable = std::all_of(value->begin(), value->end(), [](char c) {
                return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
            });
            if (!printable || std::count(value->begin(), value->end(), ':') < 2) {
                status = usage_error("--resolve: expected HOST:PORT:ADDRESS, got " + quote_input(*value));
                return std::nullopt;
            }
            args.resolve.emplace_back(*value);
            continue;
        }
        const auto number = parse_non_negative(*value);
        if (!number || (name == "--timeout" && (*number < 0.001 || *number > 86400))) {
            status = usage_error(std::string(name) + ": expected " +
                                 (name == "--timeout" ? "seconds from 0.001 to 86400" : "a number >= 0") + ", got " +
                                 quote_input(*value));
            return std::nullopt;
        }
        (name == "--timeout" ? args.timeout_seconds : args.time_scale) = *number;
    }
    return args;
}

keyhook::timestamp clock_now() { return keyhook::to_timestamp(std::chrono::system_clock::now()); }

// The run's clock. Plans are made on a virtual timeline that starts at the
// real time; waiting for a planned instant sleeps the gap times the scale and
// then jumps there, so with --time-scale 0.001 five minutes pass in 0.3 s.
class run_clock {
public:
    explicit run_clock(double scale) : scale_(scale), now_(clock_now()) {}
    [[nodiscard]] keyhook::timestamp now() const { return now_; }
    void wait_until(keyhook::timestamp t) {
        if (t <= now_) return;
        const double real_us = static_cast<double>((t - now_).count()) * scale_;
        if (real_us >= 1) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<std::int64_t>(real_us)));
        now_ = t;
    }
    // Time spent in a transfer counts once, unscaled.
    void advance(std::chrono::steady_clock::duration d) {
        now_ += std::chrono::duration_cast<keyhook::timestamp::duration>(d);
    }

private:
    double scale_;
    keyhook::timestamp now_;
};

struct delivery {
    keyhook::outbound_request request;
    std::vector<keyhook::delivery_attempt> history;
    keyhook::timestamp next_at{};
    bool ended = false;
};

examples::http::response error_response(std::string message) {
    examples::http::response r;
    r.error = std::move(message);
    return r;
}

std::string_view outcome_name(keyhook::retry_decision::action a) {
    using action = keyhook::retry_decision::action;
    switch (a) {
        case action::send: return "retry";
        case action::succeeded: return "delivered";
        case action::give_up: return "gave_up";
        case action::disable_webhook: return "disabled";
    }
    return "retry";
}

}  // namespace

int main(int argc, char** argv) {
    int status = exit_ok;
    const auto args = parse_arguments(argc, argv, status);
    if (!args) return status;
    if (args->help) {
        std::cout << usage_line
                  << "Sends the requests webhook_dispatch would print, with the retry plan of rule B2,\n"
                     "and prints one JSON line per attempt. See docs/embedding.md.\n";
        return exit_ok;
    }
    const std::optional<std::string> file = args->file.value_or("-");
    const auto text = examples::read_input_text(file, {});
    if (!text) return usage_error("cannot read " + keyhook::detail::quote_input(*file, 256));
    const std::string source = examples::input_name(file);

    keyhook::endpoint_policy policy;
    policy.allow_http = args->allow_local;
    policy.allow_non_global_addresses = args->allow_local;
    run_clock clock(args->time_scale);
    const auto input = examples::parse_dispatch_input(*text, clock.now(), policy);
    if (!input) {
        std::cerr << "webhook_deliver: " << source << ": " << input.error() << '\n';
        return exit_invalid;
    }
    // Signing every request once up front checks every secret before anything is sent.
    auto signed_all = keyhook::crypto::try_dispatch_signed(input->settings.tenant, input->settings.webhooks,
                                                           input->event, clock_now());
    if (!signed_all) {
        std::cerr << "webhook_deliver: " << source << ": " << signed_all.error() << '\n';
        return exit_invalid;
    }

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        std::cerr << "webhook_deliver: libcurl could not be initialised\n";
        return exit_usage;
    }
    examples::http::client_options client;
    client.allow_address = examples::http::h1_rule(policy);
    client.allow_http = policy.allow_http;
    client.total_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(args->timeout_seconds * 1000));
    client.connect_timeout = std::min(client.total_timeout, std::chrono::milliseconds(10000));
    client.resolve = args->resolve;

    std::vector<delivery> deliveries;
    deliveries.reserve(signed_all->size());
    for (auto& d : *signed_all) deliveries.push_back(delivery{std::move(d.outbound), {}, clock.now(), false});

    const keyhook::crypto::openssl_random random;
    std::set<std::string> disabled;  // webhooks that answered 410
    for (;;) {
        delivery* next = nullptr;
        for (auto& d : deliveries)
            if (!d.ended && (next == nullptr || d.next_at < next->next_at)) next = &d;
        if (next == nullptr) break;
        if (disabled.count(next->request.webhook_name()) != 0) {
            next->ended = true;
            continue;
        }
        clock.wait_until(next->next_at);

        // The signature's timestamp is real time: the receiver checks it against its clock.
        const auto request = keyhook::crypto::try_sign_outbound(next->request, clock_now());
        const auto started = std::chrono::steady_clock::now();
        const auto sent_at = clock.now();
        const auto answer = request ? examples::http::send(*request, client) : error_response(request.error().message);
        clock.advance(std::chrono::steady_clock::now() - started);

        keyhook::delivery_attempt attempt{sent_at, keyhook::attempt_outcome::transport_failure(), std::nullopt};
        if (answer.status)
            attempt.outcome = keyhook::attempt_outcome::http(*answer.status);
        else if (answer.timed_out)
            attempt.outcome = keyhook::attempt_outcome::timed_out();
        if (answer.retry_after)
            if (auto ra = keyhook::try_parse_retry_after(*answer.retry_after)) attempt.retry_after = *ra;
        next->history.push_back(attempt);

        auto decision = keyhook::try_plan_next_attempt(next->history, random, clock.now());
        nlohmann::ordered_json line;
        line["deliveryId"] = to_string(next->request.id());
        line["webhook"] = next->request.webhook_name();
        line["attempt"] = next->history.size();
        line["sentAt"] = keyhook::format_timestamp(sent_at);
        line["status"] = answer.status ? nlohmann::ordered_json(*answer.status) : nlohmann::ordered_json(nullptr);
        line["error"] = answer.status ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(answer.error);
        if (!decision) {
            // Cannot happen with the default policy and ordered attempts; end the delivery.
            line["outcome"] = "gave_up";
            line["planError"] = decision.error().message;
            next->ended = true;
        } else {
            line["outcome"] = outcome_name(decision->what);
            if (decision->what == keyhook::retry_decision::action::send) {
                line["retryAt"] = keyhook::format_timestamp(decision->send_at);
                next->next_at = decision->send_at;
            } else {
                next->ended = true;
                if (decision->what == keyhook::retry_decision::action::disable_webhook)
                    disabled.insert(next->request.webhook_name());
            }
        }
        // ensure_ascii: names cannot carry control or bidi characters to a terminal (P1).
        std::cout << line.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace) << std::endl;
    }
    curl_global_cleanup();
    return exit_ok;
}
