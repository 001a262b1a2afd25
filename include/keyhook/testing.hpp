// keyhook: builders for the tests of host services. A key with sensible
// defaults, a list-call response as JSON text, and a fixed clock value, so
// that a host's test reads in three lines:
//
//     auto key = keyhook::testing::key_builder().name("billing").expires_in(date::days{3}).build();
//     auto body = keyhook::testing::list_response_builder().add(key).build();
//     auto page = keyhook::parse_key_list(body);
//
// Framework-free: it includes no test framework and specializes nothing of
// one. For printers and matchers include keyhook/testing/catch2.hpp (Catch2
// v2) or keyhook/testing/gtest.hpp (GoogleTest), which include this header.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <date/date.h>
#include <nlohmann/json.hpp>

#include "keyhook/api_key.hpp"
#include "keyhook/detail/api_key_table.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook::testing {

// The clock value the builders arrange keys around: 2026-01-15T10:00:00.000Z.
inline constexpr timestamp fixed_now{date::sys_days{date::year{2026} / 1 / 15}.time_since_epoch() +
                                     std::chrono::hours{10}};

// A UUID-shaped id (version 4 layout) whose last group is `n`, for tests that
// need many distinct, readable ids: test_uuid(7) is "00000000-0000-4000-8000-000000000007"
// (only the low 48 bits of n are used).
[[nodiscard]] inline std::string test_uuid(std::uint64_t n) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string s = "00000000-0000-4000-8000-000000000000";
    for (std::size_t i = 0; i < 12 && n != 0; ++i, n >>= 4) s[s.size() - 1 - i] = hex[n & 0xf];
    return s;
}

// Builds an api_key. Defaults: id test_uuid(1), name "test key", listed
// status Active, type "Synthetic", group "user:pf", a 30-day validity period
// centred on fixed_now (so the key is Active at fixed_now), created and
// updated at activeFrom, masked as a 36-character key would be.
class key_builder {
public:
    key_builder() {
        key_.id = key_id(test_uuid(1));
        key_.user_id = test_uuid(0xabc);
        key_.name = "test key";
        key_.description = "a key built for a test";
        key_.status = key_status::active;
        key_.type = "Synthetic";
        key_.groups = {"user:pf"};
        key_.created_by = "tester@example.com";
        key_.active_from = fixed_now - date::days{15};
        key_.expire_at = fixed_now + date::days{15};
        key_.created_at = key_.active_from;
        key_.updated_at = key_.active_from;
        masked_from_id();
    }

    // The id test_uuid(n) and the name "test key n": distinct keys in one line.
    static key_builder numbered(std::uint64_t n) {
        key_builder b;
        b.key_.id = key_id(test_uuid(n));
        b.key_.name = "test key " + std::to_string(n);
        b.masked_from_id();
        return b;
    }

    key_builder& id(std::string v) {
        key_.id = key_id(std::move(v));
        masked_from_id();
        return *this;
    }
    key_builder& user_id(std::optional<std::string> v) { return set(&api_key::user_id, std::move(v)); }
    key_builder& name(std::string v) { return set(&api_key::name, std::move(v)); }
    key_builder& description(std::optional<std::string> v) { return set(&api_key::description, std::move(v)); }
    key_builder& masked(std::optional<std::string> v) { return set(&api_key::masked, std::move(v)); }
    // The platform's masked form of `plaintext` (M1, M2); the plaintext is not kept.
    key_builder& masked_from(const secret& plaintext) {
        key_.masked = plaintext.masked();
        return *this;
    }
    key_builder& status(key_status v) { return set(&api_key::status, v); }
    key_builder& revoked() { return status(key_status::revoked); }
    key_builder& type(std::optional<std::string> v) { return set(&api_key::type, std::move(v)); }
    key_builder& groups(std::vector<std::string> v) { return set(&api_key::groups, std::move(v)); }
    key_builder& groups(std::initializer_list<std::string> v) { return set(&api_key::groups, v); }
    key_builder& add_group(std::string v) {
        key_.groups.push_back(std::move(v));
        return *this;
    }
    key_builder& created_at(std::optional<timestamp> v) { return set(&api_key::created_at, v); }
    key_builder& created_by(std::optional<std::string> v) { return set(&api_key::created_by, std::move(v)); }
    key_builder& updated_at(std::optional<timestamp> v) { return set(&api_key::updated_at, v); }
    key_builder& last_used_at(std::optional<timestamp> v) { return set(&api_key::last_used_at, v); }
    key_builder& active_from(timestamp v) { return set(&api_key::active_from, v); }
    key_builder& expire_at(timestamp v) { return set(&api_key::expire_at, v); }
    key_builder& period(timestamp from, timestamp until) {
        key_.active_from = from;
        key_.expire_at = until;
        return *this;
    }
    // Keeps activeFrom; expireAt = now + d (d may be negative: already expired).
    key_builder& expires_in(microseconds d, timestamp now = fixed_now) {
        key_.expire_at = now + d;
        return *this;
    }
    // Keeps the period's length; moves it to start at `from`.
    key_builder& starts_at(timestamp from) {
        const auto length = key_.expire_at - key_.active_from;
        key_.active_from = from;
        key_.expire_at = from + length;
        return *this;
    }
    // activeFrom = from, expireAt = from + d.
    key_builder& lasting(microseconds d, timestamp from) { return period(from, from + d); }

    // Every optional member absent (and no groups): the least a record may carry (L2).
    key_builder& minimal() {
        detail::clear_optional_members(key_);
        return *this;
    }

    // Any member, named by its pointer: a member added to api_key needs no setter here.
    template <class M, class V>
    key_builder& with(M api_key::*member, V&& v) {
        key_.*member = std::forward<V>(v);
        return *this;
    }

    [[nodiscard]] api_key build() const { return key_; }

private:
    template <class M, class V>
    key_builder& set(M api_key::*member, V&& v) {
        return with(member, std::forward<V>(v));
    }

    // A 36-character key's masked form (3 + 30 '*' + 3), derived from the id.
    void masked_from_id() { key_.masked = mask_key(key_.id.str()); }

    api_key key_;
};

// Builds the text of a list-call response (spec 4.1). count defaults to the
// number of records, page to 1, pageSize to 100; status to "success".
class list_response_builder {
public:
    list_response_builder& add(const api_key& key) {
        nlohmann::json j = key;
        items_.push_back(j.dump());
        return *this;
    }
    list_response_builder& add(const key_builder& builder) { return add(builder.build()); }
    list_response_builder& add(const std::vector<api_key>& keys) {
        for (const auto& k : keys) add(k);
        return *this;
    }
    // A record as raw JSON text, inserted verbatim (for malformed or odd records).
    list_response_builder& add_raw(std::string json_text) {
        items_.push_back(std::move(json_text));
        return *this;
    }
    list_response_builder& count(std::int64_t v) { return set(&list_response_builder::count_, v); }
    list_response_builder& page(std::int64_t v) { return set(&list_response_builder::page_, v); }
    list_response_builder& page_size(std::int64_t v) { return set(&list_response_builder::page_size_, v); }
    list_response_builder& status(std::string v) { return set(&list_response_builder::status_, std::move(v)); }
    // A failed call: status "error" with the body's message and errorCode.
    list_response_builder& failure(std::string message, std::string error_code) {
        status_ = "error";
        message_ = std::move(message);
        error_code_ = std::move(error_code);
        return *this;
    }

    [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }

    [[nodiscard]] std::string build() const {
        std::string out = "{\"status\":";
        out += nlohmann::json(status_).dump();
        if (message_) {
            out += ",\"message\":";
            out += nlohmann::json(*message_).dump();
        }
        if (error_code_) {
            out += ",\"errorCode\":";
            out += nlohmann::json(*error_code_).dump();
        }
        out += ",\"data\":{\"count\":";
        out += std::to_string(count_ ? *count_ : static_cast<std::int64_t>(items_.size()));
        out += ",\"page\":";
        out += std::to_string(page_);
        out += ",\"pageSize\":";
        out += std::to_string(page_size_);
        out += ",\"result\":[";
        for (std::size_t i = 0; i < items_.size(); ++i) {
            if (i != 0) out += ',';
            out += items_[i];
        }
        out += "]}}";
        return out;
    }

private:
    template <class M, class V>
    list_response_builder& set(M list_response_builder::*member, V&& v) {
        this->*member = std::forward<V>(v);
        return *this;
    }

    std::vector<std::string> items_;
    std::optional<std::int64_t> count_;
    std::int64_t page_ = 1;
    std::int64_t page_size_ = 100;
    std::string status_ = "success";
    std::optional<std::string> message_;
    std::optional<std::string> error_code_;
};

}  // namespace keyhook::testing
