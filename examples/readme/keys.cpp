#include <keyhook/crypto/random.hpp>
#include <keyhook/keyhook.hpp>
#include <iostream>

int main() {
    keyhook::crypto::openssl_random random;  // or any callable void(unsigned char*, std::size_t) that is secure
    const auto now = keyhook::to_timestamp(std::chrono::system_clock::now());

    keyhook::key_request request;
    request.name = "Nightly pricing batch";
    request.active_from = now;
    request.expire_at = now + std::chrono::hours(24 * 30);
    request.groups = {"user:pf"};
    auto created = keyhook::create_key(request, keyhook::tenant_kind::shared, random, now);
    const std::optional<keyhook::secret> key = created.key.take();  // the plaintext, handed out once

    keyhook::permission_policy policy;  // the tenant's groups and what they grant
    policy.groups["user:pf"].access[keyhook::resource::all()] = keyhook::access_level::execute;
    keyhook::key_index index(random);
    index.add("acme", created.record, *key, policy);

    const keyhook::http_headers call{{"x-synthetic-key", key->reveal(), true}, {"x-tenant-name", "acme"}};
    std::cout << keyhook::authorize(index, call, keyhook::api_family::execute(), keyhook::resource_ref::all(),
                                    keyhook::access_level::execute, now)
              << '\n';  // "allowed: ..." or the check that failed
}
