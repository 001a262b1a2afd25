// keyhook: an in-memory index of API keys for authorizing calls (rule K10).
// Built once (that may allocate), then looked up without allocating.
//
// It stores no plaintext: each key is kept as its SipHash-2-4-128 digest under
// a random 128-bit key drawn when the index is made. A memory dump then shows
// no usable key; guessing a key from a digest is as hard as guessing the key
// (2^122 for a generated one). Lookup hashes the presented key once and probes
// an open-addressing table; digests are compared without early exit. The price:
// the index cannot give a key back, so a host that must send keys somewhere
// keeps them itself.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "keyhook/api_key.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/detail/siphash.hpp"
#include "keyhook/error.hpp"
#include "keyhook/permissions.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

class key_index {
public:
    // The `record` of a free slot.
    static constexpr std::uint32_t no_record = std::numeric_limits<std::uint32_t>::max();

    // What a lookup finds: the part of a record that authorization needs. It
    // lives in the hash table itself, so a check touches one slot.
    struct entry {
        detail::sip_digest digest;
        timestamp active_from{};
        timestamp expire_at{};
        std::uint32_t tenant = 0;          // position in the index's tenant names
        std::uint32_t permissions = 0;     // position in the index's merged permission sets
        std::uint32_t record = no_record;  // position in the index's ids
        bool revoked = false;

        // S1 from the indexed fields: Revoked wins, then the clock.
        [[nodiscard]] key_status status_at(timestamp now) const noexcept {
            return revoked ? key_status::revoked : clock_status(active_from, expire_at, now);
        }
    };

    // Draws the index's 16-byte hashing key from the host's secure source.
    template <class RandomSource, class = std::enable_if_t<is_random_source_v<std::remove_reference_t<RandomSource>>>>
    explicit key_index(RandomSource&& random) {
        std::array<unsigned char, 16> k{};
        random(k.data(), k.size());
        set_hashing_key(k);
    }
    // A fixed hashing key, for tests and for hosts that derive it themselves.
    explicit key_index(const std::array<unsigned char, 16>& hashing_key) { set_hashing_key(hashing_key); }

    [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
    [[nodiscard]] bool empty() const noexcept { return records_.empty(); }

    // Prepares for n keys in all, so that adding them does not rehash.
    void reserve(std::size_t n) {
        records_.reserve(n);
        by_id_.reserve(n);
        if (capacity_for(n) > slots_.size()) rehash(capacity_for(n));
    }

    // Adds `key` (the plaintext, which is hashed and not kept) for `record` of
    // `tenant`, with the permissions `policy` gives the record's groups (K9).
    // Errors: invalid_key (path "key") for an empty key or one already indexed;
    // invalid_value (path "id") for an id already indexed. Returns the number
    // of keys now in the index.
    [[nodiscard]] result<std::size_t> try_add(std::string_view tenant, const api_key& record, const secret& key,
                                              const permission_policy& policy) {
        if (key.empty()) return error{errc::invalid_key, "key", "an indexed key must not be empty"};
        if (records_.size() >= max_entries) return error{errc::limit_exceeded, "key", "the index is full"};
        if (by_id_.count(record.id))
            return error{errc::invalid_value, "id",
                         "a key with the id " + detail::quote_input(record.id.str()) + " is already indexed"};
        const auto digest = hash(key.reveal());
        if (find_slot(digest) != npos)
            return error{
                errc::invalid_key, "key",
                "the key of " + detail::quote_input(record.id.str()) + " is already indexed for another record"};
        if (capacity_for(records_.size() + 1) > slots_.size()) rehash(capacity_for(records_.size() + 1));
        entry e;
        e.digest = digest;
        e.record = static_cast<std::uint32_t>(records_.size());
        fill(e, tenant, record, policy);
        records_.push_back({record.id, digest});
        by_id_.emplace(record.id, e.record);
        place(e);
        return records_.size();
    }

    void add(std::string_view tenant, const api_key& record, const secret& key, const permission_policy& policy) {
        (void)try_add(tenant, record, key, policy).value();
    }

    // Refreshes the entry of record.id after a lifecycle change (deactivate,
    // update): tenant, status, period and permissions. False if not indexed.
    bool update(std::string_view tenant, const api_key& record, const permission_policy& policy) {
        const auto it = by_id_.find(record.id);
        if (it == by_id_.end()) return false;
        fill(slots_[find_slot(records_[it->second].digest)], tenant, record, policy);
        return true;
    }

    // Forgets the key of `id` (after a confirmed deletion). False if not indexed.
    bool remove(const key_id& id) {
        const auto it = by_id_.find(id);
        if (it == by_id_.end()) return false;
        const std::uint32_t position = it->second;
        by_id_.erase(it);
        erase_slot(find_slot(records_[position].digest));
        const auto last = static_cast<std::uint32_t>(records_.size() - 1);
        if (position != last) {
            // Move the last record into the hole and repoint its slot.
            records_[position] = std::move(records_[last]);
            slots_[find_slot(records_[position].digest)].record = position;
            by_id_[records_[position].id] = position;
        }
        records_.pop_back();
        return true;
    }

    // The entry whose key is `plaintext`, or nullptr. Allocates nothing. The
    // pointer stays valid until the index is next changed.
    [[nodiscard]] const entry* find(std::string_view plaintext) const noexcept {
        if (records_.empty()) return nullptr;
        const auto s = find_slot(hash(plaintext));
        return s == npos ? nullptr : &slots_[s];
    }

    [[nodiscard]] const entry* find_id(const key_id& id) const {
        const auto it = by_id_.find(id);
        return it == by_id_.end() ? nullptr : &slots_[find_slot(records_[it->second].digest)];
    }

    // The id of an entry's record; the reference stays valid until the index is next changed.
    [[nodiscard]] const key_id& id_of(const entry& e) const noexcept { return records_[e.record].id; }
    [[nodiscard]] std::string_view tenant_of(const entry& e) const noexcept { return tenants_[e.tenant]; }
    [[nodiscard]] const key_permissions& permissions_of(const entry& e) const noexcept {
        return permission_sets_[e.permissions];
    }

private:
    static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
    static constexpr std::size_t max_entries = std::numeric_limits<std::uint32_t>::max() - 1;

    // What only changes of the index need (not checks).
    struct cold_record {
        key_id id;
        detail::sip_digest digest;
    };

    // Load at most one half keeps probe runs short, also for unknown keys.
    static std::size_t capacity_for(std::size_t n) {
        std::size_t c = 16;
        while (c < 2 * n) c *= 2;
        return c;
    }

    void set_hashing_key(const std::array<unsigned char, 16>& k) noexcept {
        k0_ = detail::sip::load_le(k.data(), 8);
        k1_ = detail::sip::load_le(k.data() + 8, 8);
    }

    [[nodiscard]] detail::sip_digest hash(std::string_view s) const noexcept { return detail::siphash128(k0_, k1_, s); }

    [[nodiscard]] std::size_t home(const detail::sip_digest& d) const noexcept {
        return static_cast<std::size_t>(d.lo) & (slots_.size() - 1);
    }

    // The slot holding `d`, or npos. Every occupied slot on the probe run is
    // compared in full, without early exit inside a comparison.
    [[nodiscard]] std::size_t find_slot(const detail::sip_digest& d) const noexcept {
        if (slots_.empty()) return npos;
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t i = home(d);; i = (i + 1) & mask) {
            const entry& s = slots_[i];
            if (s.record == no_record) return npos;
            if (detail::digest_equal(s.digest, d)) return i;
        }
    }

    void place(const entry& e) {
        const std::size_t mask = slots_.size() - 1;
        std::size_t i = home(e.digest);
        while (slots_[i].record != no_record) i = (i + 1) & mask;
        slots_[i] = e;
    }

    void rehash(std::size_t capacity) {
        std::vector<entry> old(capacity);
        old.swap(slots_);
        for (const auto& e : old)
            if (e.record != no_record) place(e);
    }

    // Linear probing's backward-shift deletion: no tombstones, so lookups of
    // unknown keys stay short however often keys are removed.
    void erase_slot(std::size_t hole) {
        const std::size_t mask = slots_.size() - 1;
        std::size_t j = hole;
        for (;;) {
            j = (j + 1) & mask;
            if (slots_[j].record == no_record) break;
            const std::size_t h = home(slots_[j].digest);
            // Move slot j back into the hole unless its home lies cyclically in (hole, j].
            const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
            if (!stays) {
                slots_[hole] = slots_[j];
                hole = j;
            }
        }
        slots_[hole] = entry{};
    }

    void fill(entry& e, std::string_view tenant, const api_key& record, const permission_policy& policy) {
        e.tenant = intern_tenant(tenant);
        e.permissions = intern_permissions(merge_permissions(record.groups, policy));
        e.revoked = record.status == key_status::revoked;
        e.active_from = record.active_from;
        e.expire_at = record.expire_at;
    }

    std::uint32_t intern_tenant(std::string_view tenant) {
        const auto it = tenant_ids_.find(tenant);
        if (it != tenant_ids_.end()) return it->second;
        const auto id = static_cast<std::uint32_t>(tenants_.size());
        tenants_.emplace_back(tenant);
        tenant_ids_.emplace(std::string(tenant), id);
        return id;
    }

    // Keys with the same groups share one merged set.
    std::uint32_t intern_permissions(key_permissions p) {
        const auto it = permission_ids_.find(p);
        if (it != permission_ids_.end()) return it->second;
        const auto id = static_cast<std::uint32_t>(permission_sets_.size());
        permission_sets_.push_back(p);
        permission_ids_.emplace(std::move(p), id);
        return id;
    }

    std::uint64_t k0_ = 0;
    std::uint64_t k1_ = 0;
    std::vector<entry> slots_;
    std::vector<cold_record> records_;
    std::unordered_map<key_id, std::uint32_t> by_id_;
    std::vector<std::string> tenants_;
    std::map<std::string, std::uint32_t, std::less<>> tenant_ids_;
    std::vector<key_permissions> permission_sets_;
    std::map<key_permissions, std::uint32_t> permission_ids_;
};

}  // namespace keyhook
