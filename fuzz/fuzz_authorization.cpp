// Authorization (K10) of fuzzed request headers against a small index: two
// tenants, an Active key, a Revoked key and a key of the other tenant.
// Properties: never crashes; a call is allowed exactly when the first
// x-synthetic-key header (name in any case) holds, byte for byte, the Active
// key of the tenant named by the first x-tenant-name header, and that key's
// level covers the one needed; otherwise the denial names the first failed
// check, computed here independently; message() never holds a key.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_common.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/key_index.hpp"
#include "keyhook/testing.hpp"

namespace {

using namespace keyhook;

struct indexed {
    std::string key;
    std::string tenant;
    bool revoked;
};

const std::array<indexed, 3> keys{{
    {"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "acme", false},
    {"acme-own-key-0123456789", "acme", true},
    {"1c9ab8db-6f9e-4b0a-8c1d-000000000003", "globex", false},
}};

const key_index& the_index() {
    static const key_index index = [] {
        key_index ix(std::array<unsigned char, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
        permission_policy policy;
        policy.groups["user:pf"].access[resource::all()] = access_level::execute;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            api_key r = testing::key_builder().build();
            r.id = key_id(testing::test_uuid(i + 1));
            r.groups = {"user:pf"};
            if (keys[i].revoked) r.status = key_status::revoked;
            ix.add(keys[i].tenant, r, secret(keys[i].key), policy);
        }
        return ix;
    }();
    return index;
}

bool iequal(std::string_view a, std::string_view b) { return header_name_equal(a, b); }

}  // namespace

KEYHOOK_FUZZ_TARGET(authorization) {
    FuzzedDataProvider in(data, size);
    const auto& index = the_index();
    http_headers headers;
    const std::size_t count = in.ConsumeIntegralInRange<std::size_t>(0, 4);
    static constexpr std::string_view names[] = {"x-synthetic-key", "X-Tenant-Name", "X-SYNTHETIC-KEY", "x-tenant-name",
                                                 "x-api-key"};
    for (std::size_t i = 0; i < count; ++i) {
        http_header h;
        const auto pick = in.ConsumeIntegralInRange<std::size_t>(0, 5);
        h.name = pick < 5 ? std::string(names[pick]) : in.ConsumeRandomLengthString(24);
        switch (in.ConsumeIntegralInRange<int>(0, 3)) {
            case 0: h.value = keys[in.ConsumeIntegralInRange<std::size_t>(0, 2)].key; break;
            case 1: h.value = in.ConsumeBool() ? "acme" : "globex"; break;
            case 2: {
                h.value = keys[in.ConsumeIntegralInRange<std::size_t>(0, 2)].key;
                if (!h.value.empty())
                    h.value[in.ConsumeIntegralInRange<std::size_t>(0, h.value.size() - 1)] =
                        static_cast<char>(in.ConsumeIntegral<std::uint8_t>());
                if (in.ConsumeBool()) h.value += in.ConsumeRandomLengthString(4);
                break;
            }
            default: h.value = in.ConsumeRandomLengthString(64); break;
        }
        headers.push_back(std::move(h));
    }
    const auto needed = static_cast<access_level>(in.ConsumeIntegralInRange<int>(0, 4));
    const auto family = in.ConsumeBool() ? api_family::execute() : api_family("Reports");
    const auto a = authorize(index, headers, family, resource_ref::all(), needed, testing::fixed_now);

    // The expected outcome, from the headers and the table above.
    const http_header* key_h = nullptr;
    const http_header* tenant_h = nullptr;
    bool key_conflict = false;
    bool tenant_conflict = false;
    for (const auto& h : headers) {
        if (iequal(h.name, "x-synthetic-key")) {
            if (!key_h)
                key_h = &h;
            else if (key_h->value != h.value)
                key_conflict = true;
        }
        if (iequal(h.name, "x-tenant-name")) {
            if (!tenant_h)
                tenant_h = &h;
            else if (tenant_h->value != h.value)
                tenant_conflict = true;
        }
    }
    const indexed* found = nullptr;
    if (key_h)
        for (const auto& k : keys)
            if (k.key == key_h->value) found = &k;
    std::optional<denial_reason> expected;
    if (key_conflict)
        expected = denial_reason::conflicting_key;
    else if (!key_h || key_h->value.empty())
        expected = denial_reason::missing_key;
    else if (tenant_conflict)
        expected = denial_reason::conflicting_tenant;
    else if (!tenant_h || tenant_h->value.empty())
        expected = denial_reason::missing_tenant;
    else if (!found)
        expected = denial_reason::unknown_key;
    else if (found->tenant != tenant_h->value)
        expected = denial_reason::wrong_tenant;
    else if (found->revoked)
        expected = denial_reason::not_active;
    else if (family != api_family::execute())
        expected = denial_reason::family_not_allowed;
    else if (needed > access_level::execute)
        expected = denial_reason::insufficient_access;
    fuzz::check(a.reason() == expected, "the decision differs from K10", a.message());

    const auto message = a.message();
    for (const auto& k : keys)
        fuzz::check(message.find(k.key) == std::string::npos, "a decision's message holds a key");
    return 0;
}
