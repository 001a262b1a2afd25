#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "keyhook/permissions.hpp"

using namespace keyhook;

namespace {

permission_policy sample_policy() {
    permission_policy p;
    p.groups["user:pf"].access[resource::all()] = access_level::read;
    p.groups["user:finance"].access[resource::folder("Finance")] = access_level::write;
    p.groups["user:finance"].access[resource::service("Finance", "Pricing")] = access_level::execute;
    p.groups["user:auditors"].access[resource::folder("Finance")] = access_level::read;
    p.groups["user:auditors"].families.insert(api_family("Audit"));
    p.groups["user:ops"].access[resource::all()] = access_level::admin;
    p.groups["user:ops"].features = {"bulk-export", "no-such-feature"};
    p.features["bulk-export"] = {api_family("Export"), api_family("Batch")};
    return p;
}

}  // namespace

TEST_CASE("K9: access levels are ordered none < read < execute < write < admin", "[K9][permissions]") {
    const std::vector<access_level> order{access_level::none, access_level::read, access_level::execute,
                                          access_level::write, access_level::admin};
    for (std::size_t i = 0; i < order.size(); ++i) {
        for (std::size_t j = 0; j < order.size(); ++j) {
            CHECK((order[i] < order[j]) == (i < j));
            CHECK(greater_access(order[i], order[j]) == order[std::max(i, j)]);
        }
    }
    CHECK(to_string(access_level::execute) == "execute");
}

TEST_CASE("K9: the default API families", "[K9][permissions]") {
    const auto defaults = default_api_families();
    CHECK(defaults == api_family_set{api_family("Batch"), api_family("Execute"), api_family("Metadata"),
                                     api_family("Transforms"), api_family("Validation")});
    // A key whose groups are unknown to the policy still has them, and only them.
    const auto p = merge_permissions({"user:unknown"}, sample_policy());
    CHECK(p.families() == defaults);
    CHECK(p.allows(api_family::execute()));
    CHECK_FALSE(p.allows("Audit"));
    CHECK_FALSE(p.allows("batch"));  // names are case-sensitive
    CHECK(p.access_to(resource_ref::all()) == access_level::none);
}

TEST_CASE("K9: merging groups takes the greatest level per resource", "[K9][permissions]") {
    const auto policy = sample_policy();
    const auto finance = merge_permissions({"user:finance", "user:auditors"}, policy);
    CHECK(finance.granted_on(resource::folder("Finance")) == access_level::write);   // write > read
    CHECK(merge_permissions({"user:auditors", "user:finance"}, policy) == finance);  // order does not matter
    CHECK(merge_permissions({"user:auditors"}, policy).granted_on(resource::folder("Finance")) == access_level::read);
    CHECK(finance.access_to(resource_ref::in_folder("HR")) == access_level::none);
}

TEST_CASE("K9: a grant on all folders and services combines with a specific one; the greater wins",
          "[K9][permissions]") {
    const auto policy = sample_policy();
    SECTION("specific above all") {
        const auto p = merge_permissions({"user:pf", "user:finance"}, policy);
        CHECK(p.access_to(resource_ref::all()) == access_level::read);
        CHECK(p.access_to(resource_ref::in_folder("HR")) == access_level::read);        // from all
        CHECK(p.access_to(resource_ref::in_folder("Finance")) == access_level::write);  // folder > all
    }
    SECTION("all above specific") {
        const auto p = merge_permissions({"user:ops", "user:finance"}, policy);
        CHECK(p.access_to(resource_ref::in_folder("Finance")) == access_level::admin);
        CHECK(p.access_to(resource_ref::of_service("Finance", "Pricing")) == access_level::admin);
    }
    SECTION("a folder's grant covers its services; a narrower grant never lowers it") {
        const auto p = merge_permissions({"user:finance"}, policy);
        CHECK(p.granted_on(resource::service("Finance", "Pricing")) == access_level::execute);
        CHECK(p.access_to(resource_ref::of_service("Finance", "Pricing")) == access_level::write);
        CHECK(p.access_to(resource_ref::of_service("Finance", "Other")) == access_level::write);
        CHECK(p.access_to(resource_ref::of_service("HR", "Pricing")) == access_level::none);
    }
    SECTION("a service grant above its folder's") {
        permission_policy q;
        q.groups["user:a"].access[resource::folder("F")] = access_level::read;
        q.groups["user:a"].access[resource::service("F", "S")] = access_level::execute;
        const auto p = merge_permissions({"user:a"}, q);
        CHECK(p.access_to(resource_ref::of_service("F", "S")) == access_level::execute);
        CHECK(p.access_to(resource_ref::of_service("F", "T")) == access_level::read);
        CHECK(p.access_to(resource_ref::in_folder("F")) == access_level::read);
    }
}

TEST_CASE("K9: API families merge by union; feature permissions add families", "[K9][permissions]") {
    const auto policy = sample_policy();
    const auto p = merge_permissions({"user:auditors", "user:ops"}, policy);
    auto expected = default_api_families();
    expected.insert(api_family("Audit"));
    expected.insert(api_family("Export"));
    CHECK(p.families() == expected);  // Batch is not doubled; the unknown feature adds nothing
    CHECK(p.allows("Export"));
    CHECK_FALSE(merge_permissions({"user:auditors"}, policy).allows("Export"));
}

TEST_CASE("K9: permissions built from a map combine levels as merged ones do", "[K9][permissions]") {
    const key_permissions p({{resource::all(), access_level::execute},
                             {resource::folder("F"), access_level::read},
                             {resource::service("G", "S"), access_level::admin}},
                            default_api_families());
    CHECK(p.access_to(resource_ref::in_folder("F")) == access_level::execute);  // all above the folder's read
    CHECK(p.access_to(resource_ref::of_service("G", "S")) == access_level::admin);
    CHECK(p.access_to(resource_ref::of_service("G", "T")) == access_level::execute);
    CHECK(p.access_to(resource_ref::all()) == access_level::execute);
}

TEST_CASE("K9: a host may replace the default families", "[K9][permissions]") {
    auto policy = sample_policy();
    policy.default_families = {api_family::metadata()};
    const auto p = merge_permissions({"user:pf"}, policy);
    CHECK(p.families() == api_family_set{api_family::metadata()});
    CHECK_FALSE(p.allows(api_family::execute()));
}

TEST_CASE("permission values are regular: compare, print, hash", "[K9][permissions]") {
    const auto a = resource::service("Finance", "Pricing");
    auto b = a;
    CHECK(a == b);
    CHECK(a != resource::folder("Finance"));
    CHECK(resource(resource_ref::of_service("Finance", "Pricing")) == a);
    std::unordered_set<resource> resources{a, b, resource::all()};
    CHECK(resources.size() == 2);
    std::unordered_set<api_family> families{api_family::batch(), api_family("Batch")};
    CHECK(families.size() == 1);

    std::ostringstream os;
    os << merge_permissions({"user:finance"}, sample_policy());
    CHECK(os.str() ==
          "permissions{folder Finance: write, service Finance/Pricing: execute; families: Batch Execute Metadata "
          "Transforms Validation}");
}
