// keyhook: errors. One error value (kind, where, why), an exception that carries
// it, a std::error_code category for the kind, and result<T> for the
// non-throwing twin of every fallible call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

namespace keyhook {

// What went wrong, independent of where. Values are stable: append, never
// reorder (they appear in std::error_code values hosts may log).
enum class errc {
    syntax_error = 1,            // the input is not well-formed JSON (or not a URL, ...)
    missing_member,              // a required member is absent
    wrong_type,                  // a member has the wrong JSON type
    invalid_timestamp,           // not a timestamp of rule T1, or out of range (T2, T3)
    invalid_value,               // right type, value not allowed (unknown status, bad UUID, ...)
    out_of_range,                // a number outside its allowed range (page < 1, ...)
    not_success,                 // the list call's envelope says the call failed (L2)
    limit_exceeded,              // input larger or deeper than keyhook accepts
    invalid_utf8,                // a string is not valid UTF-8
    unknown_event,               // an event name that is not one of the 53 (H3, H5)
    invalid_endpoint,            // a webhook endpoint that breaks H1
    forbidden_address,           // an endpoint address in a refused range (H1)
    invalid_header,              // a header name or value that breaks H2
    invalid_parameter,           // a query parameter that breaks H2
    invalid_name,                // a name or description that breaks K3
    invalid_key,                 // an own key that breaks K2
    invalid_period,              // activeFrom >= expireAt (K3)
    invalid_group,               // a group name that breaks K3
    not_confirmed,               // an action that needs confirmation was not confirmed (K8)
    invalid_signature,           // a signature that does not verify (B1)
    timestamp_out_of_tolerance,  // a signed timestamp too old or too new (B1)
    unauthorized,                // a receiving-side key check failed (H7)
    conflicting_keys,            // x-api-key and api_key both present and different (H7)
    method_not_allowed,          // a received webhook call whose method is not POST (spec 4.4)
    duplicate_member,            // a member name repeated in one JSON object (J1)
};

// Short, stable spelling of each kind ("invalid_timestamp").
[[nodiscard]] constexpr std::string_view to_string(errc e) noexcept {
    switch (e) {
        case errc::syntax_error: return "syntax_error";
        case errc::missing_member: return "missing_member";
        case errc::wrong_type: return "wrong_type";
        case errc::invalid_timestamp: return "invalid_timestamp";
        case errc::invalid_value: return "invalid_value";
        case errc::out_of_range: return "out_of_range";
        case errc::not_success: return "not_success";
        case errc::limit_exceeded: return "limit_exceeded";
        case errc::invalid_utf8: return "invalid_utf8";
        case errc::unknown_event: return "unknown_event";
        case errc::invalid_endpoint: return "invalid_endpoint";
        case errc::forbidden_address: return "forbidden_address";
        case errc::invalid_header: return "invalid_header";
        case errc::invalid_parameter: return "invalid_parameter";
        case errc::invalid_name: return "invalid_name";
        case errc::invalid_key: return "invalid_key";
        case errc::invalid_period: return "invalid_period";
        case errc::invalid_group: return "invalid_group";
        case errc::not_confirmed: return "not_confirmed";
        case errc::invalid_signature: return "invalid_signature";
        case errc::timestamp_out_of_tolerance: return "timestamp_out_of_tolerance";
        case errc::unauthorized: return "unauthorized";
        case errc::conflicting_keys: return "conflicting_keys";
        case errc::method_not_allowed: return "method_not_allowed";
        case errc::duplicate_member: return "duplicate_member";
    }
    return "unknown";
}

inline std::ostream& operator<<(std::ostream& os, errc e) { return os << to_string(e); }

namespace detail {
class error_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "keyhook"; }
    std::string message(int ev) const override { return std::string(to_string(static_cast<errc>(ev))); }
};
}  // namespace detail

[[nodiscard]] inline const std::error_category& error_category() noexcept {
    static const detail::error_category_impl instance;
    return instance;
}

[[nodiscard]] inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

// An error: its kind, where it is (a JSON path such as "data.result[3].expireAt",
// or a field name such as "endpoint"; empty for the whole input) and why.
// Messages never contain a secret: code that builds them quotes input through
// detail::quote_input, and never quotes a key.
struct error {
    errc code = errc::invalid_value;
    std::string path;
    std::string message;

    [[nodiscard]] std::string what() const {
        if (path.empty()) return message;
        std::string s;
        s.reserve(path.size() + 2 + message.size());
        s += path;
        s += ": ";
        s += message;
        return s;
    }

    friend bool operator==(const error& a, const error& b) {
        return a.code == b.code && a.path == b.path && a.message == b.message;
    }
    friend bool operator!=(const error& a, const error& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const error& e) {
        return os << "[keyhook." << to_string(e.code) << "] " << e.what();
    }
};

// Thrown by the throwing forms. what() is "[keyhook.<kind>] <path>: <message>".
class exception : public std::runtime_error {
public:
    explicit exception(keyhook::error e)
        : std::runtime_error("[keyhook." + std::string(to_string(e.code)) + "] " + e.what()), error_(std::move(e)) {}

    [[nodiscard]] const keyhook::error& error() const noexcept { return error_; }
    [[nodiscard]] errc code() const noexcept { return error_.code; }
    [[nodiscard]] const std::string& path() const noexcept { return error_.path; }

private:
    keyhook::error error_;
};

// The value of a non-throwing call: either a T or the error that prevented it.
// value() on an error throws keyhook::exception, so a caller can switch forms late.
template <class T>
class result {
    static_assert(!std::is_same_v<std::decay_t<T>, keyhook::error>, "result<error> is ambiguous");

public:
    using value_type = T;

    result(T value) : value_(std::move(value)) {}       // NOLINT: implicit on purpose
    result(keyhook::error e) : error_(std::move(e)) {}  // NOLINT

    [[nodiscard]] bool has_value() const noexcept { return value_.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }

    [[nodiscard]] T& value() & {
        check();
        return *value_;
    }
    [[nodiscard]] const T& value() const& {
        check();
        return *value_;
    }
    [[nodiscard]] T&& value() && {
        check();
        return std::move(*value_);
    }

    [[nodiscard]] T& operator*() & noexcept { return *value_; }
    [[nodiscard]] const T& operator*() const& noexcept { return *value_; }
    [[nodiscard]] T* operator->() noexcept { return &*value_; }
    [[nodiscard]] const T* operator->() const noexcept { return &*value_; }

    // Precondition: !has_value().
    [[nodiscard]] const keyhook::error& error() const& noexcept { return error_; }

    template <class U>
    [[nodiscard]] T value_or(U&& fallback) const& {
        return has_value() ? *value_ : static_cast<T>(std::forward<U>(fallback));
    }

private:
    void check() const {
        if (!has_value()) throw exception(error_);
    }
    // An optional and a plain error instead of std::variant<T, error>: the same
    // behaviour for much less template work in every translation unit.
    std::optional<T> value_;
    keyhook::error error_;
};

namespace detail {

// Quotes untrusted input for an error message: at most `limit` bytes, control
// characters and quotes escaped, so a message stays one readable line.
inline std::string quote_input(std::string_view s, std::size_t limit = 64) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(std::min(s.size(), limit) + 8);
    out += '"';
    std::size_t n = 0;
    for (char ch : s) {
        if (n++ == limit) {
            out += "\"...";
            return out;
        }
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        } else {
            out += ch;
        }
    }
    out += '"';
    return out;
}

// Appends ".member" or "[index]" to a JSON path.
inline std::string path_member(std::string_view base, std::string_view member) {
    std::string p;
    p.reserve(base.size() + 1 + member.size());
    p += base;
    if (!base.empty()) p += '.';
    p += member;
    return p;
}

// The parameter type of a DOM reader declared `template <class Json =
// nlohmann::json> f(const non_deduced_t<Json>&)`: it accepts what a plain
// `const nlohmann::json&` did, and its body is compiled only where it is called.
template <class T>
struct non_deduced {
    using type = T;
};
template <class T>
using non_deduced_t = typename non_deduced<T>::type;

inline std::string path_index(std::string_view base, std::size_t index) {
    std::string p(base);
    p += '[';
    p += std::to_string(index);
    p += ']';
    return p;
}

}  // namespace detail
}  // namespace keyhook

template <>
struct std::is_error_code_enum<keyhook::errc> : std::true_type {};
