// The one reader of every program's --store (examples/shared/store_opener.hpp,
// rules B6 and K18): which backend each form names for each use, the forms
// refused with the accepted ones named, and what may be printed of an
// address (never a password).
#include "shared/store_opener.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>

namespace {

using examples::store::backend;
using examples::store::store_use;

struct parsed {
    std::optional<examples::store::store_address> address;
    std::string why;
};

parsed parse(const std::string& text, store_use use) {
    parsed p;
    p.address = examples::store::parse_store_address(text, use, p.why);
    return p;
}

}  // namespace

TEST_CASE("Store opener: each form names its backend; a plain path keeps its old meaning per use", "[B6]") {
    for (const auto use : {store_use::deliveries, store_use::replay_ids}) {
        auto p = parse("sqlite:/var/lib/keyhook/store.db", use);
        REQUIRE(p.address);
        CHECK(p.address->kind == backend::sqlite);
        CHECK(p.address->target == "/var/lib/keyhook/store.db");
        CHECK(p.address->shown == "sqlite:/var/lib/keyhook/store.db");

        p = parse("store.db", use);  // a plain path: SQLite
        REQUIRE(p.address);
        CHECK(p.address->kind == backend::sqlite);
        CHECK(p.address->target == "store.db");

        p = parse("./odd:name.db", use);  // a colon after the first slash is the path's
        REQUIRE(p.address);
        CHECK(p.address->target == "./odd:name.db");

        for (const char* uri : {"postgresql://app@db.internal:5432/hooks", "postgres://app@db.internal/hooks",
                                "POSTGRESQL://app@db/hooks"}) {
            p = parse(uri, use);
            REQUIRE(p.address);
            CHECK(p.address->kind == backend::postgresql);
            CHECK(p.address->target == uri);  // libpq reads the URI as given
            CHECK_FALSE(p.address->has_password);
        }
    }
    auto p = parse("keys.jsonl", store_use::keys);  // a plain path: JSON lines
    REQUIRE(p.address);
    CHECK(p.address->kind == backend::jsonl);
    CHECK(p.address->target == "keys.jsonl");
    p = parse("jsonl:/etc/keyhook/keys.jsonl", store_use::keys);
    REQUIRE(p.address);
    CHECK(p.address->kind == backend::jsonl);
    CHECK(p.address->target == "/etc/keyhook/keys.jsonl");
    CHECK(p.address->shown == "jsonl:/etc/keyhook/keys.jsonl");
    // K17: keys on PostgreSQL, one store for many gateways.
    for (const char* uri : {"postgresql://app@db.internal:5432/keys", "postgres://app@db/keys"}) {
        p = parse(uri, store_use::keys);
        REQUIRE(p.address);
        CHECK(p.address->kind == backend::postgresql);
        CHECK(p.address->target == uri);
    }
}

TEST_CASE("Store opener: an unknown scheme is refused, naming the accepted forms and only its scheme", "[B6]") {
    for (const auto use : {store_use::deliveries, store_use::replay_ids, store_use::keys}) {
        for (const char* text : {"mysql://root:hunter2@db/x", "file:x.db", "redis:6379", "s3://bucket/key"}) {
            const auto p = parse(text, use);
            CHECK_FALSE(p.address);
            CHECK_THAT(p.why, Catch::Contains("unknown scheme"));
            CHECK_THAT(p.why, Catch::Contains(examples::store::accepted_store_forms(use)));
            CHECK_THAT(p.why, !Catch::Contains("hunter2"));
            CHECK_THAT(p.why, !Catch::Contains("bucket"));
        }
    }
    CHECK_THAT(parse("mysql://x", store_use::deliveries).why, Catch::Contains("\"mysql:\""));
    CHECK_THAT(parse("mysql://x", store_use::deliveries).why,
               Catch::Contains("expected sqlite:PATH or postgresql://... (also postgres://...), or a plain PATH"));
    CHECK_THAT(parse("mysql://x", store_use::keys).why,
               Catch::Contains("jsonl:PATH or a plain PATH (a JSON-lines key file), or postgresql://..."));
}

TEST_CASE("Store opener: a form the program cannot use is refused, saying what it can", "[B6][K18]") {
    auto p = parse("jsonl:keys.jsonl", store_use::deliveries);
    CHECK_FALSE(p.address);
    CHECK_THAT(p.why, Catch::Contains("holds keys"));
    CHECK_THAT(p.why, Catch::Contains("sqlite:PATH"));
    p = parse("jsonl:keys.jsonl", store_use::replay_ids);
    CHECK_FALSE(p.address);
    CHECK_THAT(p.why, Catch::Contains("replay ids"));
    p = parse("sqlite:keys.db", store_use::keys);
    CHECK_FALSE(p.address);
    CHECK_THAT(p.why, Catch::Contains("keys on SQLite are not built"));
    CHECK_THAT(p.why, Catch::StartsWith("--store \"sqlite:keys.db\": "));
    // The address is quoted whole, so an odd one reads as given, not as a doubled colon.
    p = parse("sqlite::", store_use::keys);
    CHECK_THAT(p.why, Catch::StartsWith("--store \"sqlite::\": "));
    CHECK_THAT(p.why, Catch::Contains("jsonl:PATH") && Catch::Contains("postgresql://"));
    // The other side: a PostgreSQL address is a key store's (K17), shown without its password.
    p = parse("postgresql://app:hunter2@db/keys", store_use::keys);
    REQUIRE(p.address);
    CHECK(p.address->shown == "postgresql://app@db/keys");
    CHECK(p.address->has_password);
}

TEST_CASE("Store opener: empty and malformed addresses are usage errors", "[B6]") {
    CHECK_THAT(parse("", store_use::deliveries).why, Catch::Contains("needs a value"));
    CHECK_THAT(parse("sqlite:", store_use::deliveries).why, Catch::Contains("sqlite:PATH needs a path"));
    CHECK_THAT(parse("jsonl:", store_use::keys).why, Catch::Contains("jsonl:PATH needs a path"));
    CHECK_THAT(parse("postgresql:db", store_use::deliveries).why, Catch::Contains("expected postgresql://"));
    // The boundary: "sqlite:x" is a path of one character; "postgresql://" libpq's defaults (PGHOST, ...).
    CHECK(parse("sqlite:x", store_use::deliveries).address);
    CHECK(parse("postgresql://", store_use::deliveries).address);
}

TEST_CASE("Store opener: a libpq keyword string is refused without quoting it; ./PATH still opens such a file",
          "[B6][K18]") {
    for (const auto use : {store_use::deliveries, store_use::replay_ids, store_use::keys}) {
        for (const std::string text : {"host=db password=hunter2", "dbname=hooks", " user = app password=hunter2"}) {
            const auto p = parse(text, use);
            CHECK_FALSE(p.address);
            CHECK_THAT(p.why, Catch::Contains("libpq keyword string") && Catch::Contains("postgresql://"));
            CHECK_THAT(p.why, !Catch::Contains("hunter2") && !Catch::Contains("db password"));
        }
        // The other side: a name without '=' after it, '=' later in a path, and ./ before a name holding '='.
        CHECK(parse("store.db", use).address);
        CHECK(parse("data/a=b.db", use).address);
        CHECK(parse("./host=db", use).address);
        CHECK(parse("=x", use).address);
    }
}

TEST_CASE("Store opener: a PostgreSQL address is shown without its password or secret parameters", "[B6][K18]") {
    using examples::store::redact_postgres_uri;
    bool password = false;
    CHECK(redact_postgres_uri("postgresql://app:hunter2@db.internal:5432/hooks", &password) ==
          "postgresql://app@db.internal:5432/hooks");
    CHECK(password);
    CHECK(redact_postgres_uri("postgresql://app@db.internal/hooks", &password) == "postgresql://app@db.internal/hooks");
    CHECK_FALSE(password);
    // A password holding '@' or '/': everything before the last '@' is the user's.
    CHECK(redact_postgres_uri("postgres://app:pa@ss/w0rd@db/hooks", &password) == "postgres://app@db/hooks");
    CHECK(password);
    // Several hosts, and parameters: only host, hostaddr, port, dbname, user, sslmode and connect_timeout
    // keep their values.
    CHECK(redact_postgres_uri(
              "postgresql://h1:5432,h2:5433/hooks?sslmode=require&password=hunter2&host=/run/pg&options=-c%20x",
              &password) == "postgresql://h1:5432,h2:5433/hooks?sslmode=require&password=...&host=/run/pg&options=...");
    CHECK(password);
    CHECK(redact_postgres_uri("postgresql://", &password) == "postgresql://");
    CHECK_FALSE(password);
    // Control characters never reach a terminal.
    CHECK(redact_postgres_uri("postgresql://db/h\x1b[2Jx") == "postgresql://db/h\\x1b[2Jx");

    const auto p = parse("postgresql://app:hunter2@db.internal/hooks", store_use::deliveries);
    REQUIRE(p.address);
    CHECK(p.address->shown == "postgresql://app@db.internal/hooks");
    CHECK(p.address->has_password);
    CHECK(p.address->target == "postgresql://app:hunter2@db.internal/hooks");
}

TEST_CASE("Store opener: a failure's message starts with the address as shown and holds no password piece",
          "[B6][K18]") {
    const auto p = parse("postgresql://app:ab/cd@db/hooks", store_use::deliveries);
    REQUIRE(p.address);
    try {
        examples::store::opener_detail::opened(*p.address, []() -> int {
            throw std::runtime_error("invalid integer value \"ab\" for connection option \"port\"; ab/cd");
        });
        FAIL("no exception");
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        CHECK(what.rfind("postgresql://app@db/hooks: ", 0) == 0);
        CHECK_THAT(what, !Catch::Contains("ab"));
        CHECK_THAT(what, !Catch::Contains("cd"));
    }
}

TEST_CASE("Store opener: the key store opens as its JSON-lines backend behind the key_store interface", "[K18]") {
    const auto p = parse("jsonl:keyhook-opener-test-missing.jsonl", store_use::keys);
    REQUIRE(p.address);
    const auto store = examples::store::open_key_store(*p.address);
    CHECK(store->path() == "keyhook-opener-test-missing.jsonl");
    CHECK_FALSE(store->read_snapshot());  // a reader that serves the store needs the file
    const auto read = store->read();      // to a writer, a missing file is an empty store
    REQUIRE(read);
    CHECK(read->empty());
    std::remove("keyhook-opener-test-missing.jsonl.lock");
}
