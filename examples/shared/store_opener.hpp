// The one reader of every program's --store (rules B6, K18): which backend
// an address names, what may be printed of it, and opening it.
//
// The forms, the same in every program:
//   sqlite:PATH               a SQLite file (webhook_deliver, webhook_receiver)
//   postgresql://...          a PostgreSQL database, libpq's URI
//   postgres://...            (webhook_deliver, webhook_receiver)
//   jsonl:PATH                a JSON-lines key file (key_admin, key_gateway)
//   PATH                      a plain path keeps the meaning it always had:
//                             SQLite for deliveries and replay ids, JSON
//                             lines for keys
// postgresql:// serves every program: deliveries, replay ids, and keys (one
// key store for many gateways, postgres_key_store.hpp).
// Any other "scheme:" before the first slash (mysql://x, file:x) is refused,
// naming the accepted forms, and so is a form the program cannot use
// (jsonl: for deliveries, sqlite: for keys). Write a plain path whose first
// part holds a colon as ./PATH or sqlite:PATH.
//
// Printing: an address may hold a password (postgresql://user:PASSWORD@...).
// No message, log line or health answer prints the address as given: each
// prints store_address::shown, which keeps the scheme, the user, the hosts,
// the port and the database, and leaves out the password and every URI
// parameter's value but host, hostaddr, port, dbname, user, sslmode and
// connect_timeout. A password
// belongs in PGPASSFILE or PGPASSWORD, not in the address (other users of
// the machine may read a command line).
//
// Opening: each backend is compiled in when CMake found its library
// (KEYHOOK_EXAMPLES_HAVE_SQLITE, KEYHOOK_EXAMPLES_HAVE_LIBPQ); a build
// without it throws store_not_built (a usage error, exit 2). A store that
// cannot be opened throws std::runtime_error whose text starts with the
// address as shown.
#pragma once

#include <sys/stat.h>

#include <cctype>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "shared/delivery_store.hpp"
#include "shared/key_store.hpp"
#include "shared/replay_ids.hpp"
#if KEYHOOK_EXAMPLES_HAVE_SQLITE
#include "shared/sqlite_store.hpp"
#endif
#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
#include "shared/postgres_key_store.hpp"
#include "shared/postgres_store.hpp"
#endif

namespace examples::store {

enum class backend { sqlite, postgresql, jsonl };

// What a program keeps in its store.
enum class store_use {
    deliveries,  // webhook_deliver (delivery_store)
    replay_ids,  // webhook_receiver (replay_id_store)
    keys,        // key_admin, key_gateway (key_store::key_store)
};

struct store_address {
    backend kind = backend::sqlite;
    // The path (sqlite, jsonl) or the whole URI (postgresql), as libpq and
    // the file functions take it. Never printed: print `shown`.
    std::string target;
    // What messages, logs and health answers print (see above).
    std::string shown;
    // The address holds a password (postgresql://user:PASSWORD@...).
    bool has_password = false;
};

// Whether a file store's file is there (a database always counts as there:
// its tables are made on first use, and an empty one is a real empty store).
inline bool store_file_exists(const store_address& a) {
    if (a.kind == backend::postgresql) return true;
    struct stat st {};
    return ::stat(a.target.c_str(), &st) == 0;
}

// A --store this build cannot open: it was made without the library.
struct store_not_built : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The accepted forms for `use`, for usage errors and --help.
inline std::string accepted_store_forms(store_use use) {
    if (use == store_use::keys)
        return "jsonl:PATH or a plain PATH (a JSON-lines key file), or postgresql://... (also postgres://...)";
    return "sqlite:PATH or postgresql://... (also postgres://...), or a plain PATH (SQLite)";
}

namespace opener_detail {

// The scheme of `text` when it starts with one ("mysql" of "mysql://x"):
// letters, digits, + - . after a first letter, then a colon, before any slash.
inline std::optional<std::string_view> scheme_of(std::string_view text) {
    if (text.empty() || !std::isalpha(static_cast<unsigned char>(text[0]))) return std::nullopt;
    for (std::size_t i = 1; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == ':') return text.substr(0, i);
        if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return std::nullopt;
    }
    return std::nullopt;
}

// True when `text` starts like libpq's keyword form (`host=db password=x`):
// a name, optional spaces, '='. Such a string may hold a password, and read
// as a plain path it would silently open a new file of that name.
inline bool looks_like_keyword_string(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size() && text[i] == ' ') ++i;
    const auto name_start = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
    if (i == name_start) return false;
    while (i < text.size() && text[i] == ' ') ++i;
    return i < text.size() && text[i] == '=';
}

inline std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Printable ASCII, every other byte as \xHH: a shown address never carries
// a control or bidi character to a terminal or a log (P1).
inline std::string printable(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += ch;
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

}  // namespace opener_detail

// The printable form of a postgresql:// or postgres:// URI: the scheme, the
// user (without its password), the hosts and ports, the database, and the
// URI parameters with only host, hostaddr, port, dbname and user's values
// (and sslmode's and connect_timeout's: "?sslmode=require&options=...").
// Whatever precedes the last '@'
// before the parameters is taken for the user and password, so a password
// holding '@' or '/' is still left out.
inline std::string redact_postgres_uri(std::string_view uri, bool* had_password = nullptr) {
    const auto start = uri.find("://");
    if (had_password) *had_password = false;
    if (start == std::string_view::npos) return "postgresql://...";
    std::string out(uri.substr(0, start + 3));
    std::string_view rest = uri.substr(start + 3);
    std::string_view query;
    if (const auto q = rest.find('?'); q != std::string_view::npos) {
        query = rest.substr(q + 1);
        rest = rest.substr(0, q);
    }
    if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
        const auto userinfo = rest.substr(0, at);
        const auto colon = userinfo.find(':');
        if (colon != std::string_view::npos && had_password) *had_password = true;
        out += userinfo.substr(0, colon);
        out += '@';
        rest = rest.substr(at + 1);
    }
    out += rest;
    if (!query.empty()) {
        char sep = '?';
        while (!query.empty()) {
            const auto amp = query.find('&');
            const auto pair = query.substr(0, amp);
            query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
            const auto eq = pair.find('=');
            const auto name = pair.substr(0, eq);
            if (name.empty()) continue;
            const auto key = opener_detail::lower(name);
            const bool safe = key == "host" || key == "hostaddr" || key == "port" || key == "dbname" || key == "user" ||
                              key == "sslmode" || key == "connect_timeout";
            if (key == "password" && had_password) *had_password = true;
            out += sep;
            out += name;
            if (eq != std::string_view::npos) out += safe ? std::string(pair.substr(eq)) : std::string("=...");
            sep = '&';
        }
    }
    return opener_detail::printable(out);
}

// Reads --store's argument for `use`. Returns the address, or nothing with
// `why` set to a usage error that names the accepted forms (and prints of
// the argument only its scheme, never the rest: it may hold a password).
inline std::optional<store_address> parse_store_address(std::string_view text, store_use use, std::string& why) {
    const auto forms = accepted_store_forms(use);
    const auto scheme = opener_detail::scheme_of(text);
    store_address a;
    if (!scheme) {
        if (text.empty()) {
            why = "--store needs a value: expected " + forms;
            return std::nullopt;
        }
        if (opener_detail::looks_like_keyword_string(text)) {
            why =
                "--store: a libpq keyword string (NAME=VALUE ...) is not an address; write "
                "postgresql://[USER@]HOST[:PORT]/DATABASE, or ./PATH for a file whose name holds '='; expected " +
                forms;
            return std::nullopt;
        }
        a.kind = use == store_use::keys ? backend::jsonl : backend::sqlite;
        a.target = std::string(text);
        a.shown = opener_detail::printable(text);
        return a;
    }
    const auto name = opener_detail::lower(*scheme);
    const auto rest = text.substr(scheme->size() + 1);
    if (name == "postgresql" || name == "postgres") {
        if (rest.substr(0, 2) != "//") {
            why = "--store " + name + ": expected " + name + "://[USER@]HOST[:PORT]/DATABASE, that is " + forms;
            return std::nullopt;
        }
        a.kind = backend::postgresql;
        a.target = std::string(text);
        a.shown = redact_postgres_uri(text, &a.has_password);
    } else if (name == "sqlite" || name == "jsonl") {
        if (rest.empty()) {
            why = "--store " + name + ":PATH needs a path; expected " + forms;
            return std::nullopt;
        }
        a.kind = name == "sqlite" ? backend::sqlite : backend::jsonl;
        a.target = std::string(rest);
        a.shown = name + ":" + opener_detail::printable(rest);
    } else {
        why = "--store: unknown scheme \"" + opener_detail::printable(scheme->substr(0, 32)) + ":\"; expected " +
              forms + " (a plain path with a colon in its first part: write ./PATH)";
        return std::nullopt;
    }
    if (use == store_use::keys && a.kind == backend::sqlite) {
        // The address quoted whole: "--store sqlite:: ..." would read as a doubled colon.
        why = "--store \"" + a.shown +
              "\": the key store is a JSON-lines file or PostgreSQL (keys on SQLite are not built); expected " + forms;
        return std::nullopt;
    }
    if (use != store_use::keys && a.kind == backend::jsonl) {
        why = "--store \"" + a.shown + "\": a jsonl: store holds keys (key_admin, key_gateway); " +
              (use == store_use::deliveries ? "for deliveries, " : "for replay ids, ") + "expected " + forms;
        return std::nullopt;
    }
    return a;
}

namespace opener_detail {

// `text` with every piece of the address's password in it written "...":
// a library's message may quote a part of the address it could not read
// (a password holding '/' read as a port), never the password itself.
inline std::string scrubbed(std::string text, const store_address& a) {
    if (!a.has_password) return text;
    std::string_view uri = a.target;
    uri.remove_prefix(uri.find("://") + 3);
    std::vector<std::string> passwords;
    const auto q = uri.find('?');
    auto query = q == std::string_view::npos ? std::string_view() : uri.substr(q + 1);
    const auto userinfo = uri.substr(0, q).substr(0, uri.substr(0, q).rfind('@'));
    if (const auto colon = userinfo.find(':'); colon != std::string_view::npos)
        passwords.emplace_back(userinfo.substr(colon + 1));
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (lower(pair.substr(0, pair.find('='))) == "password" && pair.find('=') != std::string_view::npos)
            passwords.emplace_back(pair.substr(pair.find('=') + 1));
    }
    std::vector<std::string> pieces;
    for (const auto& password : passwords) {
        pieces.push_back(password);
        std::size_t from = 0;
        for (std::size_t i = 0; i <= password.size(); ++i)
            if (i == password.size() || password[i] == '/' || password[i] == '@' || password[i] == ':') {
                if (i - from >= 2) pieces.push_back(password.substr(from, i - from));
                from = i + 1;
            }
    }
    for (const auto& piece : pieces)
        for (auto at = piece.empty() ? std::string::npos : text.find(piece); at != std::string::npos;
             at = text.find(piece, at + 3))
            text.replace(at, piece.size(), "...");
    return text;
}

// Runs `open`; a failure's message starts with the address as shown.
template <class Open>
auto opened(const store_address& a, Open&& open) -> decltype(open()) {
    try {
        return open();
    } catch (const store_not_built&) {
        throw;
    } catch (const std::exception& e) {
        throw std::runtime_error(a.shown + ": " + scrubbed(e.what(), a));
    }
}

[[noreturn]] inline void not_built(backend kind) {
    if (kind == backend::postgresql)
        throw store_not_built(
            "--store postgresql://... needs libpq, which this build was made without (Debian libpq-dev, then "
            "configure again)");
    throw store_not_built(
        "--store sqlite:PATH needs SQLite, which this build was made without (Debian libsqlite3-dev, then "
        "configure again)");
}

// The SQL store at `a` (sqlite or postgresql), as `Interface`.
template <class Interface>
std::unique_ptr<Interface> open_sql(const store_address& a) {
    if (a.kind == backend::postgresql) {
#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
        return opened(a, [&]() -> std::unique_ptr<Interface> { return std::make_unique<postgres_store>(a.target); });
#else
        not_built(a.kind);
#endif
    }
    if (a.kind == backend::sqlite) {
#if KEYHOOK_EXAMPLES_HAVE_SQLITE
        return opened(a, [&]() -> std::unique_ptr<Interface> { return std::make_unique<sqlite_store>(a.target); });
#else
        not_built(a.kind);
#endif
    }
    throw std::logic_error("a key store's address given for a SQL store");
}

}  // namespace opener_detail

// webhook_deliver's store (B6).
inline std::unique_ptr<delivery_store> open_delivery_store(const store_address& a) {
    return opener_detail::open_sql<delivery_store>(a);
}

// webhook_receiver's replay table (H9, B6), its rows in `scope`.
inline std::unique_ptr<replay_id_store> open_replay_store(const store_address& a, const std::string& scope) {
    auto store = opener_detail::open_sql<replay_id_store>(a);
    opener_detail::opened(a, [&] {
        store->open_replay_ids(scope);
        return 0;
    });
    return store;
}

// key_admin's and key_gateway's key store (K11 to K18). Opening a JSON-lines
// file reads nothing yet: a missing file is an empty store to a writer.
// Opening a database connects and creates its tables on first use; each
// statement then has `database_timeout` (key_gateway's is short, so a
// database that stops answering makes it stale rather than stuck).
inline std::unique_ptr<key_store::key_store> open_key_store(
    const store_address& a, std::chrono::milliseconds database_timeout = std::chrono::seconds{30}) {
    if (a.kind == backend::jsonl) return std::make_unique<key_store::jsonl_key_store>(a.target);
    if (a.kind == backend::postgresql) {
#if KEYHOOK_EXAMPLES_HAVE_LIBPQ
        key_store::postgres_key_store::options o;
        o.timeout = database_timeout;
        o.scrub = [a](std::string text) { return opener_detail::scrubbed(std::move(text), a); };
        return opener_detail::opened(a, [&]() -> std::unique_ptr<key_store::key_store> {
            return std::make_unique<key_store::postgres_key_store>(a.target, a.shown, o);
        });
#else
        (void)database_timeout;
        opener_detail::not_built(a.kind);
#endif
    }
    throw std::logic_error("a SQLite address given for the key store");
}

}  // namespace examples::store
