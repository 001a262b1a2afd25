// J3 for webhook validation and dispatch: growth is asserted on counts, never
// on time. This file is the webhooks suite's one user of the counting global
// allocation functions (bytes requested within a counting_allocator::scope).
// Name lookups are counted by the hash and equality this file gives the
// library's name index (the library itself counts nothing).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "../support/counting_allocator.hpp"
#include "keyhook/detail/name_index.hpp"
#include "keyhook/dispatch.hpp"
#include "keyhook/webhook.hpp"
#include "keyhook/webhook_validation.hpp"
#include "keyhook/webhook_json.hpp"

namespace {

using keyhook::auth_location;
using keyhook::auth_parameter;
using keyhook::secret;
using keyhook::webhook;

// n webhooks whose names share a 120-byte prefix (the slow case: a
// pairwise comparison reads the whole prefix for every pair).
std::vector<webhook> shared_prefix_hooks(std::size_t n) {
    std::vector<webhook> list(n);
    const std::string prefix(120, 'p');
    for (std::size_t i = 0; i < n; ++i) {
        std::string suffix = std::to_string(i);
        list[i].name = prefix.substr(0, 128 - 6) + std::string(6 - suffix.size(), '0') + suffix;
        list[i].endpoint = "https://hooks.example.com/in?x=1";
        list[i].saved = true;
        list[i].auth = {auth_parameter{auth_location::query, "api_key", secret("key-0123456789")},
                        auth_parameter{auth_location::header, "x-tenant", secret("acme")}};
    }
    return list;
}

// The work of the name lookups, in steps: each byte hashed or compared, and
// one per call. The hash is not noexcept, as the library's is (name_hash), so
// the table keeps each hash and compares names only when hashes are equal.
struct counting_hash {
    std::size_t* steps;
    std::size_t operator()(std::string_view s) const {
        *steps += s.size() + 1;
        return std::hash<std::string_view>{}(s);
    }
};
struct counting_equal {
    std::size_t* steps;
    bool operator()(std::string_view a, std::string_view b) const noexcept {
        *steps += std::min(a.size(), b.size()) + 1;
        return a == b;
    }
};
using counting_name_index = keyhook::detail::hooks::basic_name_index<counting_hash, counting_equal>;

struct cost {
    std::size_t steps = 0;
    std::size_t bytes = 0;
};

// The library's list validation (the loop validate_webhooks and
// webhook_problems run), with the library's index over the counting functors.
cost validate_list(const std::vector<webhook>& list, bool first_only) {
    std::vector<keyhook::error> problems;
    keyhook::detail::hooks::problem_sink sink{problems, first_only};
    std::size_t steps = 0;
    const counting_allocator::scope counter;
    counting_name_index names(list.size(), counting_hash{&steps}, counting_equal{&steps});
    auto out = keyhook::detail::hooks::validate_webhook_list_at(list, {}, "webhooks", names, sink);
    const std::size_t bytes = counter.stop().requested;
    REQUIRE(problems.empty());
    REQUIRE(out.size() == list.size());
    return {steps, bytes};
}

// Linear growth from n to 10n: at most 10 times (and a little for the longer
// decimal numbers) plus a constant.
void check_linear(std::size_t at_n, std::size_t at_10n) {
    INFO("at n: " << at_n << ", at 10n: " << at_10n);
    CHECK(at_10n <= at_n * 11 + 4096);
    CHECK(at_10n >= at_n * 8);  // it did grow: the counter sees the work
}

}  // namespace

// Regression test: quadratic work: validation cost grew faster than the configuration (J3, H2 limits).
TEST_CASE("J3: validating n webhooks whose names share a long prefix takes linear work and memory", "[J3][H2]") {
    const std::size_t n = 2000;
    const auto small = shared_prefix_hooks(n);
    const auto large = shared_prefix_hooks(10 * n);
    for (const bool first_only : {true, false}) {
        const auto a = validate_list(small, first_only);
        const auto b = validate_list(large, first_only);
        check_linear(a.steps, b.steps);
        check_linear(a.bytes, b.bytes);
        // One lookup per name: a pairwise check would take about n*n/2 comparisons.
        CHECK(b.steps < 4 * 130 * large.size());
    }
    // A duplicate far down is still found, with the index of the first.
    auto dup = large;
    dup.back().name = dup[7].name;
    const auto r = keyhook::try_validate_webhooks(dup);
    REQUIRE_FALSE(r);
    CHECK(r.error().path == "webhooks[" + std::to_string(dup.size() - 1) + "].name");
    CHECK(r.error().message.find("webhooks[7]") != std::string::npos);
}

// Regression test: quadratic work: validation cost grew faster than the configuration (J3, H2 limits).
TEST_CASE("J3: reading webhooks from JSON and dispatching to them allocate linearly", "[J3][H2][H8]") {
    const auto to_json = [](const std::vector<webhook>& list) {
        auto doc = nlohmann::json::array();
        for (const auto& w : list) {
            auto auth = nlohmann::json::array();
            for (const auto& p : w.auth)
                auth.push_back(
                    {{"in", std::string(keyhook::to_string(p.in))}, {"name", p.name}, {"value", p.value.reveal()}});
            doc.push_back({{"name", w.name}, {"endpoint", w.endpoint}, {"saved", true}, {"auth", auth}});
        }
        return doc;
    };
    const auto small = to_json(shared_prefix_hooks(2000));
    const auto large = to_json(shared_prefix_hooks(20000));
    std::size_t read_bytes[2] = {0, 0}, dispatch_bytes[2] = {0, 0};
    const keyhook::tenant_settings tenant{"acme", true};
    keyhook::notification n;
    n.tenant = "acme";
    n.user_action = keyhook::event_type::AddProduct;
    for (int k = 0; k < 2; ++k) {
        const counting_allocator::scope counter;
        const auto hooks = keyhook::try_validated_webhooks_from_json(k == 0 ? small : large);
        read_bytes[k] = counter.stop().requested;
        REQUIRE(hooks);
        const counting_allocator::scope dispatch_counter;
        const auto requests = keyhook::try_dispatch(tenant, *hooks, n);
        dispatch_bytes[k] = dispatch_counter.stop().requested;
        REQUIRE(requests);
        REQUIRE(requests->size() == hooks->size());
    }
    check_linear(read_bytes[0], read_bytes[1]);
    check_linear(dispatch_bytes[0], dispatch_bytes[1]);
}

// Regression test: quadratic work: validation cost grew faster than the configuration (J3, H2 limits).
TEST_CASE("J3: oversized parameters are refused at a cost that does not grow with them", "[J3][H2]") {
    const auto error_bytes = [](const webhook& w) {
        const counting_allocator::scope counter;
        const auto r = keyhook::try_validate_webhook(w);
        const std::size_t bytes = counter.stop().requested;
        REQUIRE_FALSE(r);
        CHECK(r.error().code == keyhook::errc::limit_exceeded);
        return bytes;
    };
    webhook w;
    w.name = "big";
    w.endpoint = "https://hooks.example.com/in";
    w.saved = true;
    // n and 10n parameters: refused on the count, before any is looked at.
    w.auth.assign(1000, auth_parameter{auth_location::header, "x-k", secret("v")});
    const auto count_n = error_bytes(w);
    w.auth.assign(10000, auth_parameter{auth_location::header, "x-k", secret("v")});
    const auto count_10n = error_bytes(w);
    CHECK(count_10n <= count_n + 64);
    // A value of n and 10n bytes (up to 10 MB): refused on its length; no URL is built.
    for (const auto in : {auth_location::query, auth_location::header}) {
        w.auth = {auth_parameter{in, "x-k", secret(std::string(1 << 20, 'v'))}};
        const auto value_n = error_bytes(w);
        w.auth = {auth_parameter{in, "x-k", secret(std::string(10 << 20, 'v'))}};
        const auto value_10n = error_bytes(w);
        CHECK(value_10n <= value_n + 64);
        CHECK(value_10n < 4096);
    }
}
