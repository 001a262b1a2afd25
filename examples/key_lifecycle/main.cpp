// A key's whole life, step by step. The clock is simulated: every step passes
// its own `now`, as a host would pass the real time.
#include <chrono>
#include <cstddef>
#include <iostream>
#include <random>
#include <string>

#include "keyhook/authorization.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/lifecycle.hpp"
#include "keyhook/status.hpp"
#include "shared/cli.hpp"

#if defined(KEYHOOK_EXAMPLE_WITH_CRYPTO)
#include "keyhook/crypto/random.hpp"
#endif

namespace {

#if defined(KEYHOOK_EXAMPLE_WITH_CRYPTO)
using random_source = keyhook::crypto::openssl_random;
constexpr const char* random_label = "OpenSSL RAND_bytes (keyhook::crypto::openssl_random)";
#else
// DEMO ONLY, NOT FOR PRODUCTION: std::random_device is not guaranteed to be a
// cryptographically secure source. Real hosts pass a CSPRNG.
struct random_source {
    std::random_device device;
    void operator()(unsigned char* out, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>(device() & 0xFF);
    }
};
constexpr const char* random_label = "std::random_device (demo only, not for production)";
#endif

void step(const char* title) { std::cout << "\n== " << title << " ==\n"; }

void show_call(const keyhook::key_index& index, const std::string& key, keyhook::access_level needed,
               keyhook::timestamp now) {
    const keyhook::http_headers headers{{"X-Synthetic-Key", key, true}, {"X-Tenant-Name", "acme", false}};
    const auto decision = keyhook::authorize(index, headers, keyhook::api_family::execute(),
                                             keyhook::resource_ref::in_folder("Finance"), needed, now);
    std::cout << "  call at " << keyhook::format_timestamp(now) << " needing " << needed << ": " << decision << '\n';
}

}  // namespace

int main(int argc, char** argv) {
    const examples::cli::program program{"key_lifecycle", "usage: key_lifecycle [--help] [--version]", ""};
    if (const auto status = examples::cli::parse_no_options(
            program,
            "Walks one key through its whole life, step by step, on a simulated clock: creation,\n"
            "calls, rotation, deactivation, deletion.",
            argc, argv))
        return *status;

    // The names this walk-through uses, one by one (the public API only).
    using keyhook::access_level;
    using keyhook::api_key;
    using keyhook::create_key;
    using keyhook::deactivate_key;
    using keyhook::delete_key;
    using keyhook::deletion_confirmation;
    using keyhook::expiry_warning_at;
    using keyhook::format_timestamp;
    using keyhook::key_author;
    using keyhook::key_index;
    using keyhook::key_request;
    using keyhook::key_request_problems;
    using keyhook::key_update;
    using keyhook::parse_timestamp;
    using keyhook::permission_policy;
    using keyhook::record_use;
    using keyhook::resource;
    using keyhook::rotate_key;
    using keyhook::rotation_policy;
    using keyhook::status_at;
    using keyhook::tenant_kind;
    using keyhook::try_delete_key;
    using keyhook::update_key;
    using std::chrono::hours;
    random_source random;
    std::cout << "random source: " << random_label << '\n';

    // The tenant's permissions, as the host configures them.
    permission_policy policy;
    policy.groups["user:pf"].access[resource::all()] = access_level::read;
    policy.groups["user:finance"].access[resource::folder("Finance")] = access_level::execute;

    step("create");
    key_request request;
    request.name = "Nightly pricing batch";
    request.description = "Uploads prices every night";
    request.active_from = parse_timestamp("2024-03-01T00:00:00Z");
    request.expire_at = parse_timestamp("2024-03-31T00:00:00Z");
    request.groups = {"user:pf", "user:finance"};
    std::cout << "  request: " << request << '\n';
    for (const auto& problem : key_request_problems(request)) std::cout << "  problem: " << problem << '\n';

    auto now = parse_timestamp("2024-03-01T09:00:00Z");
    auto created = create_key(request, tenant_kind::restricted, random, now,
                              key_author{std::string("0d7c5a52-3f0e-4b8a-9c1d-2e3f4a5b6c7d"), std::string("admin")});
    for (const auto& w : created.warnings) std::cout << "  advice: " << w << '\n';
    std::cout << "  record: " << created.record << '\n';

    step("show once");
    const auto plaintext = created.key.take();  // the only time it is available
    std::cout << "  copy this key now: " << plaintext->reveal() << '\n';
    std::cout << "  asking again gives " << (created.key.take() ? "the key (bug!)" : "nothing") << '\n';

    step("use");
    key_index index(random);
    api_key record = created.record;
    index.add("acme", record, *plaintext, policy);
    show_call(index, plaintext->reveal(), access_level::execute, now);
    show_call(index, plaintext->reveal(), access_level::write, now);
    show_call(index, "not-the-key-0000", access_level::read, now);
    record = record_use(record, now);
    std::cout << "  lastUsedAt: " << format_timestamp(*record.last_used_at) << '\n';

    step("warn");
    for (const auto t : {parse_timestamp("2024-03-20T00:00:00Z"), parse_timestamp("2024-03-24T00:00:00Z")})
        std::cout << "  at " << format_timestamp(t) << ": " << status_at(record, t)
                  << (expiry_warning_at(record, t) ? ", expiry warning shown" : ", no warning") << '\n';

    step("rotate (handover)");
    now = parse_timestamp("2024-03-25T00:00:00Z");
    auto rotated = rotate_key(record, rotation_policy::handover, random, now);
    const auto next_plaintext = rotated.key.take();
    std::cout << "  new record: " << rotated.record << '\n';
    std::cout << "  new key (shown once): " << next_plaintext->reveal() << '\n';
    index.add("acme", rotated.record, *next_plaintext, policy);
    show_call(index, next_plaintext->reveal(), access_level::read, now);
    show_call(index, next_plaintext->reveal(), access_level::read, record.expire_at);

    step("deactivate");
    record = deactivate_key(record, now);
    index.update("acme", record, policy);
    std::cout << "  record: " << record << '\n';
    show_call(index, plaintext->reveal(), access_level::read, now);

    step("re-activate by update");
    key_update change;
    change.expire_at = record.expire_at + hours(24 * 7);
    record = update_key(record, change, now);
    index.update("acme", record, policy);
    std::cout << "  record: " << record << '\n';
    show_call(index, plaintext->reveal(), access_level::read, now);

    step("delete");
    const auto refused = try_delete_key(record, deletion_confirmation::not_confirmed);
    std::cout << "  without confirmation: " << refused.error() << '\n';
    const auto receipt = delete_key(record, deletion_confirmation::confirmed);
    index.remove(receipt.id);
    std::cout << "  " << receipt << '\n';
    show_call(index, plaintext->reveal(), access_level::read, now);
    return 0;
}
