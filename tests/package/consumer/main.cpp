// Uses the core as an application would: reads a record, derives its status
// and warning, masks its key. Exits non-zero when a result is not as expected.
#include <keyhook/keyhook.hpp>
#include <nlohmann/json.hpp>  // the program parses JSON itself; in compiled mode keyhook.hpp does not include it

#include <iostream>

int main() {
    const auto record = nlohmann::json::parse(R"({
        "id": "7d07d425-8c75-4e14-99ea-db7ed05a30e2", "name": "consumer", "status": "Active",
        "masked": "62b******************************f7e",
        "activeFrom": "2026-11-17T12:00:00.8538786Z", "expireAt": "2026-11-24T12:00:00Z"})");
    const keyhook::api_key key = keyhook::api_key_from_json(record);
    const auto now = keyhook::parse_timestamp("2026-11-22T12:00:00Z");

    const bool ok = keyhook::status_at(key, now) == keyhook::key_status::active &&
                    keyhook::expiry_warning_at(key, now) &&
                    keyhook::mask_key("0f8fad5b-d9cb-469f-a165-70867728950e") == "0f8******************************50e";
    std::cout << key << (ok ? ": as expected\n" : ": NOT as expected\n");
    return ok ? 0 : 1;
}
