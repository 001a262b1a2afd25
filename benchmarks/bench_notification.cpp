// The notification body (H6): keyhook's direct writer against building the
// same nlohmann::ordered_json document and dumping it. And reading it (H7):
// try_parse_notification against a SAX pass of nlohmann's parser that keeps
// nothing, over the same bodies (three of the four in the platform's own
// shape, read in one pass; one with escapes, read by the parser).
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "baselines.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/received_notification.hpp"
#include "notifications.hpp"

namespace {

using keyhook_bench::ordered_json_body;

// The two must write the same bytes (events' tests check it too; a benchmark of
// different outputs would compare nothing).
void check_same_bytes() {
    for (const auto& n : keyhook_bench::notifications()) {
        if (keyhook::notification_body(n) != ordered_json_body(n)) {
            std::cerr << "notification_body differs from ordered_json's dump for " << n << '\n';
            std::abort();
        }
    }
}

void BM_notification_ordered_json(benchmark::State& state) {
    check_same_bytes();
    const auto& v = keyhook_bench::notifications();
    std::size_t i = 0;
    for (auto _ : state) {
        auto body = ordered_json_body(v[i]);
        benchmark::DoNotOptimize(body);
        i = (i + 1) % v.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_notification_ordered_json);

// notification_body: a new string per body, as dump() gives.
void BM_notification_keyhook(benchmark::State& state) {
    const auto& v = keyhook_bench::notifications();
    std::size_t i = 0;
    for (auto _ : state) {
        auto body = keyhook::notification_body(v[i]);
        benchmark::DoNotOptimize(body);
        i = (i + 1) % v.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_notification_keyhook);

// write_notification into a buffer the caller reuses: no allocation at all.
void BM_notification_keyhook_reused_buffer(benchmark::State& state) {
    const auto& v = keyhook_bench::notifications();
    std::string buffer;
    std::size_t i = 0;
    for (auto _ : state) {
        buffer.clear();
        keyhook::write_notification(buffer, v[i]);
        benchmark::DoNotOptimize(buffer.data());
        i = (i + 1) % v.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_notification_keyhook_reused_buffer);

const std::vector<std::string>& bodies() {
    static const std::vector<std::string> v = [] {
        std::vector<std::string> b;
        for (const auto& n : keyhook_bench::notifications()) b.push_back(keyhook::notification_body(n));
        return b;
    }();
    return v;
}

void BM_receive_null_sax(benchmark::State& state) {
    const auto& v = bodies();
    std::size_t i = 0;
    for (auto _ : state) {
        const bool ok = keyhook_bench::null_sax_pass(v[i]);
        benchmark::DoNotOptimize(ok);
        i = (i + 1) % v.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_receive_null_sax);

void BM_receive_keyhook(benchmark::State& state) {
    const auto& v = bodies();
    for (const auto& body : v) {
        if (!keyhook::try_parse_notification(body)) {
            std::cerr << "a written body does not read back\n";
            std::abort();
        }
    }
    std::size_t i = 0;
    for (auto _ : state) {
        auto r = keyhook::try_parse_notification(v[i]);
        benchmark::DoNotOptimize(r);
        i = (i + 1) % v.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_receive_keyhook);

}  // namespace
