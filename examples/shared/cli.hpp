// The command-line conventions of every program under examples/ (rule O1),
// over one argument parser, CLI11 (Debian's libcli11-dev, header-only):
//
//   --help     the usage line, what the program does, and every option of
//              every subcommand with its default, on standard output; exit 0
//   --version  "keyhook X.Y.Z" (include/keyhook/version.hpp); exit 0
//   a usage error (an unknown option, a missing value, a required option
//   left out, a value a program refuses) on standard error: "PROGRAM: why",
//   the usage line, and where to find the rest; exit 2
//
// and the exit statuses every program keeps to:
//   0 done, 1 bad input, 2 usage error, 3 network, store or platform
//   failure, 4 deliveries gave up (webhook_deliver).
//
// A program declares its options on a CLI::App set up by configure(), then
// calls parse(); it checks the values itself after that (ranges, forms), and
// reports what it refuses with usage_failure() or by throwing usage_error.
// Messages name flags (--status), never C++ identifiers. An argument the
// program did not expect is reported by its position only, never quoted when
// it is not an option: a key pasted onto a command line must not be echoed.
#pragma once

#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "keyhook/escape.hpp"
#include "keyhook/version.hpp"

namespace examples::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_bad_input = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_failure = 3;  // network, store or platform
inline constexpr int exit_gave_up = 4;  // webhook_deliver: a delivery gave up

#define KEYHOOK_EXAMPLES_CLI_TEXT(x) #x
#define KEYHOOK_EXAMPLES_CLI_NUMBER(x) KEYHOOK_EXAMPLES_CLI_TEXT(x)
// "keyhook 0.2.0": what --version prints.
inline constexpr const char* version_text =
    "keyhook " KEYHOOK_EXAMPLES_CLI_NUMBER(KEYHOOK_VERSION_MAJOR) "." KEYHOOK_EXAMPLES_CLI_NUMBER(
        KEYHOOK_VERSION_MINOR) "." KEYHOOK_EXAMPLES_CLI_NUMBER(KEYHOOK_VERSION_PATCH);
#undef KEYHOOK_EXAMPLES_CLI_NUMBER
#undef KEYHOOK_EXAMPLES_CLI_TEXT

// The exit statuses as --help's last lines show them.
inline constexpr const char* exit_status_footer =
    "Exit status: 0 done, 1 bad input, 2 usage error, 3 network, store or platform failure,\n"
    "4 deliveries gave up (webhook_deliver).";

// What a program says of itself.
struct program {
    std::string name;   // "key_audit"
    std::string usage;  // "usage: key_audit [--now T] ... [FILE|-]" (one or more lines, no final newline)
    // Said before "unexpected argument at position N" when an argument that
    // is not an option was not expected: "more than one input file" where the
    // program takes one.
    std::string extra_argument;
};

// A usage error found after parsing (a value out of range, options that do
// not go together): main() reports it with usage_failure().
struct usage_error {
    std::string why;
};

// Reports a usage error: "NAME: why", the usage line, where to find the rest.
inline int usage_failure(const program& p, std::string_view why, std::ostream& err = std::cerr) {
    err << p.name << ": " << why << '\n' << p.usage << '\n' << "Run '" << p.name << " --help' for every option.\n";
    return exit_usage;
}

// Lower case, for the values the spec spells with capitals (rule O1: "Active"
// and "active" name the same status).
inline std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// --help's layout: the program's own usage line first, then CLI11's lists,
// each option with its value's name, its default and whether it is required.
class formatter : public CLI::Formatter {
public:
    explicit formatter(std::string usage) : usage_(std::move(usage)) { column_width(34); }

    // A command's usage line names the program and its required options:
    // "usage: key_admin --store FILE create [options]".
    std::string make_usage(const CLI::App* app, std::string name) const override {
        if (app->get_parent() == nullptr) return usage_ + "\n";
        const CLI::App* root = app;
        while (root->get_parent() != nullptr) root = root->get_parent();
        std::string out = "usage: " + root->get_name();
        for (const CLI::Option* opt : root->get_options())
            if (opt->get_required()) out += " " + opt->get_name() + " " + opt->get_type_name();
        return out + " " + (name.empty() ? app->get_name() : name) + " [options]\n";
    }

    // The whole program's help, or one command's (PROGRAM COMMAND --help).
    std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
        if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
        std::string out = make_usage(app, name);
        const std::string description = make_description(app);
        if (!description.empty()) out += "\n" + description;
        out += make_positionals(app);
        out += make_groups(app, mode);
        out += make_subcommands(app, mode);
        const CLI::App* root = app;
        while (root->get_parent() != nullptr) root = root->get_parent();
        if (root != app)
            out += "\nThe options of " + root->get_name() + " itself: '" + root->get_name() + " --help'.\n";
        out += "\n" + make_footer(root);
        return out;
    }

    std::string make_option_opts(const CLI::Option* opt) const override {
        std::string out;
        if (opt->get_type_size() != 0) {
            if (!opt->get_type_name().empty()) out += " " + opt->get_type_name();
            if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
        }
        if (opt->get_required()) out += " (required)";
        if (!opt->get_default_str().empty()) out += " (default " + opt->get_default_str() + ")";
        return out;
    }

private:
    std::string usage_;
};

// Sets up `app` (before its options and subcommands are added, which inherit
// the setup): --help lists every subcommand's options, --version, the
// formatter, and unexpected arguments kept for parse() to report.
inline void configure(CLI::App& app, const program& p, const std::string& description) {
    app.name(p.name);
    app.description(description);
    app.formatter(std::make_shared<formatter>(p.usage));
    app.footer(exit_status_footer);
    app.set_help_flag();
    app.set_help_all_flag("-h,--help", "print this help, every option with its default, and exit");
    app.set_version_flag("--version", version_text, "print the version (" + std::string(version_text) + ") and exit");
    app.allow_extras();  // reported by parse(), by position only
    app.fallthrough();   // a main option may follow the subcommand
    app.option_defaults()->always_capture_default();
}

namespace detail {

// "--now: 1 required T missing" -> "--now".
inline std::string option_of(const std::string& message) {
    const auto colon = message.find(':');
    return colon == std::string::npos ? std::string() : message.substr(0, colon);
}

// The option named `name` and the command (or program) that has it, among
// `app` and the commands given.
inline std::pair<const CLI::App*, const CLI::Option*> find_option(const CLI::App& app, const std::string& name) {
    if (const CLI::Option* opt = app.get_option_no_throw(name)) return {&app, opt};
    for (const CLI::App* sub : app.get_subcommands())
        if (auto found = find_option(*sub, name); found.second != nullptr) return found;
    return {nullptr, nullptr};
}

// "--store is required" -> "--store FILE is required"; a command's:
// "delete: --confirm is required".
inline std::string required_option(const CLI::App& app, const std::string& message) {
    const auto end = message.find(" is required");
    if (message.rfind("-", 0) != 0 || end == std::string::npos) return std::string();
    const std::string name = message.substr(0, end);
    const auto [owner, opt] = find_option(app, name);
    if (opt == nullptr) return std::string();
    std::string out = owner->get_parent() != nullptr ? owner->get_name() + ": " + name : name;
    if (opt->get_expected_max() != 0 && !opt->get_type_name().empty()) out += " " + opt->get_type_name();
    return out + " is required";
}

// The usage error of CLI11's exception, in the programs' words.
inline std::string why(const CLI::App& app, const CLI::ParseError& e) {
    const std::string message = e.what();
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
        const std::string name = option_of(message);
        if (message.find(" missing") != std::string::npos) return name + ": needs a value";
        if (message.find("At Most") != std::string::npos) return name + ": given more than once";
        if (message.find("takes no value") != std::string::npos || message.find("Expected 0") != std::string::npos)
            return name + ": takes no value";
    }
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
        if (message.find("subcommand") != std::string::npos) return "a command is required";
        if (auto option = required_option(app, message); !option.empty()) return option;
    }
    return keyhook::escape_text(message);  // P1: it may quote an argument
}

}  // namespace detail

// What parsing found.
struct parse_result {
    enum kind { go_on, help, version, usage_error } what = go_on;
    std::string why;  // for usage_error: the message, naming the option at fault
};

namespace detail {

// The first argument `app` did not expect, reported: an unknown option by
// its name, anything else by its position only. Nothing when there is none.
inline std::optional<parse_result> unexpected(const CLI::App& app, const program& p,
                                              const std::vector<std::string>& args) {
    auto extras = app.remaining(true);
    // CLI11 keeps the "--" that ends the options among them.
    extras.erase(std::remove(extras.begin(), extras.end(), "--"), extras.end());
    if (extras.empty()) return std::nullopt;
    const std::string& first = extras.front();
    if (first.size() > 1 && first[0] == '-') {
        // The option's name only: "--own-key=VALUE" must not show VALUE.
        return parse_result{parse_result::usage_error,
                            "unknown option " + keyhook::quoted_input(first.substr(0, first.find('=')))};
    }
    std::size_t position = 0;
    for (std::size_t i = 0; i < args.size(); ++i)
        if (args[i] == first) {
            position = i + 1;
            break;
        }
    return parse_result{parse_result::usage_error,
                        (p.extra_argument.empty() ? std::string() : p.extra_argument + ": ") +
                            "unexpected argument at position " + std::to_string(position)};
}

}  // namespace detail

// Parses `args` (the arguments after the program's name) into `app`.
inline parse_result parse_arguments(CLI::App& app, const program& p, const std::vector<std::string>& args) {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    try {
        app.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        return {parse_result::help, {}};
    } catch (const CLI::CallForAllHelp&) {
        return {parse_result::help, {}};
    } catch (const CLI::CallForVersion&) {
        return {parse_result::version, {}};
    } catch (const CLI::RequiredError& e) {
        // Checked once every argument is read: an unknown option among them
        // is the first thing to say ("--tenat" explains the missing "--tenant").
        if (auto other = detail::unexpected(app, p, args)) return *other;
        return {parse_result::usage_error, detail::why(app, e)};
    } catch (const CLI::ParseError& e) {
        return {parse_result::usage_error, detail::why(app, e)};
    }
    if (auto other = detail::unexpected(app, p, args)) return *other;
    return {};
}

// --help's text: every option of every subcommand.
inline std::string help_text(const CLI::App& app) { return app.help("", CLI::AppFormatMode::All); }

// The command whose --help was asked for: the last one given
// ("key_admin create --help" shows create's), else the program.
inline const CLI::App& help_target(const CLI::App& app) {
    const CLI::App* at = &app;
    for (auto given = at->get_subcommands(); !given.empty(); given = at->get_subcommands()) at = given.back();
    return *at;
}

// What parse_arguments found, done: --help or --version printed (status 0),
// a usage error reported (status 2), or nullopt when the program goes on.
inline std::optional<int> finish(const CLI::App& app, const program& p, const parse_result& r) {
    switch (r.what) {
        case parse_result::go_on: return std::nullopt;
        case parse_result::help: std::cout << help_text(help_target(app)); return exit_ok;
        case parse_result::version: std::cout << version_text << '\n'; return exit_ok;
        case parse_result::usage_error: break;
    }
    return usage_failure(p, r.why);
}

// Parses argv into `app`. Returns nullopt when the program goes on, or the
// exit status after printing --help or --version (status 0) or a usage error
// (status 2).
inline std::optional<int> parse(CLI::App& app, const program& p, int argc, char** argv) {
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    return finish(app, p, parse_arguments(app, p, args));
}

// A program that takes no options but --help and --version: returns nullopt
// to go on, or the exit status.
inline std::optional<int> parse_no_options(const program& p, const std::string& description, int argc, char** argv) {
    CLI::App app;
    configure(app, p, description);
    return parse(app, p, argc, argv);
}

}  // namespace examples::cli
