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

#include "../tests/support/counting_allocator.hpp"
#include "baselines_crypto.hpp"
#include "generator.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/crypto/stored_key.hpp"

namespace {

constexpr std::size_t index_size = 1000000;
constexpr std::size_t tenant_count = 100;
constexpr std::size_t probe_count = 1 << 16;

std::string tenant_name(std::size_t i) { return "tenant-" + std::to_string(i % tenant_count); }

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
        std::vector<keyhook::crypto::stored_digest> stored;
        ids.reserve(index_size);
        keys.reserve(index_size);
        stored.reserve(index_size);
        for (std::size_t i = 0; i < index_size; ++i) {
            std::string id, key;
            keyhook_bench::append_uuid(id, r);
            keyhook_bench::append_uuid(key, r);
            stored.push_back(keyhook::crypto::try_compute_stored_digest(peppers, keyhook::secret(key)).value());
            ids.push_back(std::move(id));
            keys.push_back(std::move(key));
        }
        keyhook::permission_policy policy;
        policy.groups["user:pf"].access[keyhook::resource::all()] = keyhook::access_level::execute;
        keyhook::api_key record;
        record.name = "benchmark key";
        record.status = keyhook::key_status::active;
        record.active_from = keyhook::parse_timestamp("2024-01-01T00:00:00Z");
        record.expire_at = keyhook::parse_timestamp("2030-01-01T00:00:00Z");
        record.groups = {"user:pf"};
        {
            const counting_allocator::scope heap;
            index.reserve(index_size);
            for (std::size_t i = 0; i < index_size; ++i) {
                record.id = keyhook::key_id(ids[i]);
                (void)keyhook::crypto::try_add_stored(index, peppers, tenant_name(i), record, stored[i], policy)
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
        probes.reserve(probe_count);
        for (std::size_t i = 0; i < probe_count; ++i) probes.push_back(r.below(index_size));
        for (auto k : probes) probe_keys.push_back(keys[k]);
    }
};

fixture& shared() {
    static fixture f;
    return f;
}

void probe_sets(benchmark::internal::Benchmark* b) { b->Arg(probe_count)->Arg(1024); }

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
void BM_authorize_stored_1M_keys(benchmark::State& state) {
    auto& f = shared();
    const auto family = keyhook::api_family::execute();
    const auto resource = keyhook::resource_ref::of_service("Pricing", "Rate Calculator");
    std::vector<std::string> tenants;
    for (std::size_t t = 0; t < tenant_count; ++t) tenants.push_back(tenant_name(t));
    for (std::size_t i = 0; i < 256; ++i)
        if (!keyhook::authorize(f.index, f.probe_keys[i], tenants[f.probes[i] % tenant_count], family, resource,
                                keyhook::access_level::execute, f.now)) {
            state.SkipWithError("a probe key was not authorized");
            return;
        }
    const auto mask = static_cast<std::size_t>(state.range(0)) - 1;
    std::size_t i = 0;
    const counting_allocator::scope heap;
    for (auto _ : state) {
        auto a = keyhook::authorize(f.index, f.probe_keys[i], tenants[f.probes[i] % tenant_count], family, resource,
                                    keyhook::access_level::execute, f.now);
        benchmark::DoNotOptimize(a);
        i = (i + 1) & mask;
    }
    state.counters["allocs_per_check"] =
        static_cast<double>(heap.stop().allocations) / static_cast<double>(state.iterations());
    state.counters["heap_bytes_per_key"] = f.index_bytes_per_key;
}
BENCHMARK(BM_authorize_stored_1M_keys)->Apply(probe_sets);

}  // namespace
