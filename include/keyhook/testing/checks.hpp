// keyhook: the checks behind the matchers of keyhook/testing/catch2.hpp and
// keyhook/testing/gtest.hpp. Framework-free, so that both frameworks test and
// word a check the same way. Each check has
//   matches(x)  whether x passes,
//   describe()  what is expected ("has status Active at 2026-...Z"),
//   explain(x)  what x is instead ("its status at 2026-...Z is Expired").
// Nothing here quotes a secret: keys are named by id, errors by what().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "keyhook/api_key.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook::testing {

// S1: the status a key has at `now` (derived from the clock, Revoked winning).
class status_check {
public:
    status_check(key_status expected, timestamp now) noexcept : expected_(expected), now_(now) {}

    [[nodiscard]] bool matches(const api_key& key) const noexcept { return status_at(key, now_) == expected_; }
    [[nodiscard]] std::string describe() const {
        return "has status " + std::string(to_string(expected_)) + " at " + format_timestamp(now_);
    }
    [[nodiscard]] std::string explain(const api_key& key) const {
        return "its status at " + format_timestamp(now_) + " is " + std::string(to_string(status_at(key, now_)));
    }

private:
    key_status expected_;
    timestamp now_;
};

// W1 to W3: the expiry warning shows at `now`.
class expiry_warning_check {
public:
    explicit expiry_warning_check(timestamp now) noexcept : now_(now) {}

    [[nodiscard]] bool matches(const api_key& key) const noexcept { return expiry_warning_at(key, now_); }
    [[nodiscard]] std::string describe() const { return "shows the expiry warning at " + format_timestamp(now_); }
    [[nodiscard]] std::string explain(const api_key& key) const {
        const auto status = status_at(key, now_);
        if (status != key_status::active)
            return "it is " + std::string(to_string(status)) + " at " + format_timestamp(now_) +
                   "; only an Active key shows the warning";
        const auto start = warning_start(key);
        if (!start) return "its period never warns";
        return "its warning starts at " + format_timestamp(*start);
    }

private:
    timestamp now_;
};

// K10: an authorization's outcome, denied for one reason or allowed.
class authorization_check {
public:
    // nullopt: the call is allowed.
    explicit authorization_check(std::optional<denial_reason> expected) noexcept : expected_(expected) {}

    [[nodiscard]] bool matches(const authorization& a) const noexcept { return a.reason() == expected_; }
    [[nodiscard]] std::string describe() const {
        return expected_ ? "is denied for " + std::string(to_string(*expected_)) : std::string("is allowed");
    }
    // message() names the key by its id at most, never by its plaintext.
    [[nodiscard]] std::string explain(const authorization& a) const { return "it is " + a.message(); }

private:
    std::optional<denial_reason> expected_;
};

// A refusal: an error of kind `code`, at `path` when one is given. Checks a
// keyhook::error, a keyhook::exception (the parse_ forms) or a result<T> (the
// try_ forms; a value never matches).
class error_check {
public:
    explicit error_check(errc code) noexcept : code_(code) {}
    error_check(errc code, std::string path) : code_(code), path_(std::move(path)) {}

    [[nodiscard]] bool matches(const error& e) const noexcept {
        return e.code == code_ && (!path_ || e.path == *path_);
    }
    [[nodiscard]] bool matches(const exception& e) const noexcept { return matches(e.error()); }
    template <class T>
    [[nodiscard]] bool matches(const result<T>& r) const noexcept {
        return !r.has_value() && matches(r.error());
    }

    [[nodiscard]] std::string describe() const {
        std::string s = "fails with keyhook." + std::string(to_string(code_));
        if (path_) s += " at path " + detail::quote_input(*path_);
        return s;
    }
    [[nodiscard]] std::string explain(const error& e) const {
        return "it failed with [keyhook." + std::string(to_string(e.code)) + "] " + e.what();
    }
    [[nodiscard]] std::string explain(const exception& e) const { return explain(e.error()); }
    template <class T>
    [[nodiscard]] std::string explain(const result<T>& r) const {
        return r.has_value() ? std::string("it holds a value") : explain(r.error());
    }

private:
    errc code_;
    std::optional<std::string> path_;
};

// A check and what it found at its latest match, for the framework adapters:
// a failure reads
// "<value> has status Active at ... (its status at ... is Expired)".
template <class Check>
class recorded_check {
public:
    explicit recorded_check(Check check) : check_(std::move(check)) {}

    template <class Arg>
    bool match(const Arg& arg) const {
        found_ = check_.explain(arg);
        return check_.matches(arg);
    }
    std::string describe() const {
        return found_.empty() ? check_.describe() : check_.describe() + " (" + found_ + ")";
    }
    const std::string& found() const noexcept { return found_; }
    const Check& check() const noexcept { return check_; }

private:
    Check check_;
    mutable std::string found_;
};

}  // namespace keyhook::testing
