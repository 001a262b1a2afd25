// What the two authorization benchmarks share (bench_authorize.cpp: an index
// built from plaintext keys; bench_stored_key.cpp: one built from stored
// digests): 1,000,000 keys over 100 tenants, the probes, and the timed check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "../tests/support/counting_allocator.hpp"
#include "generator.hpp"
#include "keyhook/authorization.hpp"

namespace keyhook_bench {

inline constexpr std::size_t index_size = 1000000;
inline constexpr std::size_t tenant_count = 100;
inline constexpr std::size_t probe_count = 1 << 16;

inline std::string tenant_name(std::size_t i) { return "tenant-" + std::to_string(i % tenant_count); }

// index_size random ids and keys (UUID text), in that order from `r`.
inline void make_ids_and_keys(rng& r, std::vector<std::string>& ids, std::vector<std::string>& keys) {
    ids.reserve(index_size);
    keys.reserve(index_size);
    for (std::size_t i = 0; i < index_size; ++i) {
        std::string id, key;
        append_uuid(id, r);
        append_uuid(key, r);
        ids.push_back(std::move(id));
        keys.push_back(std::move(key));
    }
}

// The record every indexed key shares but for its id and groups.
inline keyhook::api_key index_record() {
    keyhook::api_key record;
    record.name = "benchmark key";
    record.status = keyhook::key_status::active;
    record.active_from = keyhook::parse_timestamp("2024-01-01T00:00:00Z");
    record.expire_at = keyhook::parse_timestamp("2030-01-01T00:00:00Z");
    return record;
}

// probe_count positions in `keys`, in a random order, and the probed keys
// copied in that order, as a server holds the header value of the call in
// hand: reading it must not cost a cache miss of its own.
inline void make_probes(rng& r, const std::vector<std::string>& keys, std::vector<std::size_t>& probes,
                        std::vector<std::string>& probe_keys) {
    probes.reserve(probe_count);
    for (std::size_t i = 0; i < probe_count; ++i) probes.push_back(r.below(index_size));
    probe_keys.reserve(probe_count);
    for (auto k : probes) probe_keys.push_back(keys[k]);
}

// The argument is how many distinct keys the calls use, in a random order:
// 65,536 spread over the whole index (calls from many integrations: the
// lookups miss the caches, the target's case), or 1,024 (a few busy
// integrations: everything stays in cache, so hashing dominates).
inline void probe_sets(benchmark::internal::Benchmark* b) { b->Arg(probe_count)->Arg(1024); }

// The full K10 check of a valid call (every step runs) on `f.index`, with the
// fixture's probes; counts allocations per check. Every probe must be
// allowed, or the benchmark would time an early exit.
template <class Fixture>
void time_authorize(benchmark::State& state, const Fixture& f) {
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
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

}  // namespace keyhook_bench
