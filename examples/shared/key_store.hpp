// The key store that key_admin writes and key_gateway reads (rules K11 to
// K16): a JSON-lines file, one stored key a line:
//
//   the record of spec 2.1 (id, name, status, activeFrom, expireAt, ...)
//   + "tenant"     the tenant's name
//   + "storedKey"  kh1.<pepper id>.<digest> (K11), or a legacy sha256.<digest>
//                  a host migrated from another store, rewritten on first use
//   + "policy"     the key's policy (key_policy_json.hpp), {} for none
//   + "usage"      credits and their last refill (the record's lastUsedAt is
//                  the last use; rate states stay in the gateway's memory)
//
// Never a plaintext key: nothing here is handed one. The file is replaced
// whole (a temporary file of a unique name, 0600, fsync, rename), so a
// reader sees the old or the new file, never half of one (K18). Writers take an advisory lock (flock on
// FILE.lock, which a rename does not replace) and re-read the file under it,
// so two programs writing never undo each other's changes; see
// merge_write_backs and jsonl_key_store::update_usage for the gateway's merge. POSIX only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/api_key.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/base64.hpp"
#include "keyhook/crypto/stored_key.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/key_policy.hpp"
#include "keyhook/key_policy_json.hpp"
#include "keyhook/members.hpp"
#include "keyhook/secret.hpp"

namespace key_store {

// Whether a store's error is its platform's: the file (or its lock, or its
// temporary file) could not be opened, locked, read, written, flushed or
// renamed. Such errors have the code errc::host_failure, which keyhook also
// gives a failed host callable (a random source); every other error is the
// store's content or the change refused. The programs exit 3 on the first
// kind and 1 on the second (rule O1).
inline bool is_platform_failure(const keyhook::error& e) noexcept { return e.code == keyhook::errc::host_failure; }

struct entry {
    std::string tenant;
    keyhook::api_key record;
    std::string stored_key;  // the written form, as read (a legacy form stays until rewritten)
    keyhook::key_policy policy;
    keyhook::key_usage usage;  // usage.last_used_at mirrors record.last_used_at
};

// KEYHOOK_PEPPERS: "id:base64 id:base64 ...", the first the current pepper.
// Errors name the position, never the bytes.
inline keyhook::result<keyhook::crypto::pepper_set> parse_peppers(std::string_view text) {
    keyhook::crypto::pepper_set set;
    std::size_t n = 0;
    while (!text.empty()) {
        const auto start = text.find_first_not_of(" \t\n");
        if (start == std::string_view::npos) break;
        text.remove_prefix(start);
        const auto word = text.substr(0, text.find_first_of(" \t\n"));
        text.remove_prefix(word.size());
        const std::string where = "KEYHOOK_PEPPERS[" + std::to_string(n++) + "]";
        const auto colon = word.find(':');
        if (colon == std::string_view::npos)
            return keyhook::error{keyhook::errc::invalid_value, where, "expected id:base64"};
        auto bytes = keyhook::try_base64_decode(word.substr(colon + 1));
        if (!bytes) return keyhook::error{keyhook::errc::invalid_value, where, "the pepper is not standard base64"};
        const keyhook::secret pepper(std::move(*bytes), keyhook::secret_kind::signing_key);
        if (auto added = set.try_add(word.substr(0, colon), pepper); !added)
            return keyhook::error{added.error().code, where, added.error().message};
    }
    if (set.empty()) return keyhook::error{keyhook::errc::missing_member, "KEYHOOK_PEPPERS", "no pepper given"};
    return set;
}

// ---- one line, described once by the member table of `entry`
// (keyhook/members.hpp): the record's members (spread beside the others),
// then tenant, storedKey, policy, usage. The table is closed: a member it does
// not name is refused (a misspelt "policy" would drop a key's limits). JSON
// objects keep their members sorted, so a line's bytes are the same whatever
// the table's order.

// The api_key record's members, by keyhook's reader and writer, beside the
// line's own.
struct api_key_form {
    static constexpr std::string_view names[] = {
        keyhook::member::id,          keyhook::member::user_id,     keyhook::member::name,
        keyhook::member::description, keyhook::member::masked,      keyhook::member::status,
        keyhook::member::type,        keyhook::member::groups,      keyhook::member::created_at,
        keyhook::member::created_by,  keyhook::member::updated_at,  keyhook::member::active_from,
        keyhook::member::expire_at,   keyhook::member::last_used_at};
    template <class Json>
    static std::optional<keyhook::error> read_in(const Json& j, const std::string& path, keyhook::api_key& out) {
        auto record = keyhook::try_api_key_from_json<Json>(j, path);
        if (!record) return record.error();
        out = std::move(*record);
        return std::nullopt;
    }
    template <class Json>
    static void write_in(Json& j, const keyhook::api_key& in) {
        Json record = in;
        for (auto it = record.begin(); it != record.end(); ++it) j[it.key()] = std::move(it.value());
    }
};

// A non-empty string (the tenant).
struct name_form : keyhook::text_form {
    static constexpr std::string_view expected = "a non-empty string";
    static std::optional<keyhook::error> from_text(const std::string& text, std::string& out) {
        if (text.empty()) return keyhook::error{keyhook::errc::invalid_value, {}, "expected a non-empty string"};
        out = text;
        return std::nullopt;
    }
};

// storedKey (K11): a stored digest keyhook::crypto can read, kept as written
// (a legacy form stays until rewritten). The digest is never quoted.
struct stored_key_form : name_form {
    static std::optional<keyhook::error> from_text(const std::string& text, std::string& out) {
        if (auto e = name_form::from_text(text, out)) return e;
        if (auto digest = keyhook::crypto::try_parse_stored_digest(text); !digest) return digest.error();
        return std::nullopt;
    }
};

// The key's policy (K12 to K14) by keyhook's reader, then what no single
// member says (key_policy_problems), under the same path.
struct policy_form {
    static constexpr keyhook::form_kind kind = keyhook::form_kind::value;
    static constexpr std::string_view expected = "an object";
    template <class Json>
    static std::optional<keyhook::error> read(const Json& v, const std::string& path, keyhook::key_policy& out) {
        auto policy = keyhook::try_key_policy_from_json<Json>(v, path);
        if (!policy) return policy.error();
        const auto problems = keyhook::key_policy_problems(*policy);
        if (!problems.empty()) {
            auto first = problems.front();
            first.path = path + "." + first.path;
            return first;
        }
        out = std::move(*policy);
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const keyhook::key_policy& in) {
        slot = in;
    }
};

// The usage the file keeps: credits and their last refill. The record's
// lastUsedAt says the last use once; rate states are the gateway's, in memory.
struct usage_form {
    static constexpr keyhook::form_kind kind = keyhook::form_kind::value;
    static constexpr std::string_view expected = "an object";
    template <class Json>
    static std::optional<keyhook::error> read(const Json& v, const std::string& path, keyhook::key_usage& out) {
        auto usage = keyhook::try_key_usage_from_json<Json>(v, path);
        if (!usage) return usage.error();
        if (usage->rate.tat || usage->last_used_at)
            return keyhook::error{keyhook::errc::invalid_value, path,
                                  "rateTat and lastUsedAt are not kept here (see the record's lastUsedAt)"};
        out = *usage;
        return std::nullopt;
    }
    template <class Json>
    static void write(Json& slot, const keyhook::key_usage& in) {
        slot = in;
        slot.erase("lastUsedAt");
        slot.erase("rateTat");
    }
};

}  // namespace key_store

// A missing or null policy is none; a missing or null usage is the policy's
// fresh one, derived by parse_line (it depends on the members read before).
template <>
struct keyhook::members_of<key_store::entry> {
    using e = key_store::entry;
    static constexpr bool closed = true;
    static constexpr auto rows =
        make_rows(spread<key_store::api_key_form>(&e::record),
                  row<key_store::name_form>("tenant", &e::tenant, presence::required),
                  row<key_store::stored_key_form>("storedKey", &e::stored_key, presence::required),
                  row<key_store::policy_form>("policy", &e::policy, presence::optional),
                  row<key_store::usage_form>("usage", &e::usage, presence::optional));
};
static_assert(keyhook::members_complete<key_store::entry>());

namespace key_store {

// One line's JSON, as the table writes it.
inline nlohmann::json to_line(const entry& e) {
    nlohmann::json j;
    keyhook::write_record(j, e);
    return j;
}

// Reads one entry from its JSON object. `where` starts every error's path,
// followed by the member's JSON path ("(line)" for the object itself).
template <class Json>
keyhook::result<entry> read_entry(const Json& doc, const std::string& where) {
    const auto fail = [&where](const keyhook::error& e) {
        return keyhook::error{e.code, where + ": " + (e.path.empty() ? std::string("(line)") : e.path), e.message};
    };
    auto e = keyhook::try_read_record<entry>(doc);
    if (!e) return fail(e.error());
    if (const auto u = doc.find("usage"); u == doc.end() || u->is_null())
        e->usage = keyhook::key_usage::fresh(e->policy, e->record.created_at.value_or(e->record.active_from));
    e->usage.last_used_at = e->record.last_used_at;
    return e;
}

// The limits every stored entry is read under (one line, one database row).
inline keyhook::json_limits entry_limits() {
    return keyhook::json_limits{std::size_t{1} << 20, 8, 4, std::size_t{1} << 20};
}

// Reads one line. `where` ("FILE:LINE") starts every error's path, followed
// by the member's JSON path ("(line)" for the line itself).
inline keyhook::result<entry> parse_line(std::string_view line, const std::string& where) {
    auto doc = keyhook::try_parse_json(line, entry_limits());
    if (!doc) {
        const auto& e = doc.error();
        return keyhook::error{e.code, where + ": " + (e.path.empty() ? std::string("(line)") : e.path), e.message};
    }
    return read_entry(*doc, where);
}

// The whole file. Blank lines are skipped; two lines with one id, or one
// stored key, are refused at the second. With `lines`, each entry's line is
// kept there too, byte for byte as read (without its newline).
inline keyhook::result<std::vector<entry>> parse_store(std::string_view text, const std::string& file,
                                                       std::vector<std::string>* lines = nullptr) {
    std::vector<entry> out;
    if (lines) lines->clear();
    std::set<std::string, std::less<>> ids, digests;
    std::size_t line_no = 0;
    while (!text.empty()) {
        ++line_no;
        const auto end = std::min(text.find('\n'), text.size());
        const auto line = text.substr(0, end);
        text.remove_prefix(std::min(end + 1, text.size()));
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        const std::string where = file + ":" + std::to_string(line_no);
        auto e = parse_line(line, where);
        if (!e) return e.error();
        if (!ids.insert(e->record.id.str()).second)
            return keyhook::error{keyhook::errc::invalid_value, where + ": id", "another line has this id"};
        if (!digests.insert(e->stored_key).second)
            return keyhook::error{keyhook::errc::invalid_value, where + ": storedKey",
                                  "another line has this stored key"};
        out.push_back(std::move(*e));
        if (lines) lines->emplace_back(line);
    }
    return out;
}

inline std::string format_store(const std::vector<entry>& entries) {
    std::string out;
    for (const auto& e : entries) out += to_line(e).dump() + "\n";
    return out;
}

// K18: one stored key is one plaintext key. Whether `key` (a new or rotated
// key's plaintext, at hand only now) is already stored under any scheme: it
// is verified against every stored digest, under the pepper each names or as
// a legacy SHA-256 digest, so the same key stored under an older pepper (a
// digest string that differs after a pepper rotation) is found too. The
// refusal names no tenant and no id; a digest under a pepper the set lacks
// cannot be checked, and refuses as well (naming the pepper id, as K11 does).
inline keyhook::result<void> check_key_is_new(const std::vector<entry>& entries,
                                              const keyhook::crypto::pepper_set& peppers, const keyhook::secret& key) {
    for (const auto& e : entries) {
        const auto digest = keyhook::crypto::try_parse_stored_digest(e.stored_key);
        if (!digest) return digest.error();  // the reader checked it already
        const auto match = keyhook::crypto::try_verify_stored_key(peppers, key.reveal(), *digest);
        if (!match)
            return keyhook::error{match.error().code, "key",
                                  "cannot check that the key is not stored already: " + match.error().message};
        if (match->matched)
            return keyhook::error{keyhook::errc::invalid_value, "key",
                                  "this key is already stored (one stored key is one key): the store is unchanged"};
    }
    return {};
}

// What key_gateway writes back for one key (K14's credits, K15's lastUsedAt,
// K11's rehash).
struct write_back {
    keyhook::key_id id;
    keyhook::credit_state base;     // the credits the gateway read from the store
    keyhook::credit_state credits;  // its credits now
    std::optional<keyhook::timestamp> last_used_at;
    std::optional<std::string> rehash_from;  // the stored key the gateway matched
    std::optional<std::string> rehash_to;    // its digest under the current pepper
    // The credits spent since `base` (credits_spent): what a database
    // subtracts, so that several gateways' spending adds up.
    std::uint64_t spent = 0;
};

// K14: the credits spent from `base` (as read) to `now` (as held): the
// difference when no refill came in between, else what was spent since the
// refill (its amount less what is left; the refill set, not added).
inline std::uint64_t credits_spent(const keyhook::key_policy& policy, const keyhook::credit_state& base,
                                   const keyhook::credit_state& now) {
    if (now.last_refill == base.last_refill)
        return base.remaining >= now.remaining ? base.remaining - now.remaining : 0;
    const std::uint64_t amount = policy.refill ? policy.refill->amount : policy.initial_credits;
    return amount >= now.remaining ? amount - now.remaining : 0;
}

// The gateway's merge into entries just read under the lock. Only usage and
// the stored key change, so a deactivation, an update or a deletion made in
// between stays as key_admin wrote it (a deleted key is not written back).
// Credits are written only where the store still holds `base`: a value
// key_admin set in between wins. lastUsedAt never moves backwards. A rehash
// replaces the stored key only where it still is `rehash_from`.
// merge_write_backs returns the positions (in `entries`, ascending, each
// once) of the entries it changed; it adds, removes and reorders none, as
// jsonl_key_store::update_usage requires. apply_write_backs returns whether
// anything changed.
// Linear in the entries plus the changes (one id table, not a search per change).
inline std::vector<std::size_t> merge_write_backs(std::vector<entry>& entries, const std::vector<write_back>& changes) {
    std::vector<std::size_t> changed;
    std::unordered_map<std::string_view, std::size_t> by_id;
    if (!changes.empty()) {
        by_id.reserve(entries.size());
        for (std::size_t i = 0; i < entries.size(); ++i) by_id.emplace(entries[i].record.id.str(), i);
    }
    for (const auto& w : changes) {
        const auto found = by_id.find(w.id.str());
        if (found == by_id.end()) continue;
        entry* const it = &entries[found->second];
        bool moved = false;
        if (it->usage.credits == w.base && it->usage.credits != w.credits) {
            it->usage.credits = w.credits;
            moved = true;
        }
        if (w.last_used_at && (!it->record.last_used_at || *it->record.last_used_at < *w.last_used_at)) {
            it->record.last_used_at = it->usage.last_used_at = w.last_used_at;
            moved = true;
        }
        if (w.rehash_from && w.rehash_to && it->stored_key == *w.rehash_from) {
            it->stored_key = *w.rehash_to;
            moved = true;
        }
        if (moved) changed.push_back(found->second);
    }
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    return changed;
}

inline bool apply_write_backs(std::vector<entry>& entries, const std::vector<write_back>& changes) {
    return !merge_write_backs(entries, changes).empty();
}

// One version of a store, as a reader or writer saw it: equal values, the
// same version. A file's is its device, inode, size and modification time
// (a writer's rename gives a new inode); a database's is a counter that
// every change bumps in the transaction that makes it (exists is then
// always true, the file's members zero).
struct store_version {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    long long mtime_ns = 0;
    std::int64_t counter = 0;
    friend bool operator==(const store_version& a, const store_version& b) {
        return a.exists == b.exists && a.dev == b.dev && a.ino == b.ino && a.size == b.size &&
               a.mtime_ns == b.mtime_ns && a.counter == b.counter;
    }
    friend bool operator!=(const store_version& a, const store_version& b) { return !(a == b); }
    // A database's version `n`.
    static store_version database(std::int64_t n) {
        store_version v;
        v.exists = true;
        v.counter = n;
        return v;
    }
};

inline store_version stamp_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {};
    return {true,
            st.st_dev,
            st.st_ino,
            st.st_size,
            static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec,
            0};
}

// What a write-back left in the store for one change (write_usage): whether
// the key is still there, the credits the writer now counts as written (its
// new base), the key's lastUsedAt and its stored key as the store holds them.
struct written_usage {
    bool found = false;
    keyhook::credit_state credits;
    std::optional<keyhook::timestamp> last_used_at;
    std::string stored_key;
};

// The key store as key_admin and key_gateway use it, whatever keeps it: the
// JSON-lines file below (jsonl_key_store, one machine) or a PostgreSQL
// database (postgres_key_store.hpp, many gateways), both opened by
// examples/shared/store_opener.hpp. A version of the store, as a reader or
// writer saw it, is a store_version: equal versions, the same content.
//
// One call a gateway asks a store to decide (key_store::decide_limits):
// the key, the policy the gateway holds for it (configuration, read with the
// key), and the call's cost.
struct limits_call {
    std::string id;
    keyhook::key_policy policy;
    std::uint64_t cost = 1;
};

// The store's decision on one call: whether the key is still there, the
// decision, and the store's clock when it was made (what Retry-After and
// RateLimit-Reset count from).
struct limits_outcome {
    bool found = false;
    keyhook::limits_decision decision;
    keyhook::timestamp at{};
};

// Writers: update and update_usage run a change over the entries under the
// store's lock (one writer at a time, every writer's change applied to what
// the last one left), try_update and try_update_usage the same without
// waiting for the lock. Readers: read (consistent, under the lock),
// read_snapshot (without it: one writer's version, never half of one) and
// current_stamp (has the store changed? For a database, also the heartbeat
// that says it is reachable). What each promises is said at
// jsonl_key_store's functions; the database keeps the same promises with a
// transaction in place of the file's lock (postgres_key_store.hpp).
//
// A store many gateways share (shared() true: the database) also announces
// its changes (wait_for_change) and takes a gateway's write-back row by row
// (write_usage: credits spent are subtracted, so the spending of several
// gateways adds up); a gateway writes the file with update_usage instead.
class key_store {
public:
    virtual ~key_store() = default;

    // change(entries, version_read): true to write the entries back.
    using change_fn = std::function<bool(std::vector<entry>&, const store_version&)>;
    // change(entries, version_read): the positions of the entries it changed (see update_usage).
    using usage_change_fn = std::function<std::vector<std::size_t>(std::vector<entry>&, const store_version&)>;
    // run(n, job): calls job(0) to job(n - 1), each exactly once, and returns when all have returned.
    using runner_fn = std::function<void(std::size_t, const std::function<void(std::size_t)>&)>;
    struct snapshot {
        std::vector<entry> entries;
        store_version stamp;
    };

    // Where the store is, for messages: a file's path (not a secret), or a
    // database's address as store_opener.hpp shows it (never its password).
    [[nodiscard]] virtual const std::string& path() const noexcept = 0;
    virtual void keep_last_version(bool keep) = 0;
    virtual keyhook::result<store_version> update(const change_fn& change) = 0;
    virtual keyhook::result<std::optional<store_version>> try_update(const change_fn& change) = 0;
    keyhook::result<store_version> update_usage(const usage_change_fn& change) {
        return update_usage(change, in_order);
    }
    keyhook::result<std::optional<store_version>> try_update_usage(const usage_change_fn& change) {
        return try_update_usage(change, in_order);
    }
    virtual keyhook::result<store_version> update_usage(const usage_change_fn& change, const runner_fn& run) = 0;
    virtual keyhook::result<std::optional<store_version>> try_update_usage(const usage_change_fn& change,
                                                                           const runner_fn& run) = 0;
    virtual keyhook::result<store_version> current_stamp() = 0;
    virtual keyhook::result<snapshot> read_snapshot() = 0;

    // Whether many gateways share the store (a database; see above).
    [[nodiscard]] virtual bool shared() const noexcept { return false; }

    // Waits at most `max` for the store to announce a change; true when it
    // may have changed (an announcement came, or the connection broke), so
    // the caller reads current_stamp now. An announcement is only ever a
    // reason to read: it carries no content (K17). A store that announces
    // nothing returns false at once.
    virtual bool wait_for_change(std::chrono::milliseconds max) {
        (void)max;
        return false;
    }

    // A gateway's write-back (K14's credits, K15's lastUsedAt, K11's
    // rehash), as merge_write_backs merges it; one result per change, in
    // order. This default runs update_usage (the file: credits written only
    // where the store still holds the base read); a database overrides it.
    virtual keyhook::result<std::vector<written_usage>> write_usage(const std::vector<write_back>& changes) {
        std::vector<written_usage> out(changes.size());
        auto r = update_usage([&](std::vector<entry>& entries, const store_version&) {
            auto changed = merge_write_backs(entries, changes);
            std::unordered_map<std::string_view, const entry*> by_id;
            by_id.reserve(entries.size());
            for (const auto& e : entries) by_id.emplace(e.record.id.str(), &e);
            for (std::size_t i = 0; i < changes.size(); ++i) {
                const auto found = by_id.find(changes[i].id.str());
                if (found == by_id.end()) continue;
                const auto& e = *found->second;
                out[i] = written_usage{true, e.usage.credits, e.record.last_used_at, e.stored_key};
            }
            return changed;
        });
        if (!r) return r.error();
        return out;
    }

    // K17's shared limits: the store decides, with its own clock, the calls
    // of keys with a rate limit or credits, for every gateway at once, each
    // call in the order given (K15's last two checks, keyhook::check_limits,
    // on the usage the store holds, which an allowed call moves). Whatever is
    // returned is durable: a gateway answers from it. A store that keeps no
    // shared usage (the file) refuses, and a gateway counts limits itself.
    [[nodiscard]] virtual bool decides_limits() const noexcept { return false; }
    virtual keyhook::result<std::vector<limits_outcome>> decide_limits(const std::vector<limits_call>& calls) {
        (void)calls;
        return keyhook::error{keyhook::errc::invalid_value, path(),
                              "this store keeps no shared limits (a PostgreSQL store does)"};
    }

    // A consistent read (under the lock, so never between a writer's steps).
    keyhook::result<std::vector<entry>> read() {
        std::vector<entry> out;
        auto r = update([&out](std::vector<entry>& e, const store_version&) {
            out = e;
            return false;
        });
        if (!r) return r.error();
        return out;
    }

    // The default runner: on the calling thread, in order.
    static void in_order(std::size_t n, const std::function<void(std::size_t)>& job) {
        for (std::size_t k = 0; k < n; ++k) job(k);
    }
};

// The JSON-lines key store at `path`, locked through `path`.lock.
class jsonl_key_store final : public key_store {
public:
    explicit jsonl_key_store(std::string path) : path_(std::move(path)) {}
    [[nodiscard]] const std::string& path() const noexcept override { return path_; }
    using key_store::try_update_usage;
    using key_store::update_usage;

    // Keep the entries of the version this object last wrote (or read under
    // the lock and left unchanged, or read with read_snapshot), and the text
    // of each entry's line: the next update finds the file with the same
    // stamp (device, inode, size, mtime to the nanosecond) and skips reading
    // and parsing it again, and update_usage writes the unchanged lines as
    // they are. For a long-lived writer (key_gateway's
    // write-back); any other writer's rename gives a new stamp.
    void keep_last_version(bool keep) override {
        keep_ = keep;
        if (!keep) cache_.reset();
    }

    // Under the lock: reads the entries (a missing file is empty), calls
    // change(entries, stamp_read), and when it returns true writes them back.
    // Returns the stamp of the file as it is when the lock is released.
    keyhook::result<store_version> update(const change_fn& change) override {
        lock held(path_ + ".lock", true);
        if (!held.ok()) return io_error(path_ + ".lock", "cannot lock");
        return locked_update(change);
    }

    // As update, but never waits for the lock: when another writer holds it,
    // nothing is read or written and the answer is an empty optional (the
    // caller tries again later). key_gateway's write-back runs this way, so
    // a writer that keeps the lock delays the write, never the gateway.
    keyhook::result<std::optional<store_version>> try_update(const change_fn& change) override {
        lock held(path_ + ".lock", false);
        if (held.busy()) return std::optional<store_version>{};
        if (!held.ok()) return io_error(path_ + ".lock", "cannot lock");
        auto r = locked_update(change);
        if (!r) return r.error();
        return std::optional<store_version>{*r};
    }

    // For key_gateway's write-back (K14's credits, K15's lastUsedAt, K11's
    // rehash): as update and try_update, but change(entries, stamp_read)
    // returns the positions of the entries it changed (as merge_write_backs
    // does; none changed: nothing is written; an entry changed but not named
    // is written as its old line), and changes no entry's id, adds none,
    // removes none and reorders none. The file is still replaced whole
    // (a unique temporary file, fsync, rename), but its cost is in the entries
    // changed, not in the store: with keep_last_version, the lines of the
    // other entries are written byte for byte as they were read or last
    // written, and only the changed entries are formatted and checked.
    //
    // K18 still holds for what is written, without reading the whole store
    // back: (1) every unchanged line is text the reader accepted (it was read
    // from the file, or written after passing these checks) and is unchanged;
    // (2) every changed line is read back with the reader's own parse_line, at
    // its line number; (3) the store-wide checks (no two lines with one id,
    // none with one stored key; one key under every scheme, check_key_is_new)
    // compare ids and stored keys only, and a changed line's read-back id and
    // stored key are compared with what its line held: ids must be equal (or
    // the write is refused), so the set of ids is the set that was accepted.
    // A stored key that moved (a rehash: the same key's digest under the
    // current pepper, so still one key under every scheme) could equal
    // another line's, so then the whole text is read back with parse_store,
    // as update does. Without keep_last_version, or when the file changed
    // since, it is read (and parsed) first, as update does.
    //
    // `run` formats and checks the changed lines: run(n, job) calls job(0)
    // to job(n - 1), each exactly once, on any threads, and returns when all
    // have returned (the jobs share nothing but what they read). By default,
    // on the calling thread, in order; key_gateway runs them at a lower CPU
    // priority.
    keyhook::result<store_version> update_usage(const usage_change_fn& change, const runner_fn& run) override {
        lock held(path_ + ".lock", true);
        if (!held.ok()) return io_error(path_ + ".lock", "cannot lock");
        return locked_update_usage(change, run);
    }
    keyhook::result<std::optional<store_version>> try_update_usage(const usage_change_fn& change,
                                                                   const runner_fn& run) override {
        lock held(path_ + ".lock", false);
        if (held.busy()) return std::optional<store_version>{};
        if (!held.ok()) return io_error(path_ + ".lock", "cannot lock");
        auto r = locked_update_usage(change, run);
        if (!r) return r.error();
        return std::optional<store_version>{*r};
    }

    // The file as it is, read without the lock (a writer replaces it whole
    // by a rename, so this is one writer's version, never half of one), and
    // the stamp of the very file read. Unlike update, a missing file is an
    // error: a reader that serves the store needs one.
    keyhook::result<store_version> current_stamp() override {
        const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return io_error(path_, "cannot open");
        const auto stamp = stamp_of_fd(fd);
        ::close(fd);
        if (!stamp.exists) return io_error(path_, "cannot stat");
        return stamp;
    }
    // With keep_last_version, the version read is kept as update's is (the
    // next update_usage of an unchanged file parses nothing again), when the
    // file's stamp is the same after the read as before it.
    keyhook::result<snapshot> read_snapshot() override {
        const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return io_error(path_, "cannot open");
        snapshot out;
        out.stamp = stamp_of_fd(fd);
        auto text = read_all(fd);
        const auto after = stamp_of_fd(fd);
        ::close(fd);
        if (!text) return text.error();
        std::vector<std::string> texts;
        auto entries = parse_store(*text, path_, keep_ ? &texts : nullptr);
        if (!entries) return entries.error();
        out.entries = std::move(*entries);
        if (keep_ && out.stamp.exists && after == out.stamp) {
            auto lines = keep_lines(out.entries, std::move(texts));
            cache_ = cached{out.stamp, version{out.entries, std::move(lines)}};
        }
        return out;
    }

private:
    // One entry's line as the file holds it (read, or written by this
    // object), without its newline, and the id and stored key it holds.
    struct kept_line {
        std::string text, id, stored_key;
    };
    // One version of the file: lines[i] is entries[i]'s.
    struct version {
        std::vector<entry> entries;
        std::vector<kept_line> lines;
    };

    static std::vector<kept_line> keep_lines(const std::vector<entry>& entries, std::vector<std::string> texts) {
        std::vector<kept_line> out;
        out.reserve(entries.size());
        for (std::size_t i = 0; i < entries.size(); ++i)
            out.push_back({std::move(texts[i]), entries[i].record.id.str(), entries[i].stored_key});
        return out;
    }

    // Under the lock: the version `before` names, from the cache or read.
    keyhook::result<version> load(const store_version& before) {
        keyhook::result<version> v = version{};
        if (cache_ && before.exists && cache_->stamp == before)
            *v = std::move(cache_->kept);
        else
            v = read_unlocked();
        cache_.reset();
        return v;
    }

    keyhook::result<store_version> locked_update(const change_fn& change) {
        const auto before = stamp_of(path_);
        auto v = load(before);
        if (!v) return v.error();
        if (!change(v->entries, before)) {
            if (keep_ && before.exists) cache_ = cached{before, std::move(*v)};
            return before;
        }
        std::vector<std::string> texts;
        texts.reserve(v->entries.size());
        std::string text;
        for (const auto& e : v->entries) {
            texts.push_back(to_line(e).dump());
            text += texts.back();
            text += '\n';
        }
        if (auto valid = check_before_write(text); !valid) return valid.error();
        if (auto written = write_unlocked(text); !written) return written.error();
        const auto after = stamp_of(path_);
        if (keep_) {
            auto lines = keep_lines(v->entries, std::move(texts));
            cache_ = cached{after, version{std::move(v->entries), std::move(lines)}};
        }
        return after;
    }

    keyhook::result<store_version> locked_update_usage(const usage_change_fn& change, const runner_fn& run) {
        const auto before = stamp_of(path_);
        auto v = load(before);
        if (!v) return v.error();
        const auto count = v->entries.size();
        const std::vector<std::size_t> changed = change(v->entries, before);
        if (changed.empty()) {
            if (keep_ && before.exists) cache_ = cached{before, std::move(*v)};
            return before;
        }
        const auto refused = [this](const std::string& where, const std::string& why) {
            return keyhook::error{keyhook::errc::invalid_value, path_,
                                  "write refused, the store is unchanged: " + where + ": " + why};
        };
        if (v->entries.size() != count || v->lines.size() != count)
            return refused("(store)", "a usage write added or removed a key");
        for (std::size_t k = 0; k < changed.size(); ++k)
            if (changed[k] >= count || (k > 0 && changed[k] <= changed[k - 1]))
                return refused("(store)", "a usage write named a position twice or out of range");
        // K18, per changed line: the reader's checks, and the same id (see
        // update_usage). Each job reads its entry and line, writes its slots.
        std::vector<std::string> fresh(changed.size());
        std::vector<std::optional<keyhook::error>> problem(changed.size());
        std::vector<char> moved(changed.size(), 0);
        run(changed.size(), std::function<void(std::size_t)>([&](std::size_t k) {
                const auto i = changed[k];
                const std::string where = "line:" + std::to_string(i + 1);
                try {
                    fresh[k] = to_line(v->entries[i]).dump();
                } catch (const std::exception& e) {
                    problem[k] = keyhook::error{keyhook::errc::invalid_value, where, e.what()};
                    return;
                }
                const auto back = parse_line(fresh[k], where);
                if (!back)
                    problem[k] = back.error();
                else if (back->record.id.str() != v->lines[i].id)
                    problem[k] =
                        keyhook::error{keyhook::errc::invalid_value, where + ": id", "a usage write changed the id"};
                else
                    moved[k] = back->stored_key != v->lines[i].stored_key;
            }));
        bool key_moved = false;
        for (std::size_t k = 0; k < changed.size(); ++k) {
            if (problem[k])
                return keyhook::error{
                    problem[k]->code, path_,
                    "write refused, the store is unchanged: " + problem[k]->path + ": " + problem[k]->message};
            key_moved = key_moved || moved[k];
        }
        std::size_t size = 0;
        for (const auto& l : v->lines) size += l.text.size() + 1;
        for (std::size_t k = 0; k < changed.size(); ++k) size += fresh[k].size() - v->lines[changed[k]].text.size();
        std::string text;
        text.reserve(size);
        for (std::size_t i = 0, k = 0; i < count; ++i) {
            const bool is_changed = k < changed.size() && changed[k] == i;
            text += is_changed ? fresh[k++] : v->lines[i].text;
            text += '\n';
        }
        // A stored key moved: the store-wide checks over the whole text.
        if (key_moved)
            if (auto valid = check_before_write(text); !valid) return valid.error();
        if (auto written = write_unlocked(text); !written) return written.error();
        const auto after = stamp_of(path_);
        if (keep_) {
            for (std::size_t k = 0; k < changed.size(); ++k) {
                auto& line = v->lines[changed[k]];
                line.text = std::move(fresh[k]);
                line.stored_key = v->entries[changed[k]].stored_key;
            }
            cache_ = cached{after, std::move(*v)};
        }
        return after;
    }

    static store_version stamp_of_fd(int fd) {
        struct stat st {};
        if (::fstat(fd, &st) != 0) return {};
        return {true,
                st.st_dev,
                st.st_ino,
                st.st_size,
                static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec,
                0};
    }

    class lock {
    public:
        lock(const std::string& path, bool wait)
            : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) {
            if (fd_ >= 0 && ::flock(fd_, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
                busy_ = errno == EWOULDBLOCK;
                ::close(fd_);
                fd_ = -1;
            }
        }
        ~lock() {
            if (fd_ >= 0) ::close(fd_);  // closing releases the lock
        }
        lock(const lock&) = delete;
        lock& operator=(const lock&) = delete;
        [[nodiscard]] bool ok() const noexcept { return fd_ >= 0; }
        [[nodiscard]] bool busy() const noexcept { return busy_; }

    private:
        int fd_;
        bool busy_ = false;
    };

    // The file system failed (see is_platform_failure).
    static keyhook::error io_error(const std::string& path, const char* what) {
        return keyhook::error{keyhook::errc::host_failure, path, std::string(what) + ": " + std::strerror(errno)};
    }

    keyhook::result<version> read_unlocked() {
        const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT) return version{};
            return io_error(path_, "cannot open");
        }
        auto text = read_all(fd);
        ::close(fd);
        if (!text) return text.error();
        std::vector<std::string> texts;
        auto entries = parse_store(*text, path_, &texts);
        if (!entries) return entries.error();
        auto lines = keep_lines(*entries, std::move(texts));
        return version{std::move(*entries), std::move(lines)};
    }

    keyhook::result<std::string> read_all(int fd) const {
        std::string text;
        char buf[65536];
        for (;;) {
            const auto n = ::read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return io_error(path_, "cannot read");
            if (n == 0) break;
            text.append(buf, static_cast<std::size_t>(n));
        }
        return text;
    }

    // K18: what is about to replace the file is read back first with the
    // reader's own checks (every line valid, no two with one id or one stored
    // key), so a write never leaves a store that nothing can read. Refused:
    // the file is left as it was; the reason names the line, never another
    // line's tenant or id.
    keyhook::result<void> check_before_write(const std::string& text) const {
        const auto read_back = parse_store(text, "line");
        if (read_back) return {};
        return keyhook::error{
            read_back.error().code, path_,
            "write refused, the store is unchanged: " + read_back.error().path + ": " + read_back.error().message};
    }

    keyhook::result<void> write_unlocked(const std::string& text) {
        // K18: a temporary name of its own beside the store (mkstemp: created
        // 0600 with O_EXCL, so never through a symlink planted in the
        // directory, and a file a crash left behind never blocks a write).
        std::string temp = path_ + ".tmp.XXXXXX";
        const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
        if (fd < 0) return io_error(path_ + ".tmp.*", "cannot create");
        std::size_t done = 0;
        while (done < text.size()) {
            const auto n = ::write(fd, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                ::close(fd);
                ::unlink(temp.c_str());
                return io_error(temp, "cannot write");
            }
            done += static_cast<std::size_t>(n);
        }
        if (::fsync(fd) != 0 || ::close(fd) != 0) {
            ::unlink(temp.c_str());
            return io_error(temp, "cannot flush");
        }
        stop_point_for_tests();
        if (::rename(temp.c_str(), path_.c_str()) != 0) {
            ::unlink(temp.c_str());
            return io_error(path_, "cannot replace");
        }
        // The rename itself is durable once the directory is flushed.
        const auto slash = path_.rfind('/');
        const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path_.substr(0, slash));
        if (const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
            ::fsync(d);
            ::close(d);
        }
        return {};
    }

    // KEY_STORE_TEST_STOP_BEFORE_RENAME=1 (tests only): stop this process
    // (SIGSTOP) with the new file written and flushed but not yet renamed,
    // so a test can kill it at exactly that point, deterministically.
    static void stop_point_for_tests() {
        const char* stop = std::getenv("KEY_STORE_TEST_STOP_BEFORE_RENAME");
        if (stop && std::string_view(stop) == "1") ::raise(SIGSTOP);
    }

    struct cached {
        store_version stamp;
        version kept;
    };

    std::string path_;
    bool keep_ = false;
    std::optional<cached> cache_;
};

}  // namespace key_store
