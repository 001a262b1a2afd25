// The list call: decoding a response into records, against nlohmann's DOM
// parse and against a SAX pass that does nothing (the lexer alone), all over
// the same bytes.
#include <cstdint>
#include <string>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "baselines.hpp"
#include "generator.hpp"

namespace {

void set_counters(benchmark::State& state, const std::string& text) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void BM_list_json_dom(benchmark::State& state) {
    const auto& text = keyhook_bench::list_response(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        auto j = nlohmann::json::parse(text);
        benchmark::DoNotOptimize(j);
    }
    set_counters(state, text);
}

void BM_list_json_null_sax(benchmark::State& state) {
    const auto& text = keyhook_bench::list_response(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        // The same call (and so the same lexer instantiation) as parse_key_list's.
        const bool ok = keyhook_bench::null_sax_pass(text);
        if (!ok) state.SkipWithError("null SAX pass failed");
        benchmark::DoNotOptimize(ok);
    }
    set_counters(state, text);
}

// 100,000 records take a good part of a second per pass, so the minimum time
// per repetition already gives them only one or two iterations.
void sizes(benchmark::internal::Benchmark* b) { b->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond); }

BENCHMARK(BM_list_json_dom)->Apply(sizes);
BENCHMARK(BM_list_json_null_sax)->Apply(sizes);

}  // namespace
