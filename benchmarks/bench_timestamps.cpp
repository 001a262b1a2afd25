// Timestamps: keyhook's direct parser against date::parse through a reused
// std::istringstream, over the same rotating set of realistic inputs.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <date/date.h>

#include "baselines.hpp"
#include "generator.hpp"
#include "keyhook/timestamps.hpp"

namespace {

// A few hundred distinct inputs: enough to defeat branch prediction, small
// enough to stay in cache like the timestamps of one record do.
const std::vector<std::string>& inputs() {
    static const std::vector<std::string> v = keyhook_bench::make_timestamps(256);
    return v;
}

using keyhook_bench::date_parse;

// Both parsers must agree on every input, or the comparison means nothing.
void check_agreement() {
    std::istringstream in;
    for (const auto& s : inputs()) {
        keyhook::timestamp a{}, b{};
        if (!keyhook::detail::parse_timestamp_into(s, a) || !date_parse(in, s, b) || a != b) {
            std::cerr << "timestamp parsers disagree on " << s << '\n';
            std::abort();
        }
    }
}

void BM_timestamp_date_parse(benchmark::State& state) {
    check_agreement();
    const auto& v = inputs();
    std::istringstream in;
    std::size_t i = 0;
    for (auto _ : state) {
        keyhook::timestamp t{};
        const bool ok = date_parse(in, v[i], t);
        benchmark::DoNotOptimize(ok);
        benchmark::DoNotOptimize(t);
        i = (i + 1) % v.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_timestamp_date_parse);

void BM_timestamp_keyhook_try_parse(benchmark::State& state) {
    const auto& v = inputs();
    std::size_t i = 0;
    for (auto _ : state) {
        auto r = keyhook::try_parse_timestamp(v[i]);
        benchmark::DoNotOptimize(r);
        i = (i + 1) % v.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_timestamp_keyhook_try_parse);

void BM_timestamp_keyhook_parse(benchmark::State& state) {
    const auto& v = inputs();
    std::size_t i = 0;
    for (auto _ : state) {
        auto t = keyhook::parse_timestamp(v[i]);
        benchmark::DoNotOptimize(t);
        i = (i + 1) % v.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_timestamp_keyhook_parse);

// Writing is not a target; it is here to catch regressions.
void BM_timestamp_keyhook_format(benchmark::State& state) {
    const auto& v = inputs();
    std::vector<keyhook::timestamp> ts;
    for (const auto& s : v) ts.push_back(keyhook::parse_timestamp(s));
    std::size_t i = 0;
    for (auto _ : state) {
        auto s = keyhook::format_timestamp(ts[i]);
        benchmark::DoNotOptimize(s);
        i = (i + 1) % ts.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_timestamp_keyhook_format);

}  // namespace
