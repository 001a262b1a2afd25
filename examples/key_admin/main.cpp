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
// Peppers come from KEYHOOK_PEPPERS ("id:base64 ...", the first is current),
// an own key from the variable --own-key-env names: never from the command
// line, which other users of the machine can read. create and rotate print
// one JSON line {"id", "key", "masked", "warnings"}: the only time the key is
// shown; the store receives its digest. update prints {"id", "before",
// "after"}: the key's status before and after (K6). A Revoked key is updated
// only with --reactivate, and --reactivate is refused on any other key: a
// description edit must never bring a revoked key back by accident. Exit 0,
// 1 on an error (the store then unchanged), 2 on misuse.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/creation.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/stored_key.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/lifecycle.hpp"
#include "keyhook/status.hpp"
#include "shared/key_store.hpp"
#include "shared/store_opener.hpp"

namespace {

constexpr const char* usage_text =
    "usage: key_admin --store FILE create|deactivate|update|rotate|delete|list [options]\n"
    "  create     --tenant T --name N --from TIME --until TIME [--description D] [--group G]...\n"
    "             [--shared] [--own-key-env VAR] [--allow CIDR]... [--rate N/SECONDS] [--burst N]\n"
    "             [--credits N] [--refill daily|monthly:D]\n"
    "  deactivate --id ID\n"
    "  update     --id ID [--reactivate] [--name N] [--description D] [--from T] [--until T] [--group G]...\n"
    "             [--allow CIDR]... [--rate N/SECONDS] [--burst N] [--credits N] [--refill ...]\n"
    "  rotate     --id ID [--handover]\n"
    "  delete     --id ID --confirm\n"
    "  list       [--tenant T] [--format json|table]\n"
    "--store FILE: jsonl:PATH or a plain PATH, the JSON-lines key file (see docs/embedding.md)\n"
    "environment: KEYHOOK_PEPPERS=\"id:base64 ...\" (create, rotate)\n";

struct usage_error {
    std::string why;
};

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

options parse_arguments(int argc, char** argv) {
    static const std::map<std::string, bool> known = {
        // name -> takes a value
        {"--store", true},   {"--tenant", true},    {"--name", true},     {"--description", true}, {"--group", true},
        {"--from", true},    {"--until", true},     {"--allow", true},    {"--rate", true},        {"--burst", true},
        {"--credits", true}, {"--refill", true},    {"--id", true},       {"--own-key-env", true}, {"--format", true},
        {"--shared", false}, {"--handover", false}, {"--confirm", false}, {"--reactivate", false}};
    static const std::vector<std::string> repeatable = {"--group", "--allow"};
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0) {
            // Not quoted: a key pasted onto the command line must not be echoed.
            if (!o.command.empty()) throw usage_error{"unexpected argument at position " + std::to_string(i)};
            o.command = arg;
            continue;
        }
        std::optional<std::string> inline_value;
        if (const auto eq = arg.find('='); eq != std::string::npos) {
            inline_value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        }
        const auto it = known.find(arg);
        if (it == known.end()) throw usage_error{"unknown option \"" + arg + "\""};
        if (!it->second) {
            if (inline_value) throw usage_error{arg + ": takes no value"};
            o.flags[arg] = true;
            continue;
        }
        if (!inline_value && i + 1 >= argc) throw usage_error{arg + ": needs a value"};
        auto& list = o.values[arg];
        if (!list.empty() && std::find(repeatable.begin(), repeatable.end(), arg) == repeatable.end())
            throw usage_error{arg + ": given twice"};
        list.push_back(inline_value ? *inline_value : std::string(argv[++i]));
    }
    if (const auto* s = o.one("--store")) o.store = *s;
    if (o.store.empty()) throw usage_error{"--store FILE is required"};
    if (o.command.empty()) throw usage_error{"no command"};
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
        if (*refill == "daily") {
            r.period = keyhook::refill_period::daily;
        } else if (refill->rfind("monthly:", 0) == 0) {
            r.period = keyhook::refill_period::monthly;
            const auto day = count_option("--refill", refill->substr(8));
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

keyhook::crypto::pepper_set peppers_from_environment() {
    const char* text = std::getenv("KEYHOOK_PEPPERS");
    auto set = key_store::parse_peppers(text ? text : "");
    if (!set) throw set.error();
    return *set;
}

void require(const options& o, std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (!o.one(n)) throw usage_error{std::string(o.command) + " needs " + n};
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
    require(o, {"--tenant", "--name", "--from", "--until"});
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
    require(o, {"--id"});
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        auto& e = find_entry(entries, *o.one("--id"));
        e.record = keyhook::deactivate_key(e.record, now());
        return true;
    });
}

void update(const options& o, key_store::key_store& store) {
    require(o, {"--id"});
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
    require(o, {"--id"});
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
    require(o, {"--id"});
    change_store(store, [&](std::vector<key_store::entry>& entries) {
        const auto& e = find_entry(entries, *o.one("--id"));
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
    const auto format = o.one("--format") ? *o.one("--format") : std::string("table");
    if (format != "json" && format != "table") throw usage_error{"--format: expected json or table"};
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

}  // namespace

int main(int argc, char** argv) {
    try {
        const auto o = parse_arguments(argc, argv);
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
        else if (o.command == "list")
            list(o, store);
        else
            throw usage_error{"unknown command (not quoted: it might be a key)"};
        return 0;
    } catch (const usage_error& e) {
        std::cerr << "key_admin: " << e.why << '\n' << usage_text;
        return 2;
    } catch (const failure& f) {
        std::cerr << "key_admin: " << f.error << '\n';
        return 1;
    } catch (const keyhook::error& e) {
        std::cerr << "key_admin: " << e << '\n';
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "key_admin: " << e.what() << '\n';
        return 1;
    }
}
