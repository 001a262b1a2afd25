// K10: an authorization check allocates no heap memory. This file replaces the
// global allocation functions for the whole suite with counting ones that
// forward to malloc; only the span between start() and stop() is counted.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "keyhook/authorization.hpp"

namespace {

std::atomic<bool> counting{false};
std::atomic<std::size_t> allocations{0};

void* counted_alloc(std::size_t n) {
    if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}

void* counted_aligned_alloc(std::size_t n, std::align_val_t al) {
    if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
    const auto a = static_cast<std::size_t>(al);
    const std::size_t size = (n + a - 1) / a * a;
    if (void* p = std::aligned_alloc(a, size == 0 ? a : size)) return p;
    throw std::bad_alloc();
}

struct allocation_counter {
    allocation_counter() {
        allocations = 0;
        counting = true;
    }
    ~allocation_counter() { counting = false; }
    std::size_t stop() {
        counting = false;
        return allocations.load();
    }
};

}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new(std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

using namespace keyhook;
using test_support::at;

TEST_CASE("the allocation counter sees allocations", "[K10][allocation]") {
    allocation_counter counter;
    auto* s = new std::string(100, 'x');  // too long for the small-string buffer: two allocations
    const auto n = counter.stop();
    delete s;
    CHECK(n == 2);
}

TEST_CASE("K10: an authorization check allocates no heap memory", "[K10][allocation]") {
    test_support::seeded_random random(31);
    key_index index(random);
    permission_policy policy;
    policy.groups["user:pf"].access[resource::all()] = access_level::read;
    policy.groups["user:folder-team-with-a-long-name"].access[resource::folder("A folder name longer than SSO")] =
        access_level::write;
    policy.groups["user:folder-team-with-a-long-name"].features = {"reporting"};
    policy.features["reporting"] = {api_family("A family name longer than the SSO buffer")};

    auto r = test_support::request();
    r.groups = {"user:pf", "user:folder-team-with-a-long-name"};
    const auto now = at("2024-03-15T00:00:00Z");
    std::string key;
    for (int i = 0; i < 1000; ++i) {
        auto created = create_key(r, tenant_kind::restricted, random, r.active_from);
        auto plaintext = created.key.take()->reveal();
        if (i == 500) key = plaintext;
        index.add("a-tenant-name-longer-than-the-sso-buffer", created.record, secret(plaintext), policy);
    }
    const http_headers allowed{{"X-Synthetic-Key", key, true},
                               {"X-Tenant-Name", "a-tenant-name-longer-than-the-sso-buffer", false}};
    const http_headers unknown{{"x-synthetic-key", "ffffffff-ffff-4fff-bfff-ffffffffffff", true},
                               {"x-tenant-name", "a-tenant-name-longer-than-the-sso-buffer", false}};
    const http_headers wrong_tenant{{"x-synthetic-key", key, true}, {"x-tenant-name", "other", false}};
    const http_headers missing{{"x-tenant-name", "t", false}};
    const api_family family("A family name longer than the SSO buffer");
    const std::string folder = "A folder name longer than SSO";
    const auto batch = api_family::batch();

    allocation_counter counter;
    const auto a = authorize(index, allowed, family, resource_ref::in_folder(folder), access_level::write, now);
    const auto b = authorize(index, unknown, family, resource_ref::in_folder(folder), access_level::write, now);
    const auto c = authorize(index, wrong_tenant, family, resource_ref::in_folder(folder), access_level::write, now);
    const auto d = authorize(index, missing, family, resource_ref::in_folder(folder), access_level::write, now);
    const auto e = authorize(index, allowed, batch, resource_ref::of_service(folder, "svc"), access_level::admin, now);
    const auto f = authorize(index, allowed, family, resource_ref::all(), access_level::read, r.expire_at);
    const auto g = authorize(index, key, "a-tenant-name-longer-than-the-sso-buffer", family, resource_ref::all(),
                             access_level::read, now);
    const auto count = counter.stop();
    CHECK(count == 0);

    CHECK(a.allowed());
    CHECK(b.reason() == denial_reason::unknown_key);
    CHECK(c.reason() == denial_reason::wrong_tenant);
    CHECK(d.reason() == denial_reason::missing_key);
    CHECK(e.reason() == denial_reason::insufficient_access);
    CHECK(f.reason() == denial_reason::not_active);
    CHECK(g.allowed());
}
