// key_admin: keys at rest (K11) with their policies (K12 to K14), in the key
// store that key_gateway serves (examples/shared/key_store.hpp).
// --store STORE is "jsonl:PATH" or a plain PATH (a JSON-lines file, one
// machine), or postgresql://... (also postgres://...; one store for many
// gateways, examples/shared/postgres_key_store.hpp). The opener
// (examples/shared/store_opener.hpp) refuses any other form, naming the
// accepted ones: exit 2. Every command works on either, while gateways and
// other key_admin processes use the same store (K18: writers take turns on
// the store's lock, the file's or the database's).
//
//   key_admin --store STORE create --tenant T --name N --from TIME --until TIME
//             [--description D] [--group G]... [--shared] [--own-key-env VAR]
//             [--allow CIDR]... [--rate N/SECONDS] [--burst N]
//             [--credits N] [--refill daily|monthly:D]
//   key_admin --store STORE deactivate --id ID
//   key_admin --store STORE update --id ID [--reactivate] [--name N] [--description D] [--from TIME]
//             [--until TIME] [--group G]... [--allow CIDR]... [--rate N/SECONDS] [--burst N]
//             [--credits N] [--refill ...]
//   key_admin --store STORE rotate --id ID [--handover]
//   key_admin --store STORE delete --id ID --confirm
//   key_admin --store STORE list [--tenant T] [--format table|json]
//   key_admin --store STORE show --id ID [--format table|json]
//
// The command line is read by CLI11 under rule O1 (examples/shared/cli.hpp):
// --help lists every command's options with their defaults, --version, and
// usage errors name the flag. --format and --refill take their words in any
// case. --from takes now, a date YYYY-MM-DD (00:00:00Z of that day) or a
// timestamp (T1); --until the same, or +N with a unit d, h, m or s counted
// from --from when given, else from now (examples/shared/time_option.hpp).
//
// Peppers come from KEYHOOK_PEPPERS ("id:base64 ...", the first is current),
// an own key from the variable --own-key-env names: never from the command
// line, which other users of the machine can read. create and rotate print
// one JSON line {"id", "key", "masked", "warnings"}: the only time the key is
// shown; the store receives its digest.
//
// What the other commands print (docs/embedding.md, key_admin), never a key
// or a digest, text from the store escaped (P1), statuses as of now (S1, S3):
//   list    a table, one header row and one row per key: ID, STATUS, TENANT,
//           NAME, MASKED KEY (M1), PERIOD (UTC) FROM/UNTIL ("-" for an open
//           end), RATE LIMIT (100/60s), ALLOWLIST, CREDITS LEFT ("-":
//           unlimited), LAST USED (UTC) ("never"), instants to the second;
//           --format json: one JSON array, an object per key (the record of
//           spec 2.1 with its status as of now, tenant, policy, usage)
//   show    one key as "label: value" lines, instants exact (T4); --format
//           json: that key's object
//   deactivate, update, delete: what changed, on standard output:
//           "deactivated key ID: status Active -> Revoked", "updated key ID:
//           status BEFORE -> AFTER" and a line "  label: old -> new" per field
//           changed (K6: before and after), "deleted key ID (...)".
// A Revoked key is updated only with --reactivate, and --reactivate is
// refused on any other key: a description edit must never bring a revoked
// key back by accident.
//
// Messages name the command line's flags (--until, --confirm), never the
// library's names (rule O1). Exit status (rule O1): 0 done; 1 bad input: a
// store whose content does not read, an --id no key has, a change the rules
// refuse (the store then unchanged); 2 usage error, KEYHOOK_PEPPERS or
// --own-key-env's variable missing or malformed included; 3 the store's file
// cannot be opened, locked, read or written, or its database reached, read or
// written (or the platform's random source failed).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/creation.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/stored_key.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/key_policy_json.hpp"
#include "keyhook/lifecycle.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/status.hpp"
#include "shared/cli.hpp"
#include "shared/key_store.hpp"
#include "shared/store_opener.hpp"
#include "shared/text_table.hpp"
#include "shared/time_option.hpp"

namespace {

namespace cli = examples::cli;
namespace view = examples::text;

const cli::program program{
    "key_admin",
    "usage: key_admin --store STORE create|deactivate|update|rotate|delete|list|show [options]\n"
    "  create     --tenant T --name N --from TIME --until TIME [--description D] [--group G]...\n"
    "             [--shared] [--own-key-env VAR] [--allow CIDR]... [--rate N/SECONDS] [--burst N]\n"
    "             [--credits N] [--refill daily|monthly:D]\n"
    "  deactivate --id ID\n"
    "  update     --id ID [--reactivate] [--name N] [--description D] [--from TIME] [--until TIME]\n"
    "             [--group G]... [--allow CIDR]... [--rate N/SECONDS] [--burst N] [--credits N] [--refill ...]\n"
    "  rotate     --id ID [--handover]\n"
    "  delete     --id ID --confirm\n"
    "  list       [--tenant T] [--format table|json]\n"
    "  show       --id ID [--format table|json]\n"
    "TIME: now, YYYY-MM-DD (00:00:00Z), a timestamp (2026-12-01T09:30:00Z); --until also +N with\n"
    "a unit d, h, m or s (+30d, +12h), counted from --from when given, else from now",
    ""};

constexpr const char* description =
    "Keeps API keys at rest (K11) with their policies, in the key store key_gateway serves.\n"
    "--store STORE: jsonl:PATH or a plain PATH (a JSON-lines key file), or postgresql://... (a\n"
    "database many gateways share; the password in PGPASSFILE or PGPASSWORD). See docs/embedding.md.\n"
    "Environment: KEYHOOK_PEPPERS=\"id:base64 ...\" (create, rotate; the first is current).\n"
    "create and rotate print {\"id\", \"key\", \"masked\", \"warnings\"}: the only time the key is shown.\n"
    "deactivate, update and delete print what changed; list and show print keys (never a key or a digest).";

using usage_error = cli::usage_error;

// The options of the command given, as text (checked by the commands).
struct options {
    std::string store, command;
    std::map<std::string, std::vector<std::string>> values;  // option -> values in order
    std::map<std::string, bool> flags;

    [[nodiscard]] const std::string* one(const std::string& name) const {
        const auto it = values.find(name);
        return it == values.end() ? nullptr : &it->second.back();
    }
    [[nodiscard]] const std::vector<std::string>* all(const std::string& name) const {
        const auto it = values.find(name);
        return it == values.end() ? nullptr : &it->second;
    }
    [[nodiscard]] bool flag(const std::string& name) const { return flags.count(name) != 0; }
};

const std::string from_help = std::string("activeFrom: ") + cli::time_forms;
const std::string until_help = "expireAt: as --from, or +N d|h|m|s after --from (+30d)";
const std::string update_from_help = std::string("a new activeFrom: ") + cli::time_forms;
const std::string update_until_help = "a new expireAt: as --from, or +N d|h|m|s after --from if given, else after now";

// The command line as CLI11 reads it: every option of every command, each
// value as text.
struct command_line {
    CLI::App app;
    std::string store;
    // The repeatable options' values, one vector per command that takes them.
    std::map<std::string, std::vector<std::string>> repeated;

    command_line() {
        cli::configure(app, program, description);
        app.add_option("--store", store,
                       "jsonl:PATH or a plain PATH (a JSON-lines key file), or postgresql://... (also postgres://)")
            ->type_name("STORE")
            ->required();
        app.require_subcommand(0, 1);  // none: reported by parse() below, naming the commands

        auto* create = app.add_subcommand("create", "create a key; prints it once, with its id and masked form");
        create->add_option("--tenant", "the tenant the key belongs to")->type_name("T")->required();
        create->add_option("--name", "the key's name (K3)")->type_name("N")->required();
        create->add_option("--from")->description(from_help)->type_name("TIME")->required();
        create->add_option("--until")->description(until_help)->type_name("TIME")->required();
        create->add_option("--description", "the key's description")->type_name("D")->default_str("none");
        repeatable(create, "--group", "G", "a group the key grants (repeat for more)", "none");
        create->add_flag("--shared", "the tenant is a shared one (else restricted)")->default_str("restricted");
        create->add_option("--own-key-env", "take the key from this environment variable instead of generating it")
            ->type_name("VAR")
            ->default_str("a generated key");
        policy_options(create, "none");

        auto* deactivate =
            app.add_subcommand("deactivate", "revoke a key (K6): it stays in the store, Revoked; prints the change");
        deactivate->add_option("--id", "the key's id")->type_name("ID")->required();

        auto* update = app.add_subcommand(
            "update", "change a key; prints its status before and after (K6) and each field changed");
        update->add_option("--id", "the key's id")->type_name("ID")->required();
        update->add_flag("--reactivate", "required to update a Revoked key, refused on any other")->default_str("off");
        update->add_option("--name", "a new name")->type_name("N")->default_str("unchanged");
        update->add_option("--description", "a new description (empty: none)")
            ->type_name("D")
            ->default_str("unchanged");
        update->add_option("--from")->description(update_from_help)->type_name("TIME")->default_str("unchanged");
        update->add_option("--until")->description(update_until_help)->type_name("TIME")->default_str("unchanged");
        repeatable(update, "--group", "G", "the key's groups, all of them (repeat for more)", "unchanged");
        policy_options(update, "unchanged");

        auto* rotate = app.add_subcommand("rotate", "a new key for an old one (K7); prints it once");
        rotate->add_option("--id", "the old key's id")->type_name("ID")->required();
        rotate->add_flag("--handover", "the new key starts at the old one's expireAt")
            ->default_str("off: the new key starts now");

        auto* remove = app.add_subcommand("delete", "remove a key from the store (K8); prints what was deleted");
        remove->add_option("--id", "the key's id")->type_name("ID")->required();
        remove->add_flag("--confirm", "confirms the deletion, which cannot be undone (K8)")->required();

        auto* list = app.add_subcommand("list", "print the keys, status as of now: a table, or JSON");
        list->add_option("--tenant", "only this tenant's keys")->type_name("T")->default_str("every tenant");
        format_option(list, "one array, an object per key");

        auto* show = app.add_subcommand("show", "print one key, status as of now: label: value lines, or JSON");
        show->add_option("--id", "the key's id")->type_name("ID")->required();
        format_option(show, "the key's object");
    }

    static void format_option(CLI::App* command, const std::string& json) {
        command->add_option("--format")
            ->description("table for people, json for programs (" + json + "); any case")
            ->type_name("table|json")
            ->default_str("table");
    }

    void repeatable(CLI::App* command, const std::string& name, const std::string& value, const std::string& what,
                    const std::string& otherwise) {
        command->add_option(name, repeated[command->get_name() + name], what)
            ->type_name(value)
            ->default_str(otherwise)
            ->allow_extra_args(false);  // one value each time it is given, never the next argument
    }

    // --allow, --rate, --burst, --credits, --refill (create and update).
    void policy_options(CLI::App* command, const std::string& otherwise) {
        const bool update = otherwise == "unchanged";
        repeatable(command, "--allow", "CIDR", "an address range the key may be used from (repeat for more)",
                   update ? otherwise : "any address");
        command->add_option("--rate", "at most N calls per SECONDS (K13)")
            ->type_name("N/SECONDS")
            ->default_str(update ? otherwise : "no limit");
        command->add_option("--burst", "calls allowed at once, with --rate (at least 1)")
            ->type_name("N")
            ->default_str(update ? otherwise : "N of --rate");
        command->add_option("--credits", "the key's credits (K14); an update starts them afresh")
            ->type_name("N")
            ->default_str(update ? otherwise : "unlimited");
        command->add_option("--refill", "refill --credits daily or on day D of each month; any case")
            ->type_name("daily|monthly:D")
            ->default_str(update ? otherwise : "never");
    }
};

// Reads the command line. Returns the options, or the exit status after
// --help, --version or a usage error.
std::variant<options, int> parse_arguments(int argc, char** argv) {
    command_line cl;
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    auto r = cli::parse_arguments(cl.app, program, args);
    if (r.what == cli::parse_result::usage_error && cl.app.get_subcommands().empty() &&
        r.why.rfind("unexpected argument at position ", 0) == 0)
        // Not quoted: a key pasted onto the command line must not be echoed.
        r.why = "unknown command at position " + r.why.substr(32) +
                " (the commands: create, deactivate, update, rotate, delete, list, show)";
    if (r.what == cli::parse_result::go_on && cl.app.get_subcommands().empty())
        r = {cli::parse_result::usage_error,
             "a command is required: create, deactivate, update, rotate, delete, list or show"};
    if (const auto status = cli::finish(cl.app, program, r)) return *status;
    options o;
    o.store = cl.store;
    const CLI::App* command = cl.app.get_subcommands().front();
    o.command = command->get_name();
    for (const CLI::Option* opt : command->get_options()) {
        if (opt->count() == 0) continue;
        const std::string name = opt->get_name();
        if (opt->get_expected_max() == 0)  // a flag
            o.flags[name] = true;
        else
            o.values[name] = opt->results();
    }
    return o;
}

keyhook::timestamp clock_now() { return keyhook::to_timestamp(std::chrono::system_clock::now()); }

// A change the rules refuse, or an --id no key has (exit 1): each problem
// names the flag it is about.
struct refusal {
    std::vector<std::pair<std::string, std::string>> problems;  // flag, why
};

refusal refused(std::string flag, std::string why) { return refusal{{{std::move(flag), std::move(why)}}}; }

// The library's member names in a message, in the command line's words.
std::string in_flag_words(std::string message) {
    static const std::pair<const char*, const char*> words[] = {{"activeFrom", "the period's start"},
                                                                {"expireAt", "the period's end"}};
    for (const auto& [from, to] : words)
        for (auto at = message.find(from); at != std::string::npos; at = message.find(from, at))
            message.replace(at, std::string_view(from).size(), to);
    // "repeats groups[0] \"user:pf\"" -> "repeats an earlier --group \"user:pf\"".
    for (auto at = message.find("groups["); at != std::string::npos; at = message.find("groups[", at)) {
        const auto end = message.find(']', at);
        if (end == std::string::npos) break;
        message.replace(at, end + 1 - at, "an earlier --group");
    }
    return message;
}

// K3's problems (the library's paths: name, description, activeFrom,
// expireAt, groups[i]) under the flags that set them.
refusal in_flags(const std::vector<keyhook::error>& problems) {
    static const std::pair<const char*, const char*> flags[] = {{"name", "--name"},
                                                                {"description", "--description"},
                                                                {"activeFrom", "--from"},
                                                                {"expireAt", "--until"},
                                                                {"groups", "--group"}};
    refusal out;
    for (const auto& e : problems) {
        std::string flag = e.path;
        for (const auto& [path, name] : flags)
            if (e.path.rfind(path, 0) == 0) flag = name;
        out.problems.emplace_back(flag, in_flag_words(e.message));
    }
    return out;
}

// P1 for --tenant, as K3 for --name: valid UTF-8, no control character (C0,
// DEL, C1), not empty or only spaces, at most 128 characters. Checked before
// the store is read or written, so the refusal names the flag (exit 1). A
// small copy of K3's text rule: the library's own is not public API.
constexpr std::size_t max_tenant_characters = 128;

// The code points of `text`, or nullopt when it is not valid UTF-8 (overlong
// forms, surrogates and values past U+10FFFF included).
std::optional<std::vector<std::uint32_t>> code_points(std::string_view text) {
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        std::size_t n = 0;
        std::uint32_t cp = 0, least = 0;
        if (b < 0x80) {
            n = 1;
            cp = b;
        } else if ((b & 0xE0) == 0xC0) {
            n = 2;
            cp = b & 0x1Fu;
            least = 0x80;
        } else if ((b & 0xF0) == 0xE0) {
            n = 3;
            cp = b & 0x0Fu;
            least = 0x800;
        } else if ((b & 0xF8) == 0xF0) {
            n = 4;
            cp = b & 0x07u;
            least = 0x10000;
        } else {
            return std::nullopt;
        }
        if (i + n > text.size()) return std::nullopt;
        for (std::size_t k = 1; k < n; ++k) {
            const auto c = static_cast<unsigned char>(text[i + k]);
            if ((c & 0xC0) != 0x80) return std::nullopt;
            cp = (cp << 6) | (c & 0x3Fu);
        }
        if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
        out.push_back(cp);
        i += n;
    }
    return out;
}

void check_tenant(const options& o) {
    const auto* tenant = o.one("--tenant");
    if (!tenant) return;
    const auto cps = code_points(*tenant);
    if (!cps) throw refused("--tenant", "is not valid UTF-8");
    for (std::size_t i = 0; i < cps->size(); ++i)
        if ((*cps)[i] < 0x20 || ((*cps)[i] >= 0x7F && (*cps)[i] <= 0x9F))
            throw refused("--tenant",
                          "must not contain control characters, found one at character " + std::to_string(i + 1));
    if (tenant->find_first_not_of(' ') == std::string::npos)
        throw refused("--tenant", "must not be empty or only spaces");
    if (cps->size() > max_tenant_characters)
        throw refused("--tenant", "must be at most " + std::to_string(max_tenant_characters) + " characters, got " +
                                      std::to_string(cps->size()));
}

// Options whose values are read as time (examples/shared/time_option.hpp):
// --from, and --until counted from --from when it is given, else from now.
struct period_options {
    std::optional<keyhook::timestamp> from, until;
};

period_options time_options(const options& o, keyhook::timestamp now) {
    period_options p;
    if (const auto* from = o.one("--from")) p.from = cli::time_option("--from", *from, now);
    if (const auto* until = o.one("--until")) p.until = cli::time_option("--until", *until, now, p.from.value_or(now));
    return p;
}

// K3's order of the period, said with the flags: `from` and `until` are the
// period a change leaves, `given` what the command line set.
void check_period(keyhook::timestamp from, keyhook::timestamp until, const period_options& given) {
    if (from < until) return;
    if (given.until)
        throw refused("--until", keyhook::format_timestamp(until) + " is not after the period's start " +
                                     keyhook::format_timestamp(from) +
                                     (given.from ? " (--from)" : " (the key's, unchanged)"));
    throw refused("--from", keyhook::format_timestamp(from) + " is not before the period's end " +
                                keyhook::format_timestamp(until) + " (the key's, unchanged)");
}

std::uint64_t count_option(const std::string& name, const std::string& text) {
    if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
        throw usage_error{name + ": expected a whole number, got " + keyhook::quoted_input(text)};
    return std::stoull(text);
}

// --allow, --rate, --burst, --credits, --refill onto `p`. Returns whether
// --credits was given (an update then resets the remaining credits).
bool apply_policy_options(const options& o, keyhook::key_policy& p) {
    if (const auto* list = o.all("--allow")) {
        p.addresses.clear();
        for (const auto& text : *list) {
            auto r = keyhook::try_parse_address_range(text);
            if (!r) throw usage_error{"--allow: " + r.error().message};
            p.addresses.push_back(*r);
        }
    }
    if (const auto* rate = o.one("--rate")) {
        const auto slash = rate->find('/');
        if (slash == std::string::npos)
            throw usage_error{"--rate: expected N/SECONDS, got " + keyhook::quoted_input(*rate)};
        keyhook::rate_limit l;
        l.limit = count_option("--rate", rate->substr(0, slash));
        const auto seconds = count_option("--rate", rate->substr(slash + 1));
        if (seconds == 0) throw usage_error{"--rate: the period must be at least 1 second"};
        if (seconds > 100ULL * 366 * 24 * 3600) throw usage_error{"--rate: the period is longer than 100 years"};
        l.period = std::chrono::seconds{static_cast<long long>(seconds)};
        p.rate = l;
    }
    if (const auto* burst = o.one("--burst")) {
        if (!p.rate) throw usage_error{"--burst needs --rate"};
        p.rate->burst = count_option("--burst", *burst);
        if (p.rate->burst == 0) throw usage_error{"--burst: at least 1"};
    }
    const auto* credits = o.one("--credits");
    if (credits) {
        p.limited_credits = true;
        p.initial_credits = count_option("--credits", *credits);
    }
    if (const auto* refill = o.one("--refill")) {
        if (!p.limited_credits) throw usage_error{"--refill needs --credits"};
        keyhook::credit_refill r;
        r.amount = p.initial_credits;
        const std::string word = cli::lower(*refill);  // O1: any case
        if (word == "daily") {
            r.period = keyhook::refill_period::daily;
        } else if (word.rfind("monthly:", 0) == 0) {
            r.period = keyhook::refill_period::monthly;
            const auto day = count_option("--refill", word.substr(8));
            if (day < 1 || day > 31) throw usage_error{"--refill: the day is 1 to 31"};
            r.day = static_cast<unsigned>(day);
        } else {
            throw usage_error{"--refill: expected daily or monthly:D, got " + keyhook::quoted_input(*refill)};
        }
        p.refill = r;
    }
    // The library's paths (rate.limit, rate.period, rate.burst, refill.day), as flags.
    const auto problems = keyhook::key_policy_problems(p);
    if (!problems.empty()) {
        const auto& first = problems.front();
        const std::string flag = first.path == "rate.burst"           ? "--burst"
                                 : first.path.rfind("rate", 0) == 0   ? "--rate"
                                 : first.path.rfind("refill", 0) == 0 ? "--refill"
                                                                      : "--credits";
        throw usage_error{flag + ": " + first.message};
    }
    return credits != nullptr;
}

// KEYHOOK_PEPPERS is configuration, as the command line is: missing or
// malformed, a usage error (O1). The message names the pepper by its
// position, never its bytes.
keyhook::crypto::pepper_set peppers_from_environment() {
    const char* value = std::getenv("KEYHOOK_PEPPERS");
    auto set = key_store::parse_peppers(value ? value : "");
    if (!set) throw usage_error{keyhook::escape_text(set.error().path + ": " + set.error().message)};
    return *set;
}

// The one line create and rotate print: the key shown once.
void print_new_key(const keyhook::api_key& record, const keyhook::secret& key,
                   const std::vector<keyhook::key_warning>& warnings) {
    nlohmann::json out;
    out["id"] = record.id.str();
    out["key"] = key.reveal();
    out["masked"] = record.masked.value_or("");
    out["warnings"] = nlohmann::json::array();
    for (const auto& w : warnings) out["warnings"].push_back({{"path", w.path}, {"message", w.message}});
    std::cout << keyhook::escape_json_text(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
              << std::endl;
}

struct failure {
    keyhook::error error;
};

// Runs `change` on the store's entries under its lock; it returns whether to write.
template <class Change>
void change_store(key_store::key_store& store, Change&& change) {
    auto r = store.update(
        [&](std::vector<key_store::entry>& entries, const key_store::store_version&) { return change(entries); });
    if (!r) throw failure{r.error()};
}

// The id as output shows it (P1: an id read from the store may hold anything).
std::string shown_id(const keyhook::key_id& id) { return keyhook::escape_text(id.str()); }

template <class Entries>
auto& find_entry(Entries& entries, const std::string& id) {
    for (auto& e : entries)
        if (e.record.id.str() == id) return e;
    throw refused("--id", "no key in the store has the id " + keyhook::quoted_input(id));
}

template <class T>
T value_or_fail(keyhook::result<T> r) {
    if (!r) throw failure{r.error()};
    return std::move(*r);
}

void or_fail(const keyhook::result<void>& r) {
    if (!r) throw failure{r.error()};
}

// ---- How a key is shown: the same fields in list, show and update's changes.

// "2026-12-01T09:30:00Z": the table's instants, to the second (rounded down).
std::string to_second(keyhook::timestamp t) { return keyhook::format_timestamp(t).substr(0, 19) + "Z"; }

enum class precision { second, exact };

std::string instant(keyhook::timestamp t, precision p) {
    return p == precision::second ? to_second(t) : keyhook::format_timestamp(t);
}

// T3: the customary "never expires" end, and the first instant there is.
const keyhook::timestamp open_end = keyhook::parse_timestamp("9999-12-31T23:59:59Z");

// "FROM/UNTIL" (ISO 8601's interval form), "-" for an open end.
std::string period_text(const keyhook::api_key& k, precision p) {
    const std::string from = k.active_from <= keyhook::min_timestamp ? "-" : instant(k.active_from, p);
    const std::string until = k.expire_at >= open_end ? "-" : instant(k.expire_at, p);
    return from + "/" + until;
}

// "100/60s", "100/60s (burst 20)" when the burst is not the limit, "-" for none.
std::string rate_text(const std::optional<keyhook::rate_limit>& rate) {
    if (!rate) return "-";
    const auto us = rate->period.count();
    std::string out = std::to_string(rate->limit) + "/" +
                      (us % 1000000 == 0 ? std::to_string(us / 1000000) + "s" : std::to_string(us) + "us");
    if (rate->effective_burst() != rate->limit) out += " (burst " + std::to_string(rate->effective_burst()) + ")";
    return out;
}

std::string allowlist_text(const std::vector<keyhook::address_range>& ranges) {
    if (ranges.empty()) return "-";
    std::string out;
    for (const auto& r : ranges) out += (out.empty() ? "" : ",") + keyhook::to_string(r);
    return out;
}

// K14: the credits left as of `now`, refills due by then applied (a cost of
// 0 spends nothing); nullopt for unlimited.
std::optional<std::uint64_t> credits_left(const key_store::entry& e, keyhook::timestamp now) {
    if (!e.policy.limited_credits) return std::nullopt;
    return keyhook::spend_credits(e.policy.refill, e.usage.credits, 0, now).state.remaining;
}

std::string credits_text(const key_store::entry& e, keyhook::timestamp now) {
    const auto left = credits_left(e, now);
    return left ? std::to_string(*left) : "-";
}

std::string refill_text(const keyhook::key_policy& p) {
    if (!p.limited_credits || !p.refill) return "-";
    const std::string to = " to " + std::to_string(p.refill->amount);
    if (p.refill->period == keyhook::refill_period::daily) return "daily" + to;
    return "monthly on day " + std::to_string(p.refill->day) + to;
}

std::string masked_text(const keyhook::api_key& k) {
    return k.masked ? keyhook::escape_text(keyhook::mask_key(*k.masked)) : "-";  // P2: masked again
}

std::string last_used_text(const keyhook::api_key& k, precision p) {
    return k.last_used_at ? instant(*k.last_used_at, p) : "never";
}

// One field of a key: as show prints it, and as update's changes print it
// (text from the store quoted there, so "a -> b" cannot be misread).
struct field {
    std::string label, shown, quoted;
};

field plain(std::string label, std::string value) { return {std::move(label), value, value}; }

field text_field(std::string label, const std::optional<std::string>& value) {
    if (!value) return plain(std::move(label), "-");
    return {std::move(label), keyhook::escape_text(*value), keyhook::quoted_input(*value, value->size())};
}

std::string groups_text(const std::vector<std::string>& groups) {
    std::string out;
    for (const auto& g : groups) out += (out.empty() ? "" : ",") + keyhook::escape_text(g);
    return out.empty() ? "-" : out;
}

// Every field of a key, as of `now`, in show's order.
std::vector<field> fields_of(const key_store::entry& e, keyhook::timestamp now) {
    const auto& k = e.record;
    return {plain("id", shown_id(k.id)),
            text_field("tenant", e.tenant),
            text_field("name", k.name),
            text_field("description", k.description),
            plain("status", std::string(keyhook::to_string(keyhook::status_at(k, now)))),
            plain("masked key", masked_text(k)),
            plain("groups", groups_text(k.groups)),
            plain("period", period_text(k, precision::exact)),
            plain("rate limit", rate_text(e.policy.rate)),
            plain("allowlist", allowlist_text(e.policy.addresses)),
            plain("credits left", credits_text(e, now)),
            plain("refill", refill_text(e.policy)),
            plain("last used", last_used_text(k, precision::exact)),
            plain("created", k.created_at ? keyhook::format_timestamp(*k.created_at) : "-"),
            plain("updated", k.updated_at ? keyhook::format_timestamp(*k.updated_at) : "-")};
}

// The JSON of one key: the record of spec 2.1 (masked again, P2) with its
// status as of `now`, then tenant, policy (K12 to K14, as the store keeps
// it) and usage (credits left as of now, null when unlimited; lastUsedAt).
// Never the stored digest, never a key.
nlohmann::ordered_json key_json(const key_store::entry& e, keyhook::timestamp now) {
    nlohmann::ordered_json j = e.record;
    j["status"] = std::string(keyhook::to_string(keyhook::status_at(e.record, now)));
    j["tenant"] = e.tenant;
    j["policy"] = e.policy;
    nlohmann::ordered_json usage;
    if (const auto left = credits_left(e, now))
        usage["creditsLeft"] = *left;
    else
        usage["creditsLeft"] = nullptr;
    if (e.record.last_used_at)
        usage["lastUsedAt"] = keyhook::format_timestamp(*e.record.last_used_at);
    else
        usage["lastUsedAt"] = nullptr;
    j["usage"] = std::move(usage);
    return j;
}

// P1 for JSON: nlohmann's dump leaves DEL, C1 and bidirectional controls raw.
std::string json_text(const nlohmann::ordered_json& j) {
    return keyhook::escape_json_text(j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

// ---- The commands.

void create(const options& o, key_store::key_store& store, keyhook::timestamp at) {
    check_tenant(o);
    const auto peppers = peppers_from_environment();
    const auto period = time_options(o, at);
    keyhook::key_request request;
    request.name = *o.one("--name");
    if (const auto* d = o.one("--description")) request.description = *d;
    request.active_from = *period.from;
    request.expire_at = *period.until;
    if (const auto* groups = o.all("--group")) request.groups = *groups;
    if (const auto* variable = o.one("--own-key-env")) {
        const char* own = std::getenv(variable->c_str());
        if (!own) throw usage_error{"--own-key-env: the variable " + keyhook::escape_text(*variable) + " is not set"};
        request.method = keyhook::own_key{keyhook::secret(own)};
        // K2: the key is configuration, as the variable's name is (O1: a usage
        // error). The problems say what is wrong, never the key.
        const auto problems = keyhook::own_key_problems(keyhook::secret(own));
        if (!problems.empty())
            throw usage_error{"--own-key-env: the key in " + keyhook::escape_text(*variable) + ": " +
                              problems.front().message};
    }
    key_store::entry e;
    e.tenant = *o.one("--tenant");
    apply_policy_options(o, e.policy);
    check_period(request.active_from, request.expire_at, period);
    if (auto problems = keyhook::key_request_problems(request); !problems.empty()) throw in_flags(problems);
    auto created = value_or_fail(keyhook::try_create_key(
        request, o.flag("--shared") ? keyhook::tenant_kind::shared : keyhook::tenant_kind::restricted,
        keyhook::crypto::openssl_random{}, at));
    const auto key = created.key.take();
    e.record = created.record;
    e.stored_key =
        value_or_fail(value_or_fail(keyhook::crypto::try_compute_stored_digest(peppers, *key)).try_store_form());
    e.usage = keyhook::key_usage::fresh(e.policy, at);
    const bool own = o.one("--own-key-env") != nullptr;
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        const auto is_new = key_store::check_key_is_new(entries, peppers, *key);  // K18
        if (!is_new && own) throw refused("--own-key-env", is_new.error().message);
        or_fail(is_new);
        entries.push_back(e);
        return true;
    });
    print_new_key(e.record, *key, created.warnings);
}

void deactivate(const options& o, key_store::key_store& store, keyhook::timestamp at) {
    keyhook::key_status before{}, after{};
    std::string id;
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        auto& e = find_entry(entries, *o.one("--id"));
        id = shown_id(e.record.id);
        before = keyhook::status_at(e.record, at);
        if (e.record.status == keyhook::key_status::revoked) return false;  // K6: nothing to write
        e.record = keyhook::deactivate_key(e.record, at);
        after = keyhook::status_at(e.record, at);
        return true;
    });
    if (before == keyhook::key_status::revoked)
        std::cout << "key " << id << " is already Revoked: nothing changed\n";
    else
        std::cout << "deactivated key " << id << ": status " << keyhook::to_string(before) << " -> "
                  << keyhook::to_string(after) << '\n';
}

void update(const options& o, key_store::key_store& store, keyhook::timestamp at) {
    const auto period = time_options(o, at);
    keyhook::key_update change;
    if (const auto* v = o.one("--name")) change.name = *v;
    if (const auto* v = o.one("--description")) change.description = *v;
    change.active_from = period.from;
    change.expire_at = period.until;
    if (const auto* v = o.all("--group")) change.groups = *v;
    const bool reactivate = o.flag("--reactivate");
    keyhook::key_update_report report;
    std::vector<field> old_fields, new_fields;
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        auto& e = find_entry(entries, *o.one("--id"));
        auto policy = e.policy;
        const bool credits_set = apply_policy_options(o, policy);
        check_period(change.active_from.value_or(e.record.active_from), change.expire_at.value_or(e.record.expire_at),
                     period);
        if (auto problems = keyhook::key_update_problems(e.record, change); !problems.empty()) throw in_flags(problems);
        report = value_or_fail(keyhook::try_update_key_reported(e.record, change, at));
        // K6: reactivation is explicit. Refused before anything is written.
        const bool revoked = report.before == keyhook::key_status::revoked;
        if (revoked && !reactivate)
            throw refused("--id",
                          "the key is Revoked: an update applies to it only with --reactivate "
                          "(the key is unchanged)");
        if (!revoked && reactivate)
            throw refused("--reactivate", "the key is not Revoked (it is " +
                                              std::string(keyhook::to_string(report.before)) +
                                              "): there is nothing to reactivate (the key is unchanged)");
        old_fields = fields_of(e, at);
        e.record = report.record;
        e.policy = policy;
        // New credits start afresh now; the gateway's write-back sees the change and keeps it.
        if (credits_set) e.usage.credits = keyhook::credit_state{policy.initial_credits, at};
        new_fields = fields_of(e, at);
        return true;
    });
    std::cout << "updated key " << shown_id(report.record.id) << ": status " << keyhook::to_string(report.before)
              << " -> " << keyhook::to_string(report.after) << '\n';
    bool any = false;
    for (std::size_t i = 0; i < old_fields.size(); ++i) {
        const auto& label = old_fields[i].label;
        if (label == "status" || label == "updated") continue;  // said above; every update sets it
        if (old_fields[i].quoted == new_fields[i].quoted) continue;
        std::cout << "  " << label << ": " << old_fields[i].quoted << " -> " << new_fields[i].quoted << '\n';
        any = true;
    }
    if (!any) std::cout << "  no other field changed\n";
}

void rotate(const options& o, key_store::key_store& store, keyhook::timestamp at) {
    const auto peppers = peppers_from_environment();
    std::optional<keyhook::secret> key;
    key_store::entry fresh;
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        const auto& old = find_entry(entries, *o.one("--id"));
        auto rotated = keyhook::try_rotate_key(
            old.record, o.flag("--handover") ? keyhook::rotation_policy::handover : keyhook::rotation_policy::from_now,
            keyhook::crypto::openssl_random{}, at);
        if (!rotated && !key_store::is_platform_failure(rotated.error()))
            throw refused("--id", in_flag_words(rotated.error().message));  // K7: the old key's period
        auto r = value_or_fail(std::move(rotated));
        key = r.key.take();
        fresh.tenant = old.tenant;
        fresh.policy = old.policy;
        fresh.record = r.record;
        fresh.usage = keyhook::key_usage::fresh(fresh.policy, at);
        fresh.stored_key =
            value_or_fail(value_or_fail(keyhook::crypto::try_compute_stored_digest(peppers, *key)).try_store_form());
        or_fail(key_store::check_key_is_new(entries, peppers, *key));  // K18
        entries.push_back(fresh);
        return true;
    });
    print_new_key(fresh.record, *key, {});
}

void remove(const options& o, key_store::key_store& store) {
    // K8: the command line requires --confirm (CLI11 refuses the command
    // without it, naming the flag); said again here in the same words.
    if (!o.flag("--confirm")) throw usage_error{"delete: --confirm is required"};
    std::string removed;
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        const auto& e = find_entry(entries, *o.one("--id"));
        const auto receipt =
            value_or_fail(keyhook::try_delete_key(e.record, keyhook::deletion_confirmation::confirmed));
        removed = shown_id(receipt.id) + " (tenant " + keyhook::escape_text(e.tenant) + ", name " +
                  keyhook::quoted_input(e.record.name, e.record.name.size()) + ")";
        entries.erase(std::remove_if(entries.begin(), entries.end(),
                                     [&](const key_store::entry& x) { return x.record.id == receipt.id; }),
                      entries.end());
        return true;
    });
    std::cout << "deleted key " << removed << '\n';
}

// --format: table (the default) or json, in any case (O1).
bool json_format(const options& o) {
    const auto* given = o.one("--format");
    const auto format = given ? cli::lower(*given) : std::string("table");
    if (format != "json" && format != "table")
        throw usage_error{"--format: expected table or json, got " + keyhook::quoted_input(*given)};
    return format == "json";
}

// The table's widest text cells are cut (show prints them whole).
constexpr std::size_t max_text_columns = 32;

std::string cell(const std::string& s) {
    return view::escape_to_width(s, max_text_columns, [](std::string_view t) { return keyhook::escape_text(t); });
}

void list(const options& o, key_store::key_store& store, keyhook::timestamp at) {
    const bool json = json_format(o);
    check_tenant(o);
    const auto entries = value_or_fail(store.read());
    std::vector<const key_store::entry*> shown;
    for (const auto& e : entries)
        if (!o.one("--tenant") || e.tenant == *o.one("--tenant")) shown.push_back(&e);
    if (json) {
        auto out = nlohmann::ordered_json::array();
        for (const auto* e : shown) out.push_back(key_json(*e, at));
        std::cout << json_text(out) << '\n';
        return;
    }
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"ID", "STATUS", "TENANT", "NAME", "MASKED KEY", "PERIOD (UTC)", "RATE LIMIT", "ALLOWLIST",
                    "CREDITS LEFT", "LAST USED (UTC)"});
    for (const auto* e : shown) {
        const auto& k = e->record;
        rows.push_back({shown_id(k.id), std::string(keyhook::to_string(keyhook::status_at(k, at))), cell(e->tenant),
                        cell(k.name), masked_text(k), period_text(k, precision::second), rate_text(e->policy.rate),
                        allowlist_text(e->policy.addresses), credits_text(*e, at),
                        last_used_text(k, precision::second)});
    }
    std::cout << view::render_table(rows);
}

void show(const options& o, key_store::key_store& store, keyhook::timestamp at) {
    const bool json = json_format(o);
    const auto entries = value_or_fail(store.read());
    const auto& e = find_entry(entries, *o.one("--id"));
    if (json) {
        std::cout << json_text(key_json(e, at)) << '\n';
        return;
    }
    std::vector<std::pair<std::string, std::string>> lines;
    for (auto& f : fields_of(e, at)) lines.emplace_back(std::move(f.label), std::move(f.shown));
    std::cout << view::render_fields(lines);
}

// O1: a failure of the store's file system (or of the platform's random
// source) is 3; anything else refused, the input's, 1.
int failed(const keyhook::error& e) {
    std::cerr << "key_admin: " << e << '\n';
    return key_store::is_platform_failure(e) ? cli::exit_failure : cli::exit_bad_input;
}

int refused_status(const refusal& r) {
    for (const auto& [flag, why] : r.problems) std::cerr << "key_admin: " << flag << ": " << why << '\n';
    return cli::exit_bad_input;
}

}  // namespace

int main(int argc, char** argv) {
    const auto parsed = parse_arguments(argc, argv);
    if (const int* status = std::get_if<int>(&parsed)) return *status;
    const auto& o = std::get<options>(parsed);
    try {
        std::string why;
        const auto address = examples::store::parse_store_address(o.store, examples::store::store_use::keys, why);
        if (!address) throw usage_error{why};
        // Only create makes a store: any other command on a file that is not
        // there is a mistyped path, not an empty store (nor a lock file left behind).
        if (o.command != "create" && address->kind == examples::store::backend::jsonl &&
            !examples::store::store_file_exists(*address))
            throw keyhook::error{keyhook::errc::invalid_value, address->shown,
                                 "no key store here: the file does not exist (key_admin create makes one)"};
        const auto opened = examples::store::open_key_store(*address);
        auto& store = *opened;
        const auto at = clock_now();  // one clock reading: times, statuses and credits agree
        if (o.command == "create")
            create(o, store, at);
        else if (o.command == "deactivate")
            deactivate(o, store, at);
        else if (o.command == "update")
            update(o, store, at);
        else if (o.command == "rotate")
            rotate(o, store, at);
        else if (o.command == "delete")
            remove(o, store);
        else if (o.command == "list")
            list(o, store, at);
        else
            show(o, store, at);
        return cli::exit_ok;
    } catch (const usage_error& e) {
        return cli::usage_failure(program, e.why);
    } catch (const refusal& r) {
        return refused_status(r);
    } catch (const failure& f) {
        return failed(f.error);
    } catch (const keyhook::error& e) {
        return failed(e);
    } catch (const std::exception& e) {
        std::cerr << "key_admin: " << keyhook::escape_text(e.what()) << '\n';
        return cli::exit_failure;
    }
}
