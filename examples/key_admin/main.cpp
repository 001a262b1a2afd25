// key_admin: keys at rest (K11) with their policies (K12 to K14), in the
// JSON-lines store that key_gateway serves (examples/shared/key_store.hpp).
// --store FILE is "jsonl:PATH" or a plain PATH (examples/shared/store_opener.hpp,
// which refuses any other form, naming the accepted ones: exit 2).
//
//   key_admin --store FILE create --tenant T --name N --from TIME --until TIME
//             [--description D] [--group G]... [--shared] [--own-key-env VAR]
//             [--allow CIDR]... [--rate N/SECONDS] [--burst N]
//             [--credits N] [--refill daily|monthly:D]
//   key_admin --store FILE deactivate --id ID
//   key_admin --store FILE update --id ID [--reactivate] [--name N] [--description D] [--from T] [--until T]
//             [--group G]... [--allow CIDR]... [--rate N/SECONDS] [--burst N] [--credits N] [--refill ...]
//   key_admin --store FILE rotate --id ID [--handover]
//   key_admin --store FILE delete --id ID --confirm
//   key_admin --store FILE list [--tenant T] [--format json|table]
//
// The command line is read by CLI11 under rule O1 (examples/shared/cli.hpp):
// --help lists every command's options with their defaults, --version, and
// usage errors name the flag. --format and --refill take their words in any
// case.
//
// Peppers come from KEYHOOK_PEPPERS ("id:base64 ...", the first is current),
// an own key from the variable --own-key-env names: never from the command
// line, which other users of the machine can read. create and rotate print
// one JSON line {"id", "key", "masked", "warnings"}: the only time the key is
// shown; the store receives its digest. update prints {"id", "before",
// "after"}: the key's status before and after (K6). A Revoked key is updated
// only with --reactivate, and --reactivate is refused on any other key: a
// description edit must never bring a revoked key back by accident.
//
// Exit status (rule O1): 0 done; 1 bad input: a store whose content does not
// read, an --id no key has, a change the rules refuse (the store then
// unchanged); 2 usage error, KEYHOOK_PEPPERS or --own-key-env's variable
// missing or malformed included; 3 the store's file cannot be opened, locked,
// read or written (or the platform's random source failed).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/creation.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/stored_key.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/lifecycle.hpp"
#include "keyhook/status.hpp"
#include "shared/cli.hpp"
#include "shared/key_store.hpp"
#include "shared/store_opener.hpp"

namespace {

namespace cli = examples::cli;

const cli::program program{
    "key_admin",
    "usage: key_admin --store FILE create|deactivate|update|rotate|delete|list [options]\n"
    "  create     --tenant T --name N --from TIME --until TIME [--description D] [--group G]...\n"
    "             [--shared] [--own-key-env VAR] [--allow CIDR]... [--rate N/SECONDS] [--burst N]\n"
    "             [--credits N] [--refill daily|monthly:D]\n"
    "  deactivate --id ID\n"
    "  update     --id ID [--reactivate] [--name N] [--description D] [--from T] [--until T] [--group G]...\n"
    "             [--allow CIDR]... [--rate N/SECONDS] [--burst N] [--credits N] [--refill ...]\n"
    "  rotate     --id ID [--handover]\n"
    "  delete     --id ID --confirm\n"
    "  list       [--tenant T] [--format json|table]",
    ""};

constexpr const char* description =
    "Keeps API keys at rest (K11) with their policies, in the JSON-lines store key_gateway serves.\n"
    "--store FILE: jsonl:PATH or a plain PATH, the JSON-lines key file (see docs/embedding.md).\n"
    "Environment: KEYHOOK_PEPPERS=\"id:base64 ...\" (create, rotate; the first is current).\n"
    "create and rotate print {\"id\", \"key\", \"masked\", \"warnings\"}: the only time the key is shown.";

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

// The command line as CLI11 reads it: every option of every command, each
// value as text.
struct command_line {
    CLI::App app;
    std::string store;
    // The repeatable options' values, one vector per command that takes them.
    std::map<std::string, std::vector<std::string>> repeated;

    command_line() {
        cli::configure(app, program, description);
        app.add_option("--store", store, "jsonl:PATH or a plain PATH: the JSON-lines key file")
            ->type_name("FILE")
            ->required();
        app.require_subcommand(0, 1);  // none: reported by parse() below, naming the commands

        auto* create = app.add_subcommand("create", "create a key; prints it once, with its id and masked form");
        create->add_option("--tenant", "the tenant the key belongs to")->type_name("T")->required();
        create->add_option("--name", "the key's name (K3)")->type_name("N")->required();
        create->add_option("--from", "activeFrom, a timestamp (rule T1)")->type_name("TIME")->required();
        create->add_option("--until", "expireAt, a timestamp after --from (rule T1)")->type_name("TIME")->required();
        create->add_option("--description", "the key's description")->type_name("D")->default_str("none");
        repeatable(create, "--group", "G", "a group the key grants (repeat for more)", "none");
        create->add_flag("--shared", "the tenant is a shared one (else restricted)")->default_str("restricted");
        create->add_option("--own-key-env", "take the key from this environment variable instead of generating it")
            ->type_name("VAR")
            ->default_str("a generated key");
        policy_options(create, "none");

        auto* deactivate = app.add_subcommand("deactivate", "revoke a key (K6): it stays in the store, Revoked");
        deactivate->add_option("--id", "the key's id")->type_name("ID")->required();

        auto* update =
            app.add_subcommand("update", "change a key; prints its status before and after (K6); unchanged by default");
        update->add_option("--id", "the key's id")->type_name("ID")->required();
        update->add_flag("--reactivate", "required to update a Revoked key, refused on any other")->default_str("off");
        update->add_option("--name", "a new name")->type_name("N")->default_str("unchanged");
        update->add_option("--description", "a new description")->type_name("D")->default_str("unchanged");
        update->add_option("--from", "a new activeFrom (rule T1)")->type_name("T")->default_str("unchanged");
        update->add_option("--until", "a new expireAt (rule T1)")->type_name("T")->default_str("unchanged");
        repeatable(update, "--group", "G", "the key's groups, all of them (repeat for more)", "unchanged");
        policy_options(update, "unchanged");

        auto* rotate = app.add_subcommand("rotate", "a new key for an old one (K7); prints it once");
        rotate->add_option("--id", "the old key's id")->type_name("ID")->required();
        rotate->add_flag("--handover", "the new key starts at the old one's expireAt")
            ->default_str("off: the new key starts now");

        auto* remove = app.add_subcommand("delete", "remove a key from the store (K8)");
        remove->add_option("--id", "the key's id")->type_name("ID")->required();
        remove->add_flag("--confirm", "confirms the deletion (K8)")->required();

        auto* list = app.add_subcommand("list", "print the keys (spec 4.1's records), status as of now");
        list->add_option("--tenant", "only this tenant's keys")->type_name("T")->default_str("every tenant");
        list->add_option("--format", "table for people, json (the list call's envelope) for programs; any case")
            ->type_name("json|table")
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
                " (the commands: create, deactivate, update, rotate, delete, list)";
    if (r.what == cli::parse_result::go_on && cl.app.get_subcommands().empty())
        r = {cli::parse_result::usage_error,
             "a command is required: create, deactivate, update, rotate, delete or list"};
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

keyhook::timestamp now() { return keyhook::to_timestamp(std::chrono::system_clock::now()); }

keyhook::timestamp time_option(const options& o, const std::string& name) {
    auto t = keyhook::try_parse_timestamp(*o.one(name));
    if (!t) throw usage_error{name + ": " + t.error().message};
    return *t;
}

std::uint64_t count_option(const std::string& name, const std::string& text) {
    if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
        throw usage_error{name + ": expected a whole number, got \"" + text + "\""};
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
        if (slash == std::string::npos) throw usage_error{"--rate: expected N/SECONDS, got \"" + *rate + "\""};
        keyhook::rate_limit l;
        l.limit = count_option("--rate", rate->substr(0, slash));
        const auto seconds = count_option("--rate", rate->substr(slash + 1));
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
            throw usage_error{"--refill: expected daily or monthly:D, got \"" + *refill + "\""};
        }
        p.refill = r;
    }
    const auto problems = keyhook::key_policy_problems(p);
    if (!problems.empty()) throw usage_error{"policy: " + problems.front().path + ": " + problems.front().message};
    return credits != nullptr;
}

// KEYHOOK_PEPPERS is configuration, as the command line is: missing or
// malformed, a usage error (O1). The message names the pepper by its
// position, never its bytes.
keyhook::crypto::pepper_set peppers_from_environment() {
    const char* text = std::getenv("KEYHOOK_PEPPERS");
    auto set = key_store::parse_peppers(text ? text : "");
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
    std::cout << out.dump() << std::endl;
}

struct failure {
    keyhook::error error;
};

// Runs `change` on the store's entries under its lock; it returns whether to write.
template <class Change>
void change_store(key_store::key_store& store, Change&& change) {
    auto r = store.update(
        [&](std::vector<key_store::entry>& entries, const key_store::file_stamp&) { return change(entries); });
    if (!r) throw failure{r.error()};
}

key_store::entry& find_entry(std::vector<key_store::entry>& entries, const std::string& id) {
    for (auto& e : entries)
        if (e.record.id.str() == id) return e;
    throw failure{keyhook::error{keyhook::errc::invalid_value, "--id", "no key in the store has this id"}};
}

template <class T>
T value_or_fail(keyhook::result<T> r) {
    if (!r) throw failure{r.error()};
    return std::move(*r);
}

void or_fail(const keyhook::result<void>& r) {
    if (!r) throw failure{r.error()};
}

void create(const options& o, key_store::key_store& store) {
    const auto peppers = peppers_from_environment();
    keyhook::key_request request;
    request.name = *o.one("--name");
    if (const auto* d = o.one("--description")) request.description = *d;
    request.active_from = time_option(o, "--from");
    request.expire_at = time_option(o, "--until");
    if (const auto* groups = o.all("--group")) request.groups = *groups;
    if (const auto* variable = o.one("--own-key-env")) {
        const char* own = std::getenv(variable->c_str());
        if (!own) throw usage_error{"--own-key-env: the variable " + *variable + " is not set"};
        request.method = keyhook::own_key{keyhook::secret(own)};
    }
    key_store::entry e;
    e.tenant = *o.one("--tenant");
    apply_policy_options(o, e.policy);
    const auto at = now();
    auto created = value_or_fail(keyhook::try_create_key(
        request, o.flag("--shared") ? keyhook::tenant_kind::shared : keyhook::tenant_kind::restricted,
        keyhook::crypto::openssl_random{}, at));
    const auto key = created.key.take();
    e.record = created.record;
    e.stored_key =
        value_or_fail(value_or_fail(keyhook::crypto::try_compute_stored_digest(peppers, *key)).try_store_form());
    e.usage = keyhook::key_usage::fresh(e.policy, at);
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        or_fail(key_store::check_key_is_new(entries, peppers, *key));  // K18
        entries.push_back(e);
        return true;
    });
    print_new_key(e.record, *key, created.warnings);
}

void deactivate(const options& o, key_store::key_store& store) {
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        auto& e = find_entry(entries, *o.one("--id"));
        e.record = keyhook::deactivate_key(e.record, now());
        return true;
    });
}

void update(const options& o, key_store::key_store& store) {
    keyhook::key_update change;
    if (const auto* v = o.one("--name")) change.name = *v;
    if (const auto* v = o.one("--description")) change.description = *v;
    if (o.one("--from")) change.active_from = time_option(o, "--from");
    if (o.one("--until")) change.expire_at = time_option(o, "--until");
    if (const auto* v = o.all("--group")) change.groups = *v;
    const bool reactivate = o.flag("--reactivate");
    keyhook::key_update_report report;
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        auto& e = find_entry(entries, *o.one("--id"));
        const auto at = now();
        auto policy = e.policy;
        const bool credits_set = apply_policy_options(o, policy);
        report = value_or_fail(keyhook::try_update_key_reported(e.record, change, at));
        // K6: reactivation is explicit. Refused before anything is written.
        const bool revoked = report.before == keyhook::key_status::revoked;
        if (revoked && !reactivate)
            throw failure{keyhook::error{keyhook::errc::invalid_value, "--id",
                                         "the key is Revoked: an update applies to it only with --reactivate "
                                         "(the key is unchanged)"}};
        if (!revoked && reactivate)
            throw failure{keyhook::error{keyhook::errc::invalid_value, "--reactivate",
                                         "the key is not Revoked (it is " +
                                             std::string(keyhook::to_string(report.before)) +
                                             "): there is nothing to reactivate (the key is unchanged)"}};
        e.record = report.record;
        e.policy = policy;
        // New credits start afresh now; the gateway's write-back sees the change and keeps it.
        if (credits_set) e.usage.credits = keyhook::credit_state{policy.initial_credits, at};
        return true;
    });
    nlohmann::json out;
    out["id"] = report.record.id.str();
    out["before"] = std::string(keyhook::to_string(report.before));
    out["after"] = std::string(keyhook::to_string(report.after));
    std::cout << out.dump() << std::endl;
}

void rotate(const options& o, key_store::key_store& store) {
    const auto peppers = peppers_from_environment();
    std::optional<keyhook::secret> key;
    key_store::entry fresh;
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        const auto& old = find_entry(entries, *o.one("--id"));
        const auto at = now();
        auto rotated = value_or_fail(keyhook::try_rotate_key(
            old.record, o.flag("--handover") ? keyhook::rotation_policy::handover : keyhook::rotation_policy::from_now,
            keyhook::crypto::openssl_random{}, at));
        key = rotated.key.take();
        fresh.tenant = old.tenant;
        fresh.policy = old.policy;
        fresh.record = rotated.record;
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
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        const auto& e = find_entry(entries, *o.one("--id"));
        // K8: the command line requires --confirm (a usage error without it, naming the flag).
        const auto receipt = value_or_fail(
            keyhook::try_delete_key(e.record, o.flag("--confirm") ? keyhook::deletion_confirmation::confirmed
                                                                  : keyhook::deletion_confirmation::not_confirmed));
        entries.erase(std::remove_if(entries.begin(), entries.end(),
                                     [&](const key_store::entry& x) { return x.record.id == receipt.id; }),
                      entries.end());
        return true;
    });
}

// The records as spec 4.1's list call returns them, status as of now.
void list(const options& o, key_store::key_store& store) {
    const auto format = o.one("--format") ? cli::lower(*o.one("--format")) : std::string("table");  // O1: any case
    if (format != "json" && format != "table")
        throw usage_error{"--format: expected json or table, got " + keyhook::quoted_input(*o.one("--format"))};
    const auto entries = value_or_fail(store.read());
    const auto at = now();
    std::vector<keyhook::api_key> records;
    for (const auto& e : entries) {
        if (o.one("--tenant") && e.tenant != *o.one("--tenant")) continue;
        records.push_back(e.record);
        records.back().status = keyhook::status_at(e.record, at);
    }
    if (format == "json") {
        nlohmann::json out;
        out["status"] = "success";
        out["data"]["count"] = records.size();
        out["data"]["page"] = 1;
        out["data"]["pageSize"] = records.size();
        out["data"]["result"] = nlohmann::json::array();
        for (const auto& r : records) out["data"]["result"].push_back(r);
        std::cout << out.dump(2) << std::endl;
        return;
    }
    for (const auto& r : records) std::cout << r << '\n';
}

// O1: a failure of the store's file system (or of the platform's random
// source) is 3; anything else refused, the input's, 1.
int failed(const keyhook::error& e) {
    std::cerr << "key_admin: " << e << '\n';
    return key_store::is_platform_failure(e) ? cli::exit_failure : cli::exit_bad_input;
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
        const auto opened = examples::store::open_key_store(*address);
        auto& store = *opened;
        if (o.command == "create")
            create(o, store);
        else if (o.command == "deactivate")
            deactivate(o, store);
        else if (o.command == "update")
            update(o, store);
        else if (o.command == "rotate")
            rotate(o, store);
        else if (o.command == "delete")
            remove(o, store);
        else
            list(o, store);
        return cli::exit_ok;
    } catch (const usage_error& e) {
        return cli::usage_failure(program, e.why);
    } catch (const failure& f) {
        return failed(f.error);
    } catch (const keyhook::error& e) {
        return failed(e);
    } catch (const std::exception& e) {
        std::cerr << "key_admin: " << keyhook::escape_text(e.what()) << '\n';
        return cli::exit_failure;
    }
}
