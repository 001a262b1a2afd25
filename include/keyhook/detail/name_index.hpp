// keyhook: the index behind the uniqueness check of a webhook list's names
// (H2: a name identifies a webhook). Included by impl/webhook_validation.ipp,
// and by the test that counts its work (tests/webhooks/complexity_test.cpp);
// a hash table is no part of the public interface.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace keyhook::detail::hooks {

// std::hash of the name. Not noexcept, so that the standard library keeps
// each hash and compares names only when their hashes are equal.
struct name_hash {
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// One hash lookup per name, so a list of n names sharing a long prefix costs
// time in proportion to its bytes (the pairwise comparison it replaces was
// quadratic, J3). Holds views: the names must outlive it and stay in place.
// Hash and Equal are parameters so that a test can count the bytes they read.
template <class Hash = name_hash, class Equal = std::equal_to<std::string_view>>
class basic_name_index {
public:
    static constexpr std::size_t none = static_cast<std::size_t>(-1);

    explicit basic_name_index(std::size_t expected, Hash hash = Hash(), Equal equal = Equal())
        : seen_(expected, std::move(hash), std::move(equal)) {}

    // The index of an earlier element named `name`, or `none` after recording `index` for it.
    std::size_t add(std::string_view name, std::size_t index) {
        const auto [it, inserted] = seen_.emplace(name, index);
        return inserted ? none : it->second;
    }

private:
    std::unordered_map<std::string_view, std::size_t, Hash, Equal> seen_;
};

// The library's index.
using name_index = basic_name_index<>;

}  // namespace keyhook::detail::hooks
