#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "helpers.hpp"
#include "keyhook/lifecycle.hpp"

using namespace keyhook;
using test_support::at;
using test_support::one_us;

namespace {

// A stored record, as a host would have it after creation.
api_key stored_key(std::uint64_t seed = 11) {
    test_support::seeded_random random(seed);
    auto r = test_support::request();
    r.groups = {"user:pf", "user:finance"};
    return create_key(r, tenant_kind::restricted, random, at("2024-02-20T00:00:00Z"),
                      key_author{std::string("owner-1"), std::string("alice")})
        .record;
}

}  // namespace

TEST_CASE("K6: deactivate makes any key Revoked", "[K6][S1][lifecycle]") {
    const auto key = stored_key();
    const auto now = at("2024-03-10T00:00:00Z");
    REQUIRE(is_active_at(key, now));

    const auto revoked = deactivate_key(key, now);
    CHECK(revoked.status == key_status::revoked);
    CHECK(status_at(revoked, now) == key_status::revoked);
    CHECK(revoked.updated_at == std::optional<timestamp>(now));
    // Nothing else changes.
    auto expected = key;
    expected.status = key_status::revoked;
    expected.updated_at = now;
    CHECK(revoked == expected);

    // From the clock-driven statuses too.
    CHECK(status_at(deactivate_key(key, key.active_from - one_us), key.active_from - one_us) == key_status::revoked);
    CHECK(status_at(deactivate_key(key, key.expire_at), key.expire_at) == key_status::revoked);

    // Deactivating twice changes nothing.
    CHECK(deactivate_key(revoked, now + std::chrono::hours(1)) == revoked);
}

TEST_CASE("K6: updating a revoked key re-activates it only if now lies in the new period", "[K6][S1][lifecycle]") {
    const auto revoked = deactivate_key(stored_key(), at("2024-03-05T00:00:00Z"));
    const auto from = at("2024-04-01T00:00:00Z");
    const auto until = at("2024-05-01T00:00:00Z");
    key_update change;
    change.active_from = from;
    change.expire_at = until;

    auto status_after_update_at = [&](timestamp now) { return update_key(revoked, change, now).status; };
    CHECK(status_after_update_at(from - one_us) == key_status::revoked);
    CHECK(status_after_update_at(from) == key_status::active);
    CHECK(status_after_update_at(until - one_us) == key_status::active);
    CHECK(status_after_update_at(until) == key_status::revoked);

    const auto now = at("2024-04-15T00:00:00Z");
    const auto updated = update_key(revoked, change, now);
    CHECK(updated.active_from == from);
    CHECK(updated.expire_at == until);
    CHECK(updated.updated_at == std::optional<timestamp>(now));
    CHECK(updated.id == revoked.id);
    CHECK(updated.masked == revoked.masked);
    CHECK(updated.created_at == revoked.created_at);
    CHECK(is_active_at(updated, now));
}

TEST_CASE("K6: an update that keeps the period re-activates when now is inside it", "[K6][lifecycle]") {
    const auto key = stored_key();
    const auto revoked = deactivate_key(key, at("2024-03-05T00:00:00Z"));
    key_update rename;
    rename.name = "Renamed";
    CHECK(update_key(revoked, rename, key.active_from).status == key_status::active);
    CHECK(update_key(revoked, rename, key.expire_at - one_us).status == key_status::active);
    CHECK(update_key(revoked, rename, key.expire_at).status == key_status::revoked);
    CHECK(update_key(revoked, rename, key.active_from - one_us).status == key_status::revoked);
}

TEST_CASE("K6: an update reports the status before and after it", "[K6][S1][lifecycle]") {
    const auto key = stored_key();
    const auto revoked = deactivate_key(key, at("2024-03-05T00:00:00Z"));
    key_update rename;
    rename.description = "revoked: leaked";
    const auto now = at("2024-03-10T00:00:00Z");

    // A Revoked key that an update reactivates: the program must see "Revoked before".
    const auto r = try_update_key_reported(revoked, rename, now);
    REQUIRE(r);
    CHECK(r->before == key_status::revoked);
    CHECK(r->after == key_status::active);
    CHECK(r->record == update_key(revoked, rename, now));

    // Revoked, and the period it keeps has ended: Revoked on both sides.
    const auto late = try_update_key_reported(revoked, rename, key.expire_at);
    REQUIRE(late);
    CHECK(late->before == key_status::revoked);
    CHECK(late->after == key_status::revoked);

    // Not Revoked: the clock's statuses before and after.
    key_update shorten;
    shorten.expire_at = now;
    const auto a = try_update_key_reported(key, shorten, now);
    REQUIRE(a);
    CHECK(a->before == key_status::active);
    CHECK(a->after == key_status::expired);
    const auto b = try_update_key_reported(key, rename, key.active_from - one_us);
    REQUIRE(b);
    CHECK(b->before == key_status::active_in_future);
    CHECK(b->after == key_status::active_in_future);

    // Invalid updates give try_update_key's error.
    key_update bad;
    bad.name = "";
    const auto e = try_update_key_reported(revoked, bad, now);
    REQUIRE_FALSE(e);
    CHECK(e.error() == try_update_key(revoked, bad, now).error());
}

TEST_CASE("K6: updating a key that is not revoked gives the clock's status", "[K6][lifecycle]") {
    const auto key = stored_key();
    key_update change;
    change.expire_at = at("2024-03-15T00:00:00Z");
    CHECK(update_key(key, change, at("2024-03-15T00:00:00Z") - one_us).status == key_status::active);
    CHECK(update_key(key, change, at("2024-03-15T00:00:00Z")).status == key_status::expired);
    change.active_from = at("2024-03-12T00:00:00Z");
    CHECK(update_key(key, change, at("2024-03-12T00:00:00Z") - one_us).status == key_status::active_in_future);
}

TEST_CASE("K6: update changes the given properties only", "[K6][lifecycle]") {
    const auto key = stored_key();
    const auto now = at("2024-03-10T00:00:00Z");
    key_update change;
    change.name = "  Payments  ";
    change.groups = std::vector<std::string>{"user:pf"};
    auto updated = update_key(key, change, now);
    CHECK(updated.name == "Payments");
    CHECK(updated.groups == std::vector<std::string>{"user:pf"});
    CHECK(updated.description == key.description);
    CHECK(updated.active_from == key.active_from);
    CHECK(updated.expire_at == key.expire_at);

    key_update clear;
    clear.description = " ";
    CHECK_FALSE(update_key(key, clear, now).description);
    CHECK(update_key(key, key_update{}, now).name == key.name);
}

TEST_CASE("K6: updates are validated like creation", "[K6][K3][lifecycle]") {
    const auto key = stored_key();
    const auto now = at("2024-03-10T00:00:00Z");

    key_update bad;
    bad.name = " ";
    bad.expire_at = key.active_from;
    bad.groups = std::vector<std::string>{};
    const auto errors = key_update_problems(key, bad);
    REQUIRE(errors.size() == 3);
    CHECK(errors[0].path == "name");
    CHECK(errors[1].path == "expireAt");
    CHECK(errors[1].code == errc::invalid_period);
    CHECK(errors[2].path == "groups");

    const auto r = try_update_key(key, bad, now);
    REQUIRE_FALSE(r);
    CHECK(r.error() == errors[0]);
    CHECK_THROWS_AS(update_key(key, bad, now), keyhook::exception);

    // Boundary: a period of one microsecond is valid, an empty one is not.
    key_update tight;
    tight.expire_at = key.active_from + one_us;
    CHECK(try_update_key(key, tight, now));
    tight.expire_at = key.active_from;
    CHECK_FALSE(try_update_key(key, tight, now));
    // The whole of a revoked key stays as it was when the update is refused.
    CHECK_FALSE(try_update_key(deactivate_key(key, now), tight, now));
}

TEST_CASE("K7: rotate from now keeps name, description and groups; the old key is unchanged", "[K7][K5][lifecycle]") {
    const auto old = stored_key();
    const auto length = old.expire_at - old.active_from;
    const auto now = at("2024-03-25T10:00:00Z");
    test_support::seeded_random random(77);
    auto rotated = rotate_key(old, rotation_policy::from_now, random, now);

    CHECK(rotated.old_record == old);
    const auto& k = rotated.record;
    CHECK(k.name == old.name);
    CHECK(k.description == old.description);
    CHECK(k.groups == old.groups);
    CHECK(k.user_id == old.user_id);
    CHECK(k.id != old.id);
    CHECK(is_uuid_v4(k.id.str()));
    CHECK(k.active_from == now);
    CHECK(k.expire_at == now + length);
    CHECK(k.status == key_status::active);
    CHECK(k.created_at == std::optional<timestamp>(now));
    CHECK(k.updated_at == std::optional<timestamp>(now));

    const auto plaintext = rotated.key.take();
    REQUIRE(plaintext);
    CHECK(is_uuid_v4(plaintext->reveal()));
    CHECK(k.masked == std::optional<std::string>(plaintext->masked()));
    CHECK(k.masked != old.masked);
    CHECK_FALSE(rotated.key.take());
    CHECK(random.bytes == 32);

    // Both work during the overlap (old until its expireAt).
    CHECK(is_active_at(old, now));
    CHECK(is_active_at(k, now));
    CHECK(is_active_at(k, old.expire_at));
}

TEST_CASE("K7: the handover policy starts the new period at the old expireAt", "[K7][lifecycle]") {
    const auto old = stored_key();
    const auto length = old.expire_at - old.active_from;
    const auto now = at("2024-03-25T10:00:00Z");
    test_support::seeded_random random(78);
    const auto rotated = rotate_key(old, rotation_policy::handover, random, now);
    const auto& k = rotated.record;
    CHECK(k.active_from == old.expire_at);
    CHECK(k.expire_at == old.expire_at + length);
    CHECK(k.status == key_status::active_in_future);
    CHECK(rotated.old_record == old);
    // No gap and no overlap: one microsecond before the old expiry only the old key works.
    CHECK(is_active_at(old, old.expire_at - one_us));
    CHECK_FALSE(is_active_at(k, old.expire_at - one_us));
    CHECK_FALSE(is_active_at(old, old.expire_at));
    CHECK(is_active_at(k, old.expire_at));
}

TEST_CASE("K7: rotating a revoked key leaves it revoked and gives an active one", "[K7][K6][lifecycle]") {
    const auto now = at("2024-03-10T00:00:00Z");
    const auto revoked = deactivate_key(stored_key(), now);
    test_support::seeded_random random(79);
    const auto rotated = rotate_key(revoked, rotation_policy::from_now, random, now);
    CHECK(rotated.old_record.status == key_status::revoked);
    CHECK(rotated.record.status == key_status::active);
}

TEST_CASE("K7: rotation refuses periods it cannot represent", "[K7][T3][lifecycle]") {
    test_support::seeded_random random(80);
    auto key = stored_key();
    const auto now = at("2024-03-10T00:00:00Z");

    key.expire_at = key.active_from;
    auto r = try_rotate_key(key, rotation_policy::from_now, random, now);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_period);
    CHECK(r.error().path == "expireAt");

    // Handover ending exactly at the last representable instant is fine, one more is not.
    key.active_from = max_timestamp - std::chrono::hours(48);
    key.expire_at = max_timestamp - std::chrono::hours(24);
    CHECK(try_rotate_key(key, rotation_policy::handover, random, now));
    key.active_from -= one_us;
    r = try_rotate_key(key, rotation_policy::handover, random, now);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_period);
    CHECK_THROWS_AS(rotate_key(key, rotation_policy::handover, random, now), keyhook::exception);
}

TEST_CASE("K8: delete needs an explicit confirmation", "[K8][lifecycle]") {
    const auto key = stored_key();
    const auto refused = try_delete_key(key, deletion_confirmation{});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == errc::not_confirmed);
    CHECK(refused.error().path == "confirmation");
    CHECK_FALSE(try_delete_key(key, deletion_confirmation::not_confirmed));
    CHECK_THROWS_AS(delete_key(key, deletion_confirmation::not_confirmed), keyhook::exception);

    const auto receipt = delete_key(key, deletion_confirmation::confirmed);
    CHECK(receipt.id == key.id);
    CHECK(receipt.name == key.name);
}

TEST_CASE("K8: deleting from a list removes exactly that key", "[K8][lifecycle]") {
    const std::vector<api_key> keys{stored_key(1), stored_key(2), stored_key(3)};
    const auto after = delete_key(keys, keys[1].id, deletion_confirmation::confirmed);
    REQUIRE(after.size() == 2);
    CHECK(after[0] == keys[0]);
    CHECK(after[1] == keys[2]);
    CHECK(keys.size() == 3);  // the input is untouched

    const auto unconfirmed = try_delete_key(keys, keys[1].id, deletion_confirmation::not_confirmed);
    REQUIRE_FALSE(unconfirmed);
    CHECK(unconfirmed.error().code == errc::not_confirmed);

    // Deleted keys cannot be recovered: deleting again finds nothing.
    const auto again = try_delete_key(after, keys[1].id, deletion_confirmation::confirmed);
    REQUIRE_FALSE(again);
    CHECK(again.error().code == errc::invalid_value);
    CHECK(again.error().path == "id");
}

TEST_CASE("record_use moves lastUsedAt forward only", "[lifecycle]") {
    const auto key = stored_key();
    const auto t = at("2024-03-10T00:00:00Z");
    const auto used = record_use(key, t);
    CHECK(used.last_used_at == std::optional<timestamp>(t));
    CHECK(record_use(used, t - one_us).last_used_at == std::optional<timestamp>(t));
    CHECK(record_use(used, t + one_us).last_used_at == std::optional<timestamp>(t + one_us));
}

// Regression test: time arithmetic: a time plus a caller's duration overflowed (T3, saturating sums).
TEST_CASE("K7, T3: rotating a period too long to measure is refused, not overflowed", "[K7][T3][lifecycle]") {
    test_support::seeded_random random(81);
    auto key = stored_key();
    const auto now = at("2024-03-10T00:00:00Z");
    // expireAt - activeFrom does not fit in 64 bits: it saturates, and no new
    // period of that length fits before the year 10000.
    key.active_from = timestamp::min();
    key.expire_at = timestamp::max();
    for (const auto policy : {rotation_policy::from_now, rotation_policy::handover}) {
        const auto r = try_rotate_key(key, policy, random, now);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_period);
        CHECK(r.error().path == "expireAt");
    }
    // Inverted across the whole range (the wrapped difference used to be positive).
    key.active_from = timestamp::max();
    key.expire_at = timestamp::min();
    const auto inverted = try_rotate_key(key, rotation_policy::from_now, random, now);
    REQUIRE_FALSE(inverted);
    CHECK(inverted.error().message.find("empty or inverted") != std::string::npos);
}

TEST_CASE("K7: from now, the new period may end exactly at the last representable instant", "[K7][T3][lifecycle]") {
    test_support::seeded_random random(82);
    auto key = stored_key();
    const auto now = at("2024-03-10T00:00:00Z");
    key.active_from = min_timestamp;
    key.expire_at = min_timestamp + (max_timestamp - now);
    const auto r = try_rotate_key(key, rotation_policy::from_now, random, now);
    REQUIRE(r);
    CHECK(r->record.active_from == now);
    CHECK(r->record.expire_at == max_timestamp);
    key.expire_at += one_us;
    CHECK_FALSE(try_rotate_key(key, rotation_policy::from_now, random, now));
}

namespace {
// A degenerate source: the same byte everywhere, so the key and the id come out equal.
struct constant_random {
    void operator()(unsigned char* out, std::size_t n) const {
        for (std::size_t i = 0; i < n; ++i) out[i] = 0x42;
    }
};
}  // namespace

// Regression test: a repeating random source made the record's id equal to the key (K1, M3).
TEST_CASE("K1, M3: a random source that repeats itself cannot make the record's id the key",
          "[M3][K1][K7][lifecycle]") {
    const auto now = at("2024-03-02T00:00:00Z");
    const auto created = try_create_key(test_support::request(), tenant_kind::shared, constant_random{}, now);
    REQUIRE_FALSE(created);
    CHECK(created.error().code == errc::host_failure);
    CHECK(created.error().what().find("4242") == std::string::npos);
    const auto rotated = try_rotate_key(stored_key(), rotation_policy::from_now, constant_random{}, now);
    REQUIRE_FALSE(rotated);
    CHECK(rotated.error().code == errc::host_failure);
    // The other side: an ordinary source gives an id that differs from the key.
    test_support::seeded_random random(81);
    auto ok = try_create_key(test_support::request(), tenant_kind::shared, random, now);
    REQUIRE(ok);
    CHECK(ok->record.id.str() != ok->key.take()->reveal());
}

// Regression test: a rotation starting before the year 0001 (K7, T3).
TEST_CASE("K7, T3: a rotation that would start before the year 0001 says so", "[K7][T3][lifecycle]") {
    test_support::seeded_random random(82);
    const auto r = try_rotate_key(stored_key(), rotation_policy::from_now, random, min_timestamp - one_us);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_period);
    CHECK(r.error().path == "activeFrom");
    CHECK(r.error().message.find("before the year 0001") != std::string::npos);
    // At the first representable instant it starts.
    CHECK(try_rotate_key(stored_key(), rotation_policy::from_now, random, min_timestamp));
}
