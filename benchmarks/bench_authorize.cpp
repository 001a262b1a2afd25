// Authorization (K10) against an index of 1,000,000 keys, compared with one
// std::unordered_map<std::string, ...>::find of the same key. Heap allocations
// and the bytes each structure holds are counted by the replaced global
// operator new of tests/support/counting_allocator.hpp (this executable only).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <benchmark/benchmark.h>

#include "index_fixture.hpp"
#include "keyhook/key_index.hpp"

namespace {

using keyhook_bench::index_size;
using keyhook_bench::probe_sets;
using keyhook_bench::tenant_count;
using keyhook_bench::tenant_name;

// What the baseline map holds per key: about what a host would keep.
struct plain_entry {
    std::uint32_t tenant;
    std::int64_t expire_at;
};

struct fixture {
    std::vector<std::string> keys;    // the plaintexts, index_size of them
    std::vector<std::size_t> probes;  // positions in `keys`, in a random order
    // The probed keys copied in probe order, as a server holds the header value
    // of the call in hand: reading it must not cost a cache miss of its own.
    std::vector<std::string> probe_keys;
    keyhook::key_index index{std::array<unsigned char, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};
    std::unordered_map<std::string, plain_entry> map;
    keyhook::timestamp now = keyhook::parse_timestamp("2025-06-01T12:00:00Z");
    // Heap bytes each structure holds once built, per key (exact counts).
    double index_bytes_per_key = 0;
    double map_bytes_per_key = 0;

    fixture() {
        keyhook_bench::rng r(keyhook_bench::default_seed);
        std::vector<std::string> ids;
        keyhook_bench::make_ids_and_keys(r, ids, keys);
        keyhook::permission_policy policy;
        policy.groups["user:pf"].access[keyhook::resource::all()] = keyhook::access_level::execute;
        policy.groups["user:pricing"].access[keyhook::resource::folder("Pricing")] = keyhook::access_level::write;

        // Each structure is built on its own, so that neither's blocks are
        // interleaved with the other's (that would slow the map's lookups and
        // flatter the ratio), and what it holds afterwards is counted alone.
        {
            const counting_allocator::scope heap;
            {
                keyhook::api_key record = keyhook_bench::index_record();
                index.reserve(index_size);
                for (std::size_t i = 0; i < index_size; ++i) {
                    record.id = keyhook::key_id(ids[i]);
                    record.groups = i % 3 == 0 ? std::vector<std::string>{"user:pf", "user:pricing"}
                                               : std::vector<std::string>{"user:pf"};
                    index.add(tenant_name(i), record, keyhook::secret(keys[i]), policy);
                }
            }
            index_bytes_per_key = static_cast<double>(heap.stop().held) / index_size;
        }
        {
            const counting_allocator::scope heap;
            const auto expire_at = keyhook::parse_timestamp("2030-01-01T00:00:00Z").time_since_epoch().count();
            map.reserve(index_size);
            for (std::size_t i = 0; i < index_size; ++i)
                map.emplace(keys[i], plain_entry{static_cast<std::uint32_t>(i % tenant_count), expire_at});
            map_bytes_per_key = static_cast<double>(heap.stop().held) / index_size;
        }
        keyhook_bench::make_probes(r, keys, probes, probe_keys);
    }
};

fixture& shared() {
    static fixture f;
    return f;
}

void BM_authorize_baseline_unordered_map_find(benchmark::State& state) {
    auto& f = shared();
    const auto mask = static_cast<std::size_t>(state.range(0)) - 1;
    std::size_t i = 0;
    for (auto _ : state) {
        const auto it = f.map.find(f.probe_keys[i]);
        benchmark::DoNotOptimize(it);
        i = (i + 1) & mask;
    }
    state.counters["heap_bytes_per_key"] = f.map_bytes_per_key;
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_authorize_baseline_unordered_map_find)->Apply(probe_sets);

// The full K10 check of a valid call (every step runs): the same keys, in the
// same order, passed as the header values a server would hold.
void BM_authorize_1M_keys(benchmark::State& state) { keyhook_bench::time_authorize(state, shared()); }
BENCHMARK(BM_authorize_1M_keys)->Apply(probe_sets);

// The same check from the call's headers (found by case-insensitive name).
void BM_authorize_1M_keys_from_headers(benchmark::State& state) {
    auto& f = shared();
    const auto family = keyhook::api_family::execute();
    const auto resource = keyhook::resource_ref::in_folder("Pricing");
    const auto count = static_cast<std::size_t>(state.range(0));
    std::vector<keyhook::http_headers> calls;
    calls.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        const auto k = f.probes[i];
        calls.push_back({{"Accept", "application/json", false},
                         {"X-Synthetic-Key", f.probe_keys[i], true},
                         {"X-Tenant-Name", tenant_name(k), false}});
    }
    std::size_t i = 0;
    const counting_allocator::scope heap;
    for (auto _ : state) {
        auto a = keyhook::authorize(f.index, calls[i], family, resource, keyhook::access_level::read, f.now);
        benchmark::DoNotOptimize(a);
        i = (i + 1) & (count - 1);
    }
    state.counters["allocs_per_check"] =
        static_cast<double>(heap.stop().allocations) / static_cast<double>(state.iterations());
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_authorize_1M_keys_from_headers)->Apply(probe_sets);

}  // namespace
