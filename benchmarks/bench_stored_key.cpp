// K11: authorization from stored digests against its floor, at 1,000,000 keys:
// one HMAC-SHA-256 of the presented key with a prepared OpenSSL context plus an
// unordered_map::find on the 32-byte digest (bare_hmac of baselines_crypto.hpp).
// Heap is counted by the replaced operator new of counting_allocator.hpp (this
// executable only), for the index and for a map from the digest to the same
// entry (what the index keeps per key: id, tenant, permissions, period, status).
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include <benchmark/benchmark.h>

#include "baselines_crypto.hpp"
#include "index_fixture.hpp"
#include "keyhook/crypto/stored_key.hpp"

namespace {

using keyhook_bench::index_size;
using keyhook_bench::probe_sets;
using keyhook_bench::tenant_count;

struct digest_hash {
    std::size_t operator()(const keyhook::key_fingerprint& d) const noexcept {
        std::size_t h = 0;
        std::memcpy(&h, d.data(), sizeof h);  // HMAC output: uniform already
        return h;
    }
};
// The same entry as the index keeps (key_index::entry and the id).
struct map_entry {
    std::string id;
    std::uint32_t tenant = 0;
    std::uint32_t permissions = 0;
    std::int64_t active_from = 0;
    std::int64_t expire_at = 0;
    bool revoked = false;
};

struct fixture {
    std::string pepper = std::string(32, 'p');
    keyhook::crypto::pepper_set peppers;
    std::vector<std::string> probe_keys;
    std::vector<std::size_t> probes;
    keyhook::key_index index{std::array<unsigned char, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};
    std::unordered_map<keyhook::key_fingerprint, map_entry, digest_hash> map;
    keyhook::timestamp now = keyhook::parse_timestamp("2025-06-01T12:00:00Z");
    double index_bytes_per_key = 0;
    double map_bytes_per_key = 0;

    fixture() {
        peppers.add("bench", keyhook::secret(pepper));
        keyhook_bench::rng r(keyhook_bench::default_seed);
        std::vector<std::string> ids, keys;
        keyhook_bench::make_ids_and_keys(r, ids, keys);
        std::vector<keyhook::crypto::stored_digest> stored;
        stored.reserve(index_size);
        for (const auto& key : keys)
            stored.push_back(keyhook::crypto::try_compute_stored_digest(peppers, keyhook::secret(key)).value());
        keyhook::permission_policy policy;
        policy.groups["user:pf"].access[keyhook::resource::all()] = keyhook::access_level::execute;
        keyhook::api_key record = keyhook_bench::index_record();
        record.groups = {"user:pf"};
        {
            const counting_allocator::scope heap;
            index.reserve(index_size);
            for (std::size_t i = 0; i < index_size; ++i) {
                record.id = keyhook::key_id(ids[i]);
                (void)keyhook::crypto::try_add_stored(index, peppers, keyhook_bench::tenant_name(i), record, stored[i],
                                                      policy)
                    .value();
            }
            index_bytes_per_key = static_cast<double>(heap.stop().held) / index_size;
        }
        {
            const counting_allocator::scope heap;
            map.reserve(index_size);
            for (std::size_t i = 0; i < index_size; ++i)
                map.emplace(stored[i].bytes(),
                            map_entry{ids[i], static_cast<std::uint32_t>(i % tenant_count), 0, 1, 2, false});
            map_bytes_per_key = static_cast<double>(heap.stop().held) / index_size;
        }
        keyhook_bench::make_probes(r, keys, probes, probe_keys);
    }
};

fixture& shared() {
    static fixture f;
    return f;
}

// The floor: HMAC-SHA-256 with a keyed context (restarted, not re-keyed) and a find.
void BM_stored_floor_hmac_map_find(benchmark::State& state) {
    auto& f = shared();
    keyhook_bench::bare_hmac h(f.pepper);
    h.set_key();
    const auto mask = static_cast<std::size_t>(state.range(0)) - 1;
    std::size_t i = 0;
    keyhook::key_fingerprint d{};
    for (auto _ : state) {
        const auto& key = f.probe_keys[i];
        h.restart();
        EVP_MAC_update(h.ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size());
        std::size_t n = 0;
        EVP_MAC_final(h.ctx, d.data(), &n, d.size());
        const auto it = f.map.find(d);
        benchmark::DoNotOptimize(it);
        i = (i + 1) & mask;
    }
    state.counters["heap_bytes_per_key"] = f.map_bytes_per_key;
}
BENCHMARK(BM_stored_floor_hmac_map_find)->Apply(probe_sets);

// The full K10 check of a valid call on an index built from stored digests.
void BM_authorize_stored_1M_keys(benchmark::State& state) { keyhook_bench::time_authorize(state, shared()); }
BENCHMARK(BM_authorize_stored_1M_keys)->Apply(probe_sets);

}  // namespace
