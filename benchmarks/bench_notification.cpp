// The notification body (H6): keyhook's direct writer against building the
// same nlohmann::ordered_json document and dumping it.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "keyhook/notification.hpp"
#include "notifications.hpp"

namespace {

// What an application would write without keyhook's writer.
std::string ordered_json_body(const keyhook::notification& n) {
    nlohmann::ordered_json j;
    j["FolderName"] = n.folder_name;
    j["ServiceName"] = n.service_name;
    j["EntityId"] = n.entity_id;
    j["UserAction"] = std::string(keyhook::to_string(n.user_action));
    j["AuditType"] = n.audit_type;
    auto& data = j["Data"];
    data["ProductName"] = n.folder_name;
    data["EngineName"] = n.service_name;
    data["FileName"] = n.file_name;
    data["ProductId"] = n.entity_id;
    data["ServiceVersionId"] = n.service_version_id;
    j["Tenant"] = n.tenant;
    j["RequestTimeStamp"] = keyhook::format_timestamp_millis(n.request_time);
    j["RevisionId"] = nullptr;
    return j.dump();
}

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

}  // namespace
