#include <keyhook/keyhook.hpp>
#include <iostream>

int main() {
    // A response of the platform's list call, GET {base_url}/{tenant}/api/v1/key/apikeys
    const char* body = R"({"status": "success", "data": {"count": 1, "page": 1, "pageSize": 100, "result": [
        {"id": "7d07d425-8c75-4e14-99ea-db7ed05a30e2", "name": "batch importer", "status": "Active",
         "masked": "62b******************************f7e",
         "activeFrom": "2026-11-17T12:00:00Z", "expireAt": "2026-11-24T12:00:00Z"}]}})";

    const auto now = keyhook::parse_timestamp("2026-11-22T12:00:00Z");  // the host's clock, passed in
    for (const keyhook::api_key& key : keyhook::default_view(keyhook::parse_key_list(body).records, now))
        std::cout << keyhook::escaped(key.name) << " " << keyhook::escaped(key.masked.value_or("-")) << ": "
                  << keyhook::status_at(key, now) << (keyhook::expiry_warning_at(key, now) ? ", expires soon" : "")
                  << '\n';  // input is printed escaped: no control character reaches the terminal
}
