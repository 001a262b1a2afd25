// H9's in-memory replay table (examples/webhook_receiver/replay.hpp): a
// replayed id is recognised, a full table refuses rather than forget, ids are
// forgotten exactly two windows after signing, and filling the table costs
// O(log n) per id (it used to scan every id per claim).
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "replay.hpp"

namespace {

using webhook_receiver::memory_replay_table;
using outcome = webhook_receiver::replay_table::outcome;
const keyhook::timestamp t0 = keyhook::parse_timestamp("2026-11-22T12:00:00Z");

// A claim whose line is written at once: claimed, then accepted (H9, B6).
template <class Table>
outcome admit(Table& table, const std::string& id, keyhook::timestamp signed_at, keyhook::timestamp now) {
    const auto o = table.claim(id, signed_at, now);
    if (o == outcome::claimed) table.accept(id);
    return o;
}

}  // namespace

TEST_CASE("replay table: a second claim of an id is a replay", "[H9]") {
    memory_replay_table table(std::chrono::seconds(300), 10);
    CHECK(admit(table, "msg_1", t0, t0) == outcome::claimed);
    CHECK(admit(table, "msg_1", t0, t0) == outcome::replay);
    CHECK(admit(table, "msg_2", t0, t0) == outcome::claimed);
    CHECK(table.size() == 2);
}

TEST_CASE("replay table: full at capacity, not one id before", "[H9]") {
    memory_replay_table table(std::chrono::seconds(300), 3);
    CHECK(admit(table, "a", t0, t0) == outcome::claimed);
    CHECK(admit(table, "b", t0, t0) == outcome::claimed);
    CHECK(admit(table, "c", t0, t0) == outcome::claimed);  // the 3rd fits
    CHECK(admit(table, "d", t0, t0) == outcome::full);     // the 4th does not, and is not recorded
    CHECK(admit(table, "a", t0, t0) == outcome::replay);   // a full table still knows its ids
    CHECK(table.size() == 3);
}

TEST_CASE("replay table: an id is kept two windows after signing, then forgotten", "[H9]") {
    const std::chrono::seconds window(300);
    memory_replay_table table(window, 1);
    REQUIRE(admit(table, "a", t0, t0) == outcome::claimed);
    const auto last = t0 + 2 * window;
    CHECK(admit(table, "b", t0, last) == outcome::full);  // at exactly two windows "a" is still held
    CHECK(admit(table, "a", t0, last) == outcome::replay);
    const auto after = last + std::chrono::microseconds(1);
    CHECK(admit(table, "b", t0, after) == outcome::claimed);  // one microsecond later it is gone
    CHECK(table.size() == 1);
}

TEST_CASE("replay table: a window of seconds::max() keeps every id (no wrap)", "[H9]") {
    memory_replay_table table(std::chrono::seconds::max(), 2);
    REQUIRE(admit(table, "a", t0, t0) == outcome::claimed);
    CHECK(admit(table, "a", t0, keyhook::timestamp::max()) == outcome::replay);
}

// A delivery claimed and then not processed (its line could not be written)
// gives its id back: the sender's retry is processed, not taken for a replay.
TEST_CASE("replay table: a released id is accepted again; other ids are kept", "[H9]") {
    const std::chrono::seconds window(300);
    memory_replay_table table(window, 2);
    REQUIRE(table.claim("a", t0, t0) == outcome::claimed);  // its line then not written
    REQUIRE(admit(table, "b", t0, t0) == outcome::claimed);
    CHECK(admit(table, "c", t0, t0) == outcome::full);
    table.release("a");
    table.release("never claimed");  // nothing to give back: nothing changes
    CHECK(table.size() == 1);
    CHECK(admit(table, "b", t0, t0) == outcome::replay);
    CHECK(admit(table, "a", t0, t0) == outcome::claimed);  // the retry
    CHECK(admit(table, "a", t0, t0) == outcome::replay);
    // The index forgot the released entry too: pruning past two windows
    // examines the two ids held, not a third that was given back.
    const auto later = t0 + 2 * window + std::chrono::microseconds(1);
    CHECK(admit(table, "d", later, later) == outcome::claimed);
    CHECK(table.examined() == 2);
    CHECK(table.size() == 1);
}

// Signing times are whole seconds, so a burst shares one expiry: each id
// holds its own entry in the index, and giving ids back leaves the others.
TEST_CASE("replay table: ids of one signing second released one by one", "[H9]") {
    constexpr std::size_t n = 65536;
    memory_replay_table table(std::chrono::seconds(300), n);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(admit(table, "msg_" + std::to_string(i), t0, t0) == outcome::claimed);
    for (std::size_t i = 0; i < n; i += 2) table.release("msg_" + std::to_string(i));
    CHECK(table.size() == n / 2);
    CHECK(admit(table, "msg_0", t0, t0) == outcome::claimed);
    CHECK(admit(table, "msg_1", t0, t0) == outcome::replay);
    // Past two windows the index forgets exactly the ids still held.
    const auto later = t0 + std::chrono::seconds(601);
    CHECK(admit(table, "late", later, later) == outcome::claimed);
    CHECK(table.examined() == n / 2 + 1);
    CHECK(table.size() == 1);
}

// Filling the old table was quadratic (a scan of every id per claim).
TEST_CASE("replay table: filling 65,536 ids examines none twice", "[H9]") {
    constexpr std::size_t n = 65536;
    const std::chrono::seconds window(300);
    memory_replay_table table(window, n);
    // Signed a microsecond apart: none expires while the table fills.
    for (std::size_t i = 0; i < n; ++i) {
        const auto at = t0 + std::chrono::microseconds(i);
        REQUIRE(admit(table, "msg_" + std::to_string(i), at, at) == outcome::claimed);
    }
    CHECK(admit(table, "one more", t0, t0 + std::chrono::microseconds(n)) == outcome::full);
    // The old table scanned every held id at each claim: n * (n - 1) / 2 visits.
    CHECK(table.examined() == 0);
    // Past the first half's two windows, exactly that half is examined, once.
    const auto half = t0 + 2 * window + std::chrono::microseconds(n / 2 - 1);
    CHECK(admit(table, "late", half, half + std::chrono::microseconds(1)) == outcome::claimed);
    CHECK(table.examined() == n / 2);
    CHECK(table.size() == n / 2 + 1);
}
