// Dispatch (H4, H8): one event to 100 firing webhooks, compared in report.py
// with one body serialization (bench_notification.cpp's notification_body).
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "keyhook/dispatch.hpp"
#include "notifications.hpp"

namespace {

constexpr std::size_t webhook_count = 100;

// Validated once, as a host keeps them: every one saved, admitting the events
// used, with the receiver's key as a header or (every fourth) a query parameter.
std::vector<keyhook::validated_webhook> make_webhooks() {
    std::vector<keyhook::webhook> list;
    for (std::size_t i = 0; i < webhook_count; ++i) {
        keyhook::webhook w;
        w.name = "integration-" + std::to_string(i);
        w.endpoint = "https://hooks.example.com/tenant/receiver/" + std::to_string(i) + "?source=platform";
        keyhook::auth_parameter p;
        p.in = i % 4 == 3 ? keyhook::auth_location::query : keyhook::auth_location::header;
        p.name = p.in == keyhook::auth_location::query ? "api_key" : "x-api-key";
        p.value = keyhook::secret("4f1c2a9e-7b3d-4e8a-9c6f-" + std::to_string(100000000000 + i));
        w.auth.push_back(std::move(p));
        if (i % 2 == 1) {
            // Half filter: the four event types of the notifications, and one more.
            w.events = {keyhook::event_type::PublishEngine, keyhook::event_type::AddProduct,
                        keyhook::event_type::UpdateEngine, keyhook::event_type::DownloadEngine,
                        keyhook::event_type::DeleteEngine};
        }
        w.saved = true;
        list.push_back(std::move(w));
    }
    return keyhook::validate_webhooks(list);
}

void BM_dispatch_100_webhooks(benchmark::State& state) {
    const auto webhooks = make_webhooks();
    const auto& events = keyhook_bench::notifications();
    std::vector<keyhook::tenant_settings> tenants;
    for (const auto& n : events) {
        keyhook::tenant_settings t;
        t.name = n.tenant;
        t.webhooks_enabled = true;
        tenants.push_back(std::move(t));
    }
    if (keyhook::dispatch(tenants[0], webhooks, events[0]).size() != webhook_count) {
        state.SkipWithError("not every webhook fired");
        return;
    }
    std::size_t i = 0;
    for (auto _ : state) {
        auto requests = keyhook::dispatch(tenants[i], webhooks, events[i]);
        benchmark::DoNotOptimize(requests);
        i = (i + 1) % events.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_dispatch_100_webhooks);

}  // namespace
