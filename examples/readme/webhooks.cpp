#include <keyhook/keyhook.hpp>
#include <iostream>

int main() {
    keyhook::webhook hook;
    hook.name = "folder-sync";
    hook.endpoint = "https://hooks.example.com/platform?team=data";
    hook.auth = {{keyhook::auth_location::header, "x-api-key", keyhook::secret("receiver-key-0123456789")}};
    hook.events = {keyhook::event_type::AddProduct, keyhook::event_type::DeleteProduct};
    hook.saved = true;
    const auto webhooks = keyhook::validate_webhooks({hook});  // errors name the field and the reason

    keyhook::notification event;
    event.user_action = keyhook::event_type::AddProduct;
    event.folder_name = "Pricing";
    event.entity_id = "4f1c2a9e-0b7d-4c3e-8a51-9d2e6f7a8b90";
    event.tenant = "acme";
    event.request_time = keyhook::parse_timestamp("2026-11-22T12:00:00Z");
    for (const auto& out : keyhook::dispatch({"acme", true}, webhooks, event))
        std::cout << out.request() << '\n' << out.body() << '\n';  // the key is redacted when printed
}
