// keyhook: an in-memory index of API keys for authorizing calls (rule K10).
// Built once (that may allocate), then looked up without allocating.
//
// It stores no plaintext: each key is kept as its SipHash-1-3-128 digest under
// a random 128-bit key drawn when the index is made. A memory dump then shows
// no usable key; guessing a key from a digest is as hard as guessing the key
// (2^122 for a generated one). Why 1-3 and not 2-4: docs/lifecycle.md. Lookup hashes the presented key once and probes
// an open-addressing table; digests are compared without early exit. The price:
// the index cannot give a key back, so a host that must send keys somewhere
// keeps them itself.
//
// Memory (K10, the key index at the memory of a map): per key one 48-byte entry in a dense array, the
// id's bytes once (in shared chunks), and a 32-bit slot in each of two tables
// at most half full (by digest, by id): about 102 bytes a key with UUID ids,
// less than an unordered_map<std::string, small value> of the same keys.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/api_key.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/detail/siphash.hpp"
#include "keyhook/key_digester.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/permissions.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// A class template only so that its member functions are compiled where they
// are called (a deferred definition, config.hpp), not in every translation
// unit that includes the header; programs name it key_index.
template <class D = void>
class basic_key_index {
public:
    // What a lookup finds: the part of a record that authorization needs, in
    // one 48-byte entry, so a check reads one entry after its table slot.
    class entry {
    public:
        detail::sip_digest digest;
        timestamp active_from{};
        timestamp expire_at{};
        std::uint32_t tenant = 0;       // position in the index's tenant names
        std::uint32_t permissions = 0;  // position in the index's merged permission sets
        bool revoked = false;

        // S1 from the indexed fields: Revoked wins, then the clock.
        [[nodiscard]] key_status status_at(timestamp now) const noexcept {
            return revoked ? key_status::revoked : clock_status(active_from, expire_at, now);
        }

    private:
        friend class basic_key_index;
        // How the key was indexed: 0 from its plaintext, else the digester's scheme.
        std::uint8_t scheme_ = 0;
        // Where the id is: a chunk of the index's id bytes, and the offset in it.
        std::uint16_t id_offset_ = 0;
        std::uint32_t id_chunk_ = 0;
    };
    static_assert(sizeof(entry) <= 48, "an entry is what a check reads, and the id's place");

    // Draws the index's 16-byte hashing key from the host's secure source.
    template <class RandomSource, class = std::enable_if_t<is_random_source_v<std::remove_reference_t<RandomSource>>>>
    explicit basic_key_index(RandomSource&& random) {
        std::array<unsigned char, 16> k{};
        random(k.data(), k.size());
        set_hashing_key(k);
    }
    // A fixed hashing key, for tests and for hosts that derive it themselves.
    KEYHOOK_INLINE explicit basic_key_index(const std::array<unsigned char, 16>& hashing_key);

    // Copies are independent; a moved-from index is empty (same hashing key)
    // and keeps every function's contract (moved-from contract).
    basic_key_index(const basic_key_index&) = default;
    basic_key_index& operator=(const basic_key_index&) = default;
    KEYHOOK_INLINE basic_key_index(basic_key_index&& other) noexcept;
    KEYHOOK_INLINE basic_key_index& operator=(basic_key_index&& other) noexcept;
    KEYHOOK_INLINE void swap(basic_key_index& other) noexcept;
    friend void swap(basic_key_index& a, basic_key_index& b) noexcept { a.swap(b); }

    [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
    [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }

    // Prepares for n keys in all, so that adding them neither rehashes nor
    // moves the entries.
    KEYHOOK_INLINE void reserve(std::size_t n);

    // Adds `key` (the plaintext, which is hashed and not kept) for `record` of
    // `tenant`, with the permissions `policy` gives the record's groups (K9).
    // Errors: invalid_key (path "key") for an empty key or one already indexed;
    // invalid_value (path "id") for an id already indexed. Returns the number
    // of keys now in the index. Amortized constant time: the storage grows
    // geometrically, as a vector's does under push_back.
    [[nodiscard]] KEYHOOK_INLINE result<std::size_t> try_add(std::string_view tenant, const api_key& record,
                                                             const secret& key, const permission_policy& policy);

    KEYHOOK_INLINE void add(std::string_view tenant, const api_key& record, const secret& key,
                            const permission_policy& policy);

    // K11: adds `record` by the digest its key is stored as (the key itself is
    // not at hand), under `scheme` of `digester`, which then digests every
    // presented key (see find). keyhook::crypto::try_add_stored is the usual
    // caller. Errors as try_add, and invalid_value (path "storedKey") for
    // scheme 0 or a digester other than the one the index already uses.
    [[nodiscard]] KEYHOOK_INLINE result<std::size_t> try_add_digest(std::string_view tenant, const api_key& record,
                                                                    const key_fingerprint& digest, std::uint8_t scheme,
                                                                    std::shared_ptr<const key_digester> digester,
                                                                    const permission_policy& policy);

    // Refreshes the entry of record.id after a lifecycle change (deactivate,
    // update): tenant, status, period and permissions. False if not indexed.
    KEYHOOK_INLINE bool update(std::string_view tenant, const api_key& record, const permission_policy& policy);

    // Forgets the key of `id` (after a confirmed deletion). False if not indexed.
    KEYHOOK_INLINE bool remove(const key_id& id);

    // The entry whose key is `plaintext`, or nullptr. Allocates nothing. The
    // pointer stays valid until the index is next changed. An index holding
    // stored digests (K11) digests `plaintext` once per scheme in use.
    [[nodiscard]] const entry* find(std::string_view plaintext) const noexcept {
        if (entries_.empty()) return nullptr;
        if (digester_) return find_digested(plaintext);
        const auto s = find_key_slot(hash(plaintext));
        return s == npos ? nullptr : &entries_[by_key_[s] & position_mask];
    }

    // K11: whether the key of `e` was indexed from a stored digest that should
    // be stored again under the current pepper (legacy form, older pepper).
    [[nodiscard]] bool digest_outdated(const entry& e) const noexcept {
        return e.scheme_ != 0 && digester_ && digester_->outdated(e.scheme_);
    }

    [[nodiscard]] const entry* find_id(const key_id& id) const noexcept {
        const auto s = find_id_slot(id.str());
        return s == npos ? nullptr : &entries_[by_id_[s] & position_mask];
    }

    // The id of an entry's record; the view stays valid until the index is next changed.
    [[nodiscard]] std::string_view id_of(const entry& e) const noexcept {
        const auto* p = reinterpret_cast<const unsigned char*>(ids_.chunks[e.id_chunk_].data()) + e.id_offset_;
        std::size_t n = 0;
        for (int shift = 0;; shift += 7) {
            n |= static_cast<std::size_t>(*p & 0x7f) << shift;
            if (!(*p++ & 0x80)) break;
        }
        return {reinterpret_cast<const char*>(p), n};
    }
    [[nodiscard]] std::string_view tenant_of(const entry& e) const noexcept { return tenants_[e.tenant]; }
    // tenant_of(e) == tenant, without a call to memcmp for names of up to 16
    // bytes (tenant names are not secret: an early exit tells nothing).
    [[nodiscard]] bool tenant_is(const entry& e, std::string_view tenant) const noexcept {
        return same_text(tenants_[e.tenant], tenant);
    }
    [[nodiscard]] const key_permissions& permissions_of(const entry& e) const noexcept {
        return permission_sets_[e.permissions];
    }
    // permissions_of(e).allows(family), answered from a bit set: each family
    // name that any merged set holds gets a number (up to 64 of them), and each
    // set the bits of its families, so a check compares the name with the few
    // known ones (by length first) instead of searching a tree of strings.
    [[nodiscard]] bool allows(const entry& e, std::string_view family) const noexcept {
        if (family_overflow_) return permission_sets_[e.permissions].allows(family);
        for (std::size_t i = 0; i < family_names_.size(); ++i)
            if (same_text(family_names_[i], family)) return (family_bits_[e.permissions] >> i) & 1U;
        return false;
    }

private:
    static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
    // A slot is 32 bits: the entry's position (27 bits) and 5 more bits of its
    // hash, so a probe passes a slot of another key without reading that
    // key's entry (a cache miss) in 31 cases of 32. All ones: a free slot.
    static constexpr unsigned position_bits = 27;
    static constexpr std::uint32_t position_mask = (std::uint32_t{1} << position_bits) - 1;
    static constexpr std::uint32_t free_slot = std::numeric_limits<std::uint32_t>::max();
    static constexpr std::size_t max_entries = position_mask;  // 134,217,727 keys
    // Id chunks grow from 256 bytes to 64 KiB (what a 16-bit offset reaches), so
    // a small index stays small and a large one wastes at most an id a chunk.
    static constexpr std::size_t first_chunk = 256;
    static constexpr std::size_t max_chunk = std::size_t{1} << 16;

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

    [[nodiscard]] std::array<unsigned char, 16> hashing_key() const noexcept {
        std::array<unsigned char, 16> k{};
        for (std::size_t i = 0; i < 8; ++i) {
            k[i] = static_cast<unsigned char>(k0_ >> (8 * i));
            k[8 + i] = static_cast<unsigned char>(k1_ >> (8 * i));
        }
        return k;
    }

    [[nodiscard]] detail::sip_digest hash(std::string_view s) const noexcept {
        return detail::siphash13_128(k0_, k1_, s);
    }
    // A stored digest is hashed again under the index's own key: its table
    // place and the entry then depend on a key drawn by this process only.
    // Under a key of its own (k0 tweaked), so that presenting a digest's 32
    // bytes as a key never finds the digest's entry (K11: only the key works).
    [[nodiscard]] detail::sip_digest hash(const key_fingerprint& f) const noexcept {
        return detail::siphash13_128(k0_ ^ digest_domain, k1_,
                                     std::string_view(reinterpret_cast<const char*>(f.data()), f.size()));
    }
    static constexpr std::uint64_t digest_domain = 0x6b68316469676573ULL;  // "kh1diges"

    KEYHOOK_INLINE const entry* find_digested(std::string_view plaintext) const noexcept;
    // try_add's and try_add_digest's common part, once the key's digest is known.
    KEYHOOK_INLINE result<std::size_t> insert(std::string_view tenant, const api_key& record,
                                              const detail::sip_digest& digest, std::uint8_t scheme,
                                              const permission_policy& policy);

    // Equality of two short public names: the length, then at most two
    // (overlapping) loads a side up to 16 bytes, memcmp beyond.
    static bool same_text(std::string_view a, std::string_view b) noexcept {
        const std::size_t n = a.size();
        if (n != b.size()) return false;
        const char* p = a.data();
        const char* q = b.data();
        if (n > 16) return std::memcmp(p, q, n) == 0;
        if (n >= 8)
            return ((load<std::uint64_t>(p) ^ load<std::uint64_t>(q)) |
                    (load<std::uint64_t>(p + n - 8) ^ load<std::uint64_t>(q + n - 8))) == 0;
        if (n >= 4)
            return ((load<std::uint32_t>(p) ^ load<std::uint32_t>(q)) |
                    (load<std::uint32_t>(p + n - 4) ^ load<std::uint32_t>(q + n - 4))) == 0;
        return n == 0 || (p[0] == q[0] && p[n / 2] == q[n / 2] && p[n - 1] == q[n - 1]);
    }
    template <class Word>
    static Word load(const char* p) noexcept {
        Word w;
        std::memcpy(&w, p, sizeof w);
        return w;
    }

    // Where a probe starts, and the tag bits its slot carries.
    struct probe {
        std::size_t home;
        std::uint32_t tag;
    };
    [[nodiscard]] probe probe_for(const detail::sip_digest& d, std::size_t slots) const noexcept {
        return {static_cast<std::size_t>(d.lo) & (slots - 1), static_cast<std::uint32_t>(d.hi >> 59) << position_bits};
    }
    [[nodiscard]] probe key_probe(const detail::sip_digest& d) const noexcept { return probe_for(d, by_key_.size()); }
    // Ids are hashed under another key than the digests: crafted ids cannot
    // pile up in the table, and their slots say nothing about the keys'.
    [[nodiscard]] probe id_probe(std::string_view id) const noexcept {
        return probe_for(detail::siphash13_128(k1_, k0_ ^ 0x6964, id), by_id_.size());
    }

    // The slot holding `d`, or npos. The entry of every slot on the probe run
    // whose tag matches is compared in full, without early exit inside the
    // comparison. The probe's length and the tags depend on the digests, which
    // are keyed: they tell nothing about a key's characters.
    [[nodiscard]] KEYHOOK_INLINE std::size_t find_key_slot(const detail::sip_digest& d) const noexcept;
    [[nodiscard]] KEYHOOK_INLINE std::size_t find_id_slot(std::string_view id) const noexcept;
    // The one probe loop of both: the slot on `table`'s run from `at` whose tag
    // matches and whose entry `is_it` accepts, or npos at the first free slot.
    template <class Match>
    [[nodiscard]] std::size_t find_slot(const std::vector<std::uint32_t>& table, probe at, Match is_it) const noexcept;

    static KEYHOOK_INLINE void place(std::vector<std::uint32_t>& table, probe at, std::uint32_t position) noexcept;

    // Changes the slot holding `from` (on the probe run from `home`) to `to`.
    static KEYHOOK_INLINE void repoint(std::vector<std::uint32_t>& table, std::size_t home, std::uint32_t from,
                                       std::uint32_t to) noexcept;

    // Both tables at `capacity` slots, filled again from the entries.
    KEYHOOK_INLINE void rehash(std::size_t capacity);

    // Linear probing's backward-shift deletion: no tombstones, so lookups of
    // unknown keys stay short however often keys are removed.
    template <class Home>
    static void erase_slot(std::vector<std::uint32_t>& table, std::size_t hole, Home home_of);

    // After removals: the tables shrink below one eighth full, the entries
    // below a quarter, and the id bytes are compacted once the removed ones
    // outweigh the live ones. Each is linear and paid for by the removals
    // since the last time, so memory stays in proportion to the keys (J3).
    // Shrinking is optional: if memory runs out meanwhile, it is skipped.
    KEYHOOK_INLINE void shrink() noexcept;

    // Copies the live ids into fresh chunks; the entries are repointed only
    // once every copy has succeeded.
    KEYHOOK_INLINE void compact_ids();

    KEYHOOK_INLINE void store_id(entry& e, std::string_view id);

    // Sets the entry's fields from the record; `replacing`: e already holds a
    // tenant and a permission set, released once the new ones are held.
    KEYHOOK_INLINE void fill(entry& e, std::string_view tenant, const api_key& record, const permission_policy& policy,
                             bool replacing);

    KEYHOOK_INLINE std::uint32_t intern_tenant(std::string_view tenant);

    // Keys with the same groups share one merged set.
    KEYHOOK_INLINE std::uint32_t intern_permissions(key_permissions p);

    // Drop one use of a tenant name / merged set; the last use frees it, and
    // its place is reused (memory follows the live entries).
    KEYHOOK_INLINE void release_tenant(std::uint32_t t) noexcept;
    KEYHOOK_INLINE void release_permissions(std::uint32_t p) noexcept;
    KEYHOOK_INLINE void release_entry(const entry& e) noexcept;

    // Bytes an id of n bytes takes in a chunk: its length (7 bits a byte) and itself.
    static std::size_t stored_size(std::size_t n) noexcept {
        std::size_t size = n + 1;
        for (; n >= 0x80; n >>= 7) ++size;
        return size;
    }

    // The ids' bytes, each once: its length, then the id, in chunks of
    // growing size. An id longer than a chunk gets a chunk of its own.
    struct id_chunks {
        id_chunks() = default;
        id_chunks(const id_chunks&) = default;
        id_chunks& operator=(const id_chunks&) = default;
        // A moved-from set of chunks is empty, `open` included (moved-from
        // contract: keeping it let the next store write into a chunk gone).
        id_chunks(id_chunks&& o) noexcept
            : chunks(std::move(o.chunks)),
              open(std::exchange(o.open, npos)),
              used(std::exchange(o.used, 0)),
              live(std::exchange(o.live, 0)),
              dead(std::exchange(o.dead, 0)) {
            o.chunks.clear();
        }
        id_chunks& operator=(id_chunks&& o) noexcept {
            if (this != &o) {
                chunks = std::move(o.chunks);
                o.chunks.clear();
                open = std::exchange(o.open, npos);
                used = std::exchange(o.used, 0);
                live = std::exchange(o.live, 0);
                dead = std::exchange(o.dead, 0);
            }
            return *this;
        }

        std::vector<std::vector<char>> chunks;
        std::size_t open = npos;  // the chunk being filled
        std::size_t used = 0;     // bytes of it in use
        std::size_t live = 0;     // bytes of the indexed ids
        std::size_t dead = 0;     // bytes of removed ids, still in the chunks

        KEYHOOK_INLINE std::pair<std::uint32_t, std::uint16_t> store(std::string_view id);
    };

    std::uint64_t k0_ = 0;
    std::uint64_t k1_ = 0;
    std::vector<entry> entries_;
    std::vector<std::uint32_t> by_key_;  // positions in entries_, by digest
    std::vector<std::uint32_t> by_id_;   // positions in entries_, by id
    id_chunks ids_;
    std::vector<std::string> tenants_;
    std::map<std::string, std::uint32_t, std::less<>> tenant_ids_;
    std::vector<std::uint32_t> tenant_uses_;   // per tenant name: entries naming it
    std::vector<std::uint32_t> free_tenants_;  // places of released names
    std::vector<key_permissions> permission_sets_;
    std::map<key_permissions, std::uint32_t> permission_ids_;
    std::vector<std::uint32_t> permission_uses_;
    std::vector<std::uint32_t> free_permissions_;
    // K11: what digests presented keys (null for an index built from keys
    // only), and per scheme the entries indexed under it (0: from plaintext).
    std::shared_ptr<const key_digester> digester_;
    std::vector<std::uint32_t> scheme_uses_;
    std::vector<std::uint64_t> family_bits_;  // per merged set: its families' numbers
    std::vector<std::string> family_names_;   // the numbered family names, at most 64
    bool family_overflow_ = false;            // a 65th name: allows() falls back to the sets
};

using key_index = basic_key_index<>;

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/key_index.ipp"
#endif
