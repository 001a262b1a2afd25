// The list call through keyhook: decoding a response into records (compared in
// report.py with bench_list.cpp's DOM and null-SAX passes over the same bytes),
// and the default view (L3) over the decoded records.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "generator.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/key_list_view.hpp"

namespace {

// The fast decoder must read what the plain DOM route reads, or the speed
// comparison is meaningless: checked once per size, outside the timing.
void check_against_dom(const std::string& text, std::size_t records) {
    static std::vector<std::size_t> checked;
    for (auto n : checked)
        if (n == records) return;
    checked.push_back(records);
    const auto page = keyhook::parse_key_list(text);
    const auto dom = nlohmann::json::parse(text);
    const auto& result = dom["data"]["result"];
    bool same = page.records.size() == records && page.rejected.empty() && result.size() == records;
    for (std::size_t i = 0; same && i < records; ++i) same = page.records[i] == keyhook::api_key_from_json(result[i]);
    if (!same) {
        std::cerr << "parse_key_list disagrees with the DOM route on " << records << " records\n";
        std::abort();
    }
}

void BM_list_keyhook_decode(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto& text = keyhook_bench::list_response(n);
    check_against_dom(text, n);
    for (auto _ : state) {
        auto page = keyhook::parse_key_list(text);
        benchmark::DoNotOptimize(page);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_list_keyhook_decode)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// Most generated keys are listed Active; at this instant some have expired and
// some are not yet active, so the view filters as well as sorts.
keyhook::timestamp view_now() { return keyhook::parse_timestamp("2025-09-01T00:00:00Z"); }

const std::vector<keyhook::api_key>& decoded(std::size_t n) {
    static std::vector<keyhook::api_key> records;
    if (records.size() != n) records = keyhook::parse_key_list(keyhook_bench::list_response(n)).records;
    return records;
}

// default_view(const records&): the view as its own copies of the records.
void BM_view_default_view(benchmark::State& state) {
    const auto& records = decoded(static_cast<std::size_t>(state.range(0)));
    const auto now = view_now();
    std::size_t shown = 0;
    for (auto _ : state) {
        auto view = keyhook::default_view(records, now);
        shown = view.size();
        benchmark::DoNotOptimize(view);
    }
    state.counters["shown"] = static_cast<double>(shown);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_view_default_view)->Arg(100000)->Unit(benchmark::kMillisecond);

// default_view_refs: pointers into the records, no copies.
void BM_view_default_view_refs(benchmark::State& state) {
    const auto& records = decoded(static_cast<std::size_t>(state.range(0)));
    const auto now = view_now();
    for (auto _ : state) {
        auto view = keyhook::default_view_refs(records, now);
        benchmark::DoNotOptimize(view);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_view_default_view_refs)->Arg(100000)->Unit(benchmark::kMillisecond);

// default_view(records&&): moves the selected records out of a page the caller
// no longer needs. The copy that feeds it each iteration is not timed.
void BM_view_default_view_move(benchmark::State& state) {
    const auto& records = decoded(static_cast<std::size_t>(state.range(0)));
    const auto now = view_now();
    for (auto _ : state) {
        state.PauseTiming();
        auto page = records;
        state.ResumeTiming();
        auto view = keyhook::default_view(std::move(page), now);
        benchmark::DoNotOptimize(view);
        state.PauseTiming();
        view = {};
        page = {};
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_view_default_view_move)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
