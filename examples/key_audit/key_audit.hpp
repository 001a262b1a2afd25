// key_audit's logic, kept apart from main() so the CLI tests can call it:
// options parsing, selection and the two renderings. The whole program is
// run(); main.cpp only supplies the streams, the clock and the bundled sample.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <iterator>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <date/date.h>
#include <nlohmann/json.hpp>

#include "keyhook/api_key.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/expiry_notices.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/key_list_view.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/key_list_request.hpp"
#include "shared/cli.hpp"
#include "shared/read_file.hpp"
#include "shared/text_table.hpp"

namespace key_audit {

// Exit codes: a contract scripts rely on (rule O1).
inline constexpr int exit_ok = examples::cli::exit_ok;
inline constexpr int exit_bad_input = examples::cli::exit_bad_input;
inline constexpr int exit_usage = examples::cli::exit_usage;

inline constexpr std::string_view usage =
    "usage: key_audit [--now T] [--since T] [--status active|future|expired|revoked|all] [--format table|json] "
    "[FILE|-]\n"
    "       key_audit --url BASE_URL --tenant TENANT [--page-size N] [--timeout S] [options] "
    "(token in KEYHOOK_TOKEN)";

inline constexpr std::string_view description =
    "Shows each API key of a list-call response with its status, expiry warning and masked key.\n"
    "With --since T it shows instead the expiry notices (activated, warning, expired) of\n"
    "(T, now]: pass the previous run's --now to see every change once.\n"
    "Without FILE it reads a bundled sample; '-' reads standard input. With --url it makes\n"
    "the list call itself, every page of it, with the bearer token in KEYHOOK_TOKEN.";

enum class status_choice { active, future, expired, revoked, all };
enum class output_format { table, json };

struct options {
    std::optional<keyhook::timestamp> now;    // absent: the current time
    std::optional<keyhook::timestamp> since;  // present: show the expiry notices of (since, now] instead
    status_choice status = status_choice::active;
    bool status_given = false;
    output_format format = output_format::table;
    std::string input;  // a file name, "-" for standard input, empty for the bundled sample
    bool help = false;
    bool version = false;
    // --url mode (fetch.hpp): the list call made by key_audit itself.
    std::optional<std::string> url;
    std::optional<std::string> tenant;
    std::int64_t page_size = keyhook::default_list_page_size;
    double timeout_seconds = 30;
};

inline const examples::cli::program& program() {
    static const examples::cli::program p{"key_audit", std::string(usage), "more than one input file"};
    return p;
}

namespace detail {

// Status names in any case (O1): "Active" is the spec's spelling.
inline std::optional<status_choice> parse_status_choice(std::string_view s) {
    const std::string v = examples::cli::lower(s);
    if (v == "active") return status_choice::active;
    if (v == "future") return status_choice::future;
    if (v == "expired") return status_choice::expired;
    if (v == "revoked") return status_choice::revoked;
    if (v == "all") return status_choice::all;
    return std::nullopt;
}

inline keyhook::error usage_error(std::string where, std::string why) {
    return keyhook::error{keyhook::errc::invalid_value, std::move(where), std::move(why)};
}

// The command line as CLI11 reads it: each value as text, checked by
// parse_options.
struct command_line {
    CLI::App app;
    std::string now, since, status, format, input, url, tenant, page_size, timeout;

    command_line() {
        examples::cli::configure(app, program(), std::string(description));
        app.add_option("--now", now, "the instant to audit at (rule T1)")->type_name("T")->default_str("the clock");
        app.add_option("--since", since, "show the expiry notices of (T, now] instead")->type_name("T");
        app.add_option("--status", status, "which keys to show, in any case")
            ->type_name("active|future|expired|revoked|all")
            ->default_str("active");
        app.add_option("--format", format, "table for people, json for programs")
            ->type_name("table|json")
            ->default_str("table");
        app.add_option("--url", url, "make the list call at this base URL instead of reading FILE")
            ->type_name("BASE_URL");
        app.add_option("--tenant", tenant, "the tenant whose keys --url lists")->type_name("TENANT");
        app.add_option("--page-size", page_size, "keys per page of the list call (1 to 10000)")
            ->type_name("N")
            ->default_str(std::to_string(keyhook::default_list_page_size));
        app.add_option("--timeout", timeout, "a request's overall limit in seconds (0.001 to 3600)")
            ->type_name("S")
            ->default_str("30");
        app.add_option("FILE", input, "the list call's response; '-' reads standard input")
            ->type_name("")
            ->default_str("the bundled sample");
    }
    [[nodiscard]] bool given(const char* name) const { return app.get_option(name)->count() > 0; }
};

// "--now: needs a value" -> {"--now", "needs a value"}; else the whole text.
inline keyhook::error split_usage_error(const std::string& why) {
    const auto colon = why.find(": ");
    if (why.rfind("--", 0) == 0 && colon != std::string::npos)
        return usage_error(why.substr(0, colon), why.substr(colon + 2));
    return usage_error("", why);
}

}  // namespace detail

// --help's text: every option, with its default.
[[nodiscard]] inline std::string help_text() {
    detail::command_line cl;
    return examples::cli::help_text(cl.app);
}

// Reads the arguments after the program name. Accepts "--opt value" and
// "--opt=value"; "--" ends the options. The error names the option at fault.
[[nodiscard]] inline keyhook::result<options> parse_options(const std::vector<std::string>& args) {
    using keyhook::quoted_input;
    options o;
    detail::command_line cl;
    const auto parsed = examples::cli::parse_arguments(cl.app, program(), args);
    switch (parsed.what) {
        case examples::cli::parse_result::help: o.help = true; return o;
        case examples::cli::parse_result::version: o.version = true; return o;
        case examples::cli::parse_result::usage_error: return detail::split_usage_error(parsed.why);
        case examples::cli::parse_result::go_on: break;
    }
    o.input = cl.input;
    for (const char* name : {"--now", "--since"}) {
        if (!cl.given(name)) continue;
        auto t = keyhook::try_parse_timestamp(std::string_view(name) == "--now" ? cl.now : cl.since);
        if (!t) return detail::usage_error(name, t.error().message);
        (std::string_view(name) == "--now" ? o.now : o.since) = *t;
    }
    if (cl.given("--status")) {
        const auto s = detail::parse_status_choice(cl.status);
        if (!s)
            return detail::usage_error(
                "--status", "expected active, future, expired, revoked or all, got " + quoted_input(cl.status));
        o.status = *s;
        o.status_given = true;
    }
    if (cl.given("--format")) {
        const std::string f = examples::cli::lower(cl.format);
        if (f == "table") {
            o.format = output_format::table;
        } else if (f == "json") {
            o.format = output_format::json;
        } else {
            return detail::usage_error("--format", "expected table or json, got " + quoted_input(cl.format));
        }
    }
    // Notices cover every key (a revoked one has none): a status filter would
    // hide exactly the keys that just expired.
    if (o.since && o.status_given) return detail::usage_error("--status", "does not apply with --since");

    if (cl.given("--url")) o.url = cl.url;
    if (cl.given("--tenant")) o.tenant = cl.tenant;
    if (cl.given("--page-size")) {
        char* end = nullptr;
        const long long n = std::strtoll(cl.page_size.c_str(), &end, 10);
        if (cl.page_size.empty() || *end != '\0' || n < 1 || n > 10000)
            return detail::usage_error("--page-size", "expected 1 to 10000, got " + quoted_input(cl.page_size));
        o.page_size = n;
    }
    if (cl.given("--timeout")) {
        char* end = nullptr;
        const double t = std::strtod(cl.timeout.c_str(), &end);
        if (cl.timeout.empty() || *end != '\0' || !(t >= 0.001 && t <= 3600))
            return detail::usage_error("--timeout",
                                       "expected seconds from 0.001 to 3600, got " + quoted_input(cl.timeout));
        o.timeout_seconds = t;
    }
    if (!o.url && (o.tenant || cl.given("--page-size") || cl.given("--timeout")))
        return detail::usage_error("", "--tenant, --page-size and --timeout go with --url");
    if (o.url && !o.tenant) return detail::usage_error("", "--url needs --tenant");
    if (o.url && cl.given("FILE"))
        return detail::usage_error(
            "", "--url reads the list call itself; drop the input " + keyhook::quoted_input(o.input, 256));
    return o;
}

// One key as the audit shows it: the record and what the clock says of it.
struct key_row {
    keyhook::api_key key;
    keyhook::key_status status = keyhook::key_status::active;
    bool warning = false;
};

// The keys to show, in the order of L3: Active keys through the library's
// default view; any other choice filtered by derived status, same order.
[[nodiscard]] inline std::vector<key_row> select_rows(const std::vector<keyhook::api_key>& records,
                                                      status_choice choice, keyhook::timestamp now) {
    std::vector<keyhook::api_key> chosen;
    if (choice == status_choice::active) {
        chosen = keyhook::default_view(records, now);
    } else {
        keyhook::key_filter filter;
        switch (choice) {
            case status_choice::future: filter.status = keyhook::key_status::active_in_future; break;
            case status_choice::expired: filter.status = keyhook::key_status::expired; break;
            case status_choice::revoked: filter.status = keyhook::key_status::revoked; break;
            case status_choice::active:
            case status_choice::all: break;
        }
        chosen = keyhook::select_keys(records, filter, now);
    }
    std::vector<key_row> rows;
    rows.reserve(chosen.size());
    for (auto& k : chosen) {
        key_row r;
        r.status = keyhook::status_at(k, now);
        r.warning = keyhook::expiry_warning_at(k, now);
        r.key = std::move(k);
        rows.push_back(std::move(r));
    }
    return rows;
}

// The masked key to show. The platform sends it masked already; masking it
// again costs nothing and keeps a wrongly unmasked key off the screen (M3).
[[nodiscard]] inline std::optional<std::string> shown_mask(const keyhook::api_key& k) {
    if (!k.masked) return std::nullopt;
    return keyhook::mask_key(*k.masked);
}

// What the response holds of the whole list (L2, a partial page says so): the envelope's
// `count` (keys across all pages) and the records this response held, valid
// and rejected, so a partial page never reads as the whole list.
struct response_summary {
    std::int64_t count = 0;
    std::size_t records = 0;
};

[[nodiscard]] inline response_summary summarize(const keyhook::key_list_page& page) {
    return response_summary{page.count, page.elements()};
}

// --format json: {"now": T, "count": N, "records": N, "keys": [...]}, members
// in a fixed order.
[[nodiscard]] inline std::string render_json(const std::vector<key_row>& rows, keyhook::timestamp now,
                                             const response_summary& summary) {
    using json = nlohmann::ordered_json;
    json keys = json::array();
    for (const auto& r : rows) {
        json k = json::object();
        k["id"] = r.key.id.str();
        k["name"] = r.key.name;
        if (const auto m = shown_mask(r.key))
            k["masked"] = *m;
        else
            k["masked"] = nullptr;
        k["status"] = std::string(keyhook::to_string(r.status));
        k["warning"] = r.warning;
        k["activeFrom"] = keyhook::format_timestamp(r.key.active_from);
        k["expireAt"] = keyhook::format_timestamp(r.key.expire_at);
        if (r.key.last_used_at)
            k["lastUsedAt"] = keyhook::format_timestamp(*r.key.last_used_at);
        else
            k["lastUsedAt"] = nullptr;
        keys.push_back(std::move(k));
    }
    json doc = json::object();
    doc["now"] = keyhook::format_timestamp(now);
    doc["count"] = summary.count;
    doc["records"] = summary.records;
    doc["keys"] = std::move(keys);
    // P1: dump() leaves DEL, C1 and bidirectional controls raw.
    return keyhook::escape_json_text(doc.dump(2, ' ', false, json::error_handler_t::replace)) + "\n";
}

namespace detail {

// Escapes control and bidirectional characters (P1), so a name can neither
// move the cursor, clear the screen, reorder the line nor start a new one.
inline std::string printable(std::string_view s) { return keyhook::escape_text(s); }

}  // namespace detail

// Terminal columns and cutting to them: the same as every program's tables.
using examples::text::display_width;
using examples::text::truncate_to_width;

// A name as the table shows it: escaped (P1), then cut between its code points.
[[nodiscard]] inline std::string name_cell(std::string_view name, std::size_t max_columns) {
    return examples::text::escape_to_width(name, max_columns, detail::printable);
}

// Whole days from now until the key expires, as the table shows them.
[[nodiscard]] inline std::string days_left(const key_row& r, keyhook::timestamp now) {
    using keyhook::key_status;
    if (r.status == key_status::expired || r.status == key_status::revoked) return "-";
    // T3's far-future expiry ("9999-12-31T23:59:59Z") means the key never expires.
    if (r.key.expire_at >= keyhook::timestamp{date::sys_days{date::year{9999} / 1 / 1}.time_since_epoch()})
        return "never";
    const auto days = date::floor<date::days>(r.key.expire_at - now).count();
    return days < 1 ? "<1" : std::to_string(days);
}

// "2026-11-23 08:00": minutes are enough for people; the JSON keeps every digit.
[[nodiscard]] inline std::string short_time(keyhook::timestamp t) {
    std::string s = keyhook::format_timestamp(t).substr(0, 16);
    s[10] = ' ';
    return s;
}

inline constexpr std::size_t max_name_columns = 32;
inline constexpr std::string_view warning_marker = "!";

// --format table: aligned columns for people, the warning marked in the first.
// The first line says how many keys are shown of the records read, and how
// many of the list's keys (`count`) this response held.
[[nodiscard]] inline std::string render_table(const std::vector<key_row>& rows, keyhook::timestamp now,
                                              std::size_t total, status_choice choice,
                                              const response_summary& summary) {
    static constexpr std::string_view choice_names[] = {"active", "future", "expired", "revoked", "all"};
    static constexpr std::size_t days_column = 4;
    std::vector<std::vector<std::string>> cells;
    cells.push_back({"", "NAME", "STATUS", "EXPIRES (UTC)", "DAYS LEFT", "KEY", "LAST USED (UTC)"});
    bool any_warning = false;
    for (const auto& r : rows) {
        any_warning = any_warning || r.warning;
        const auto mask = shown_mask(r.key);
        cells.push_back({r.warning ? std::string(warning_marker) : std::string(),
                         name_cell(r.key.name, max_name_columns), std::string(keyhook::to_string(r.status)),
                         short_time(r.key.expire_at), days_left(r, now), mask ? detail::printable(*mask) : "-",
                         r.key.last_used_at ? short_time(*r.key.last_used_at) : "never"});
    }
    std::vector<std::size_t> widths(cells.front().size(), 0);
    for (const auto& line : cells)
        for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], display_width(line[c]));

    std::ostringstream out;
    out << "keys at " << keyhook::format_timestamp(now) << ": " << rows.size() << " of " << total << " (status "
        << choice_names[static_cast<std::size_t>(choice)] << "); this response holds " << summary.records << " of "
        << summary.count << " keys";
    if (summary.count >= 0 && summary.records < static_cast<std::uint64_t>(summary.count))
        out << ", " << static_cast<std::uint64_t>(summary.count) - summary.records << " not audited";
    out << "\n";
    if (rows.empty()) return out.str();
    out << '\n';
    for (const auto& line : cells) {
        std::string text;
        for (std::size_t c = 0; c < line.size(); ++c) {
            if (c > 0) text += "  ";
            const std::size_t pad = widths[c] - display_width(line[c]);
            // Numbers read best right-aligned; the others are padded on the right.
            if (c == days_column) text.append(pad, ' ');
            text += line[c];
            if (c != days_column && c + 1 < line.size()) text.append(pad, ' ');
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out << text << '\n';
    }
    if (any_warning) out << '\n' << warning_marker << " expires soon: the expiry warning is on (rules W1 to W3)\n";
    return out.str();
}

// --since with --format json: {"since": T, "now": T, "notices": [...]}.
[[nodiscard]] inline std::string render_notices_json(const keyhook::notice_digest& digest) {
    using json = nlohmann::ordered_json;
    const json doc = digest;
    return keyhook::escape_json_text(doc.dump(2, ' ', false, json::error_handler_t::replace)) + "\n";
}

// --since with --format table: one aligned line per notice, to the second
// (a change at 12:00:00.85 must not read as the excluded 12:00 of `since`).
[[nodiscard]] inline std::string render_notices_table(const keyhook::notice_digest& digest) {
    const auto to_second = [](keyhook::timestamp t) {
        std::string s = keyhook::format_timestamp(t).substr(0, 19);
        s[10] = ' ';
        return s;
    };
    std::vector<std::vector<std::string>> cells;
    cells.push_back({"AT (UTC)", "CHANGE", "NAME", "KEY", "EXPIRES (UTC)"});
    for (const auto& n : digest.notices)
        cells.push_back({to_second(n.at), std::string(keyhook::to_string(n.kind)), name_cell(n.name, max_name_columns),
                         n.masked ? detail::printable(*n.masked) : "-", short_time(n.expire_at)});
    std::vector<std::size_t> widths(cells.front().size(), 0);
    for (const auto& line : cells)
        for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], display_width(line[c]));

    std::ostringstream out;
    out << "notices in (" << keyhook::format_timestamp(digest.since) << ", " << keyhook::format_timestamp(digest.now)
        << "]: " << digest.notices.size() << '\n';
    if (digest.notices.empty()) return out.str();
    out << '\n';
    for (const auto& line : cells) {
        std::string text;
        for (std::size_t c = 0; c < line.size(); ++c) {
            if (c > 0) text += "  ";
            text += line[c];
            if (c + 1 < line.size()) text.append(widths[c] - display_width(line[c]), ' ');
        }
        out << text << '\n';
    }
    return out.str();
}

[[nodiscard]] inline int run(const options& o, std::istream& in, std::ostream& out, std::ostream& err,
                             keyhook::timestamp clock_now, std::string_view bundled);

// The whole program. `clock_now` is used when --now is not given; `bundled`
// is the sample read when no FILE is.
[[nodiscard]] inline int run(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                             std::ostream& err, keyhook::timestamp clock_now, std::string_view bundled) {
    auto parsed = parse_options(args);
    if (!parsed) {
        err << "key_audit: " << parsed.error().what() << '\n'
            << usage << '\n'
            << "Run 'key_audit --help' for every option.\n";
        return exit_usage;
    }
    return run(*parsed, in, out, err, clock_now, bundled);
}

// The file mode on options already read (main.cpp passes --url's response as "-").
[[nodiscard]] inline int run(const options& o, std::istream& in, std::ostream& out, std::ostream& err,
                             keyhook::timestamp clock_now, std::string_view bundled) {
    if (o.help) {
        out << help_text();
        return exit_ok;
    }
    if (o.version) {
        out << examples::cli::version_text << '\n';
        return exit_ok;
    }
    const keyhook::timestamp now = o.now.value_or(clock_now);
    // An interval that ends before it starts is a mistake, not an empty report.
    if (o.since && *o.since > now) {
        err << "key_audit: --since: " << keyhook::format_timestamp(*o.since) << " is after now ("
            << keyhook::format_timestamp(now) << ")\n"
            << usage << '\n';
        return exit_usage;
    }

    std::string text;
    std::string source = "bundled sample";
    if (o.input.empty()) {
        text.assign(bundled);
    } else if (o.input == "-") {
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        source = "<stdin>";
    } else {
        std::string why;
        auto read = examples::cli::read_whole_file(o.input, why);
        if (!read) {  // a directory included: refused by its read, never a library's exception
            err << "key_audit: cannot read " << keyhook::quoted_input(o.input, 256) << ": " << why << '\n';
            return exit_bad_input;
        }
        text = std::move(*read);
        source = keyhook::escape_text(o.input);  // P1: a file name is input too
    }

    auto page = keyhook::try_parse_key_list(text);
    if (!page) {
        err << "key_audit: " << source << ": " << page.error() << '\n';
        return exit_bad_input;
    }
    // A record the parser set aside is still bad input: say so, and fail. The
    // parser keeps the first 100 errors (J3); the rest are only counted.
    if (page->rejected_count > 0) {
        for (const auto& e : page->rejected) err << "key_audit: " << source << ": " << e << '\n';
        if (page->rejected_count > page->rejected.size())
            err << "key_audit: " << source << ": ... and " << page->rejected_count - page->rejected.size()
                << " more rejected records\n";
        return exit_bad_input;
    }

    if (o.since) {
        const auto digest = keyhook::digest_between(page->records, *o.since, now);
        out << (o.format == output_format::json ? render_notices_json(digest) : render_notices_table(digest));
        return exit_ok;
    }
    const auto rows = select_rows(page->records, o.status, now);
    const auto summary = summarize(*page);
    if (o.format == output_format::json)
        out << render_json(rows, now, summary);
    else
        out << render_table(rows, now, page->records.size(), o.status, summary);
    return exit_ok;
}

}  // namespace key_audit
