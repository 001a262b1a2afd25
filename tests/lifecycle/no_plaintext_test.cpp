// M3 for the lifecycle: over many random keys, the plaintext never appears in
// anything the library produces (records, JSON, stream output, error messages,
// warnings, denial messages).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/lifecycle.hpp"

using namespace keyhook;
using test_support::at;

namespace {

template <class T>
std::string printed(const T& value) {
    std::ostringstream os;
    os << value;
    return os.str();
}

// Gathers every output for one key and checks none contains the plaintext.
struct outputs {
    std::vector<std::string> texts;
    void add(std::string s) { texts.push_back(std::move(s)); }
    void add_record(const api_key& k) {
        add(printed(k));
        add(nlohmann::json(k).dump());
        add(nlohmann::ordered_json(k).dump());
    }
    void add_result_error(const error& e) {
        add(e.what());
        add(printed(e));
        add(keyhook::exception(e).what());
    }
    [[nodiscard]] std::size_t containing(const std::string& plaintext) const {
        std::size_t n = 0;
        for (const auto& t : texts) n += t.find(plaintext) != std::string::npos;
        return n;
    }
};

// Own keys of random printable characters (0x21 to 0x7E), 16 to 64 long.
std::string random_own_key(test_support::seeded_random& random) {
    unsigned char b[65];
    random(b, sizeof b);
    const std::size_t length = 16 + b[0] % 49;
    std::string s;
    for (std::size_t i = 0; i < length; ++i) s += static_cast<char>(0x21 + b[1 + i] % 94);
    return s;
}

}  // namespace

TEST_CASE("M3, K5: a key's plaintext never appears in the library's output", "[M3][K5][K10][lifecycle]") {
    test_support::seeded_random random(1234);
    key_index index(random);
    permission_policy policy;
    policy.groups["user:pf"].access[resource::all()] = access_level::read;
    const auto now = at("2024-03-15T00:00:00Z");
    std::size_t leaks = 0;
    std::size_t checked = 0;

    for (int i = 0; i < 1000; ++i) {
        auto r = test_support::request("key " + std::to_string(i));
        r.groups = {"user:pf", "tenant-admin"};  // earns warnings, which are output too
        const bool own = i % 2 == 1;
        if (own) r.method = own_key{secret(random_own_key(random))};
        outputs out;
        out.add(printed(r));

        auto created = create_key(r, tenant_kind::shared, random, now);
        out.add(printed(created));
        for (const auto& w : created.warnings) out.add(printed(w));
        const auto plaintext = created.key.take()->reveal();
        out.add(printed(created.key));
        out.add(printed(secret(plaintext)));
        out.add(nlohmann::json(secret(plaintext)).dump());
        out.add_record(created.record);

        // Errors about the key itself: the same key made invalid by a suffix.
        auto bad = r;
        bad.method = own_key{secret(plaintext + " " + std::string(300, 'x'))};
        for (const auto& e : key_request_problems(bad)) out.add_result_error(e);
        bad.method = own_key{secret(plaintext + "\x01")};
        for (const auto& e : key_request_problems(bad)) out.add_result_error(e);

        // The index, authorization and its denials.
        (void)index.try_add("acme", created.record, secret(plaintext), policy);
        const auto dup = index.try_add("acme", created.record, secret(plaintext), policy);
        if (!dup) out.add_result_error(dup.error());
        for (const auto& tenant : {"acme", "other"}) {
            const http_headers h{{"x-synthetic-key", plaintext, true}, {"x-tenant-name", tenant, false}};
            for (auto level : {access_level::read, access_level::admin}) {
                const auto a = authorize(index, h, api_family::batch(), resource_ref::all(), level, now);
                out.add(a.message());
                out.add(printed(a));
            }
            out.add(printed(h.front()));
        }
        // A near miss, denied as unknown.
        out.add(
            authorize(index, plaintext + "z", "acme", api_family::batch(), resource_ref::all(), access_level::read, now)
                .message());

        // The lifecycle's records, results and errors.
        const auto revoked = deactivate_key(created.record, now);
        out.add_record(revoked);
        auto rotated = rotate_key(revoked, rotation_policy::from_now, random, now);
        out.add(printed(rotated));
        out.add_record(rotated.record);
        key_update bad_update;
        bad_update.name = plaintext + "\n";
        const auto refused = try_update_key(revoked, bad_update, now);
        if (!refused) out.add_result_error(refused.error());
        const auto not_confirmed = try_delete_key(revoked, deletion_confirmation::not_confirmed);
        if (!not_confirmed) out.add_result_error(not_confirmed.error());
        out.add(printed(delete_key(revoked, deletion_confirmation::confirmed)));

        leaks += out.containing(plaintext);
        checked += out.texts.size();
    }
    CHECK(leaks == 0);
    CHECK(checked > 30000);
}
