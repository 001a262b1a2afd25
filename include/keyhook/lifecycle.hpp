// keyhook: what happens to a key after creation (spec 3.2; rules K6 to K8).
// Deactivate, update, rotate and delete are pure functions from a record, a
// change and `now` to a new record; the host stores the result.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/api_key.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// --- Deactivate (K6) ---------------------------------------------------------

// K6: the key becomes Revoked and can no longer be used; updatedAt = now. A key
// that is already Revoked is returned unchanged (deactivating twice is a no-op).
[[nodiscard]] KEYHOOK_INLINE api_key deactivate_key(const api_key& key, timestamp now);

// --- Update (K6) ---------------------------------------------------------------

// The properties an update may change; an empty member keeps the record's value.
// An empty description (after trimming) removes it.
struct key_update {
    std::optional<std::string> name;
    std::optional<std::string> description;
    std::optional<timestamp> active_from;
    std::optional<timestamp> expire_at;
    std::optional<std::vector<std::string>> groups;

    friend bool operator==(const key_update& a, const key_update& b) { return is_equal(a, b); }
    friend bool operator!=(const key_update& a, const key_update& b) { return !(a == b); }

private:
    static KEYHOOK_INLINE bool is_equal(const key_update& a, const key_update& b);
};

// K3 applied to the record an update would produce: every problem, in the
// order name, description, activeFrom, expireAt, groups.
[[nodiscard]] KEYHOOK_INLINE std::vector<error> key_update_problems(const api_key& key, const key_update& change);

// K6: validated like creation (the first error is returned; key_update_problems
// lists them all). A Revoked key becomes Active again only if now lies in its
// new validity period (activeFrom <= now < expireAt, S1); otherwise it stays
// Revoked. Any other key gets the status the clock gives its new period.
// updatedAt = now; id, masked form, creation data and lastUsedAt are kept.
[[nodiscard]] KEYHOOK_INLINE result<api_key> try_update_key(const api_key& key, const key_update& change,
                                                            timestamp now);

[[nodiscard]] KEYHOOK_INLINE api_key update_key(const api_key& key, const key_update& change, timestamp now);

// K6: an update with the status it found and the status it leaves, both as
// of `now` (status_at): `before` is the key's status before the update,
// `after` the updated record's. A program that applies an update to a
// Revoked key only on explicit reactivation asks `before == revoked`
// before storing `record`; `after` says whether the update reactivated it.
struct key_update_report {
    api_key record;
    key_status before = key_status::active;
    key_status after = key_status::active;
};

// try_update_key, and the statuses before and after (same errors).
[[nodiscard]] KEYHOOK_INLINE result<key_update_report> try_update_key_reported(const api_key& key,
                                                                               const key_update& change, timestamp now);

// --- Rotate (K7) -----------------------------------------------------------------

// Where the new key's validity period starts; its length is the old one's.
enum class rotation_policy {
    from_now,  // policy default: at the rotation time
    handover,  // at the old key's expireAt, so the two periods touch without overlap
};

template <>
struct detail::enum_names<rotation_policy> {
    static constexpr std::string_view values[] = {"from_now", "handover"};
};

// The outcome of a rotation: the old record (unchanged), the new record, and
// the new plaintext, which can be taken once (K5). Move-only.
struct rotated_key {
    api_key old_record;
    api_key record;
    one_time_secret key;

    friend std::ostream& operator<<(std::ostream& os, const rotated_key& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const rotated_key& x);
};

namespace detail::keys {
// try_rotate_key's work.
[[nodiscard]] KEYHOOK_INLINE result<rotated_key> rotate(const api_key& key, rotation_policy policy, random_ref random,
                                                        timestamp now, const key_author& author);
}  // namespace detail::keys

// K7: a new key with the same name, description, groups and userId, a new id
// and a newly generated secret (UUID v4, drawn before the id, as in creation),
// whose period has the old period's length and starts at `now` (from_now) or at
// the old key's expireAt (handover). Its status is the clock's at `now`; its
// createdAt = updatedAt = now and createdBy is the author's. The old key is
// left unchanged: both work until the old one expires or is deactivated.
// Errors: invalid_period (path "expireAt") when the old period is empty or
// inverted, or the new one would end after the year 9999; an exception from
// `random` becomes the error (never thrown: the try_ contract).
template <class RandomSource>
[[nodiscard]] result<rotated_key> try_rotate_key(const api_key& key, rotation_policy policy, RandomSource&& random,
                                                 timestamp now, const key_author& author = {}) {
    return detail::keys::rotate(key, policy, detail::keys::draw_from(random), now, author);
}

template <class RandomSource>
[[nodiscard]] rotated_key rotate_key(const api_key& key, rotation_policy policy, RandomSource&& random, timestamp now,
                                     const key_author& author = {}) {
    return try_rotate_key(key, policy, std::forward<RandomSource>(random), now, author).value();
}

// --- Delete (K8) ------------------------------------------------------------------

// K8: deletion cannot be undone, so it takes this explicit argument; anything
// but `confirmed` (including a default-constructed value) is refused.
enum class deletion_confirmation { not_confirmed, confirmed };

// What the host removes from its store after a confirmed deletion.
struct deletion_receipt {
    key_id id;
    std::string name;

    friend bool operator==(const deletion_receipt& a, const deletion_receipt& b) {
        return a.id == b.id && a.name == b.name;
    }
    friend bool operator!=(const deletion_receipt& a, const deletion_receipt& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const deletion_receipt& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const deletion_receipt& x);
};

// K8: errc::not_confirmed (path "confirmation") unless confirmed.
[[nodiscard]] KEYHOOK_INLINE result<deletion_receipt> try_delete_key(const api_key& key,
                                                                     deletion_confirmation confirmation);

[[nodiscard]] KEYHOOK_INLINE deletion_receipt delete_key(const api_key& key, deletion_confirmation confirmation);

// K8 on a list: the keys without the one whose id is `id`. Errors:
// not_confirmed (path "confirmation"), or invalid_value (path "id") when no
// key has that id. The input list is not modified.
[[nodiscard]] KEYHOOK_INLINE result<std::vector<api_key>> try_delete_key(const std::vector<api_key>& keys,
                                                                         const key_id& id,
                                                                         deletion_confirmation confirmation);

[[nodiscard]] KEYHOOK_INLINE std::vector<api_key> delete_key(const std::vector<api_key>& keys, const key_id& id,
                                                             deletion_confirmation confirmation);

// --- Use -----------------------------------------------------------------------

// The record after a successful call at `now`: lastUsedAt = now (never moved
// backwards, so late reports of older calls do not hide newer ones).
[[nodiscard]] KEYHOOK_INLINE api_key record_use(const api_key& key, timestamp now);

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/lifecycle.ipp"
#endif
