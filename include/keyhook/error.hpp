// keyhook: errors. One error value (kind, where, why), an exception that carries
// it, a std::error_code category for the kind, and result<T> for the
// non-throwing twin of every fallible call.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "keyhook/config.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/detail/utf8.hpp"

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
    host_failure,                // a callable the host supplied (a random source) threw
};

// to_string(errc): a short, stable spelling of each kind ("invalid_timestamp").
namespace detail {
template <>
struct enum_names<errc> {
    static constexpr errc first = errc::syntax_error;
    static constexpr std::string_view values[] = {
        "syntax_error",      "missing_member",    "wrong_type",
        "invalid_timestamp", "invalid_value",     "out_of_range",
        "not_success",       "limit_exceeded",    "invalid_utf8",
        "unknown_event",     "invalid_endpoint",  "forbidden_address",
        "invalid_header",    "invalid_parameter", "invalid_name",
        "invalid_key",       "invalid_period",    "invalid_group",
        "not_confirmed",     "invalid_signature", "timestamp_out_of_tolerance",
        "unauthorized",      "conflicting_keys",  "method_not_allowed",
        "duplicate_member",  "host_failure"};
};
}  // namespace detail

[[nodiscard]] KEYHOOK_INLINE const std::error_category& error_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

// ---------------------------------------------------------------------------
// P1: printing text that came from input

namespace detail {

// Code points keyhook never prints raw (P1): the C0 controls, DEL and the C1
// controls (Unicode category Cc: ESC, CR, LF, CSI U+009B, NEL U+0085 ...),
// every Bidi_Control character (U+061C, U+200E, U+200F, U+202A to U+202E,
// U+2066 to U+2069), which reorder what a terminal or log viewer shows, and
// U+2028, U+2029, which some viewers take for line breaks.
constexpr bool is_unsafe_to_print(char32_t cp) noexcept {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// What else an escape covers besides the unsafe characters.
enum class escape_style : unsigned char {
    text,      // '\' doubled as well, so an escape in the output always stands for an escaped character
    quoted,    // '\' and '"' escaped: the text goes between double quotes
    composed,  // nothing else: for text already made of escaped parts (error messages)
};

// Appends s with every unsafe code point written as \uXXXX (C0 and DEL as
// \xHH) and every byte outside well-formed UTF-8 as \xHH. Ordinary text,
// non-ASCII letters included, is copied as it is.
KEYHOOK_INLINE void append_escaped(std::string& out, std::string_view s, escape_style style = escape_style::text);

}  // namespace detail

// P1: s escaped for printing. Control characters (C0, DEL, C1), bidirectional
// controls, U+2028 and U+2029 become \xHH or \uXXXX, bytes that are not
// UTF-8 become \xHH, and '\' is doubled; everything else is unchanged. The
// result can neither end a log line nor drive a terminal.
[[nodiscard]] KEYHOOK_INLINE std::string escape_text(std::string_view s);

// `os << keyhook::escaped(s)` writes escape_text(s).
struct escaped_text {
    std::string_view text;
};
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, escaped_text e);
[[nodiscard]] inline escaped_text escaped(std::string_view s) noexcept { return escaped_text{s}; }

// P1 for JSON text made by a serializer (nlohmann's dump()): the characters of
// is_unsafe_to_print that a serializer leaves raw inside strings (DEL, C1,
// bidirectional controls, U+2028, U+2029) become \u escapes, and a byte that is
// not UTF-8 becomes \ufffd. The result is JSON that reads to the same values.
// Outside strings a serializer writes only ASCII, so its layout is kept.
[[nodiscard]] KEYHOOK_INLINE std::string escape_json_text(std::string_view json);

// An error: its kind, where it is (a JSON path such as "data.result[3].expireAt",
// or a field name such as "endpoint"; empty for the whole input) and why.
// Messages never contain a secret: code that builds them quotes input through
// detail::quote_input, and never quotes a key. path and message keep the
// bytes they were given; what() and operator<< escape them (P1), since a path
// holds member names read from input.
struct error {
    errc code = errc::invalid_value;
    std::string path;
    std::string message;

    [[nodiscard]] KEYHOOK_INLINE std::string what() const;
};
[[nodiscard]] KEYHOOK_INLINE bool operator==(const error& a, const error& b);
[[nodiscard]] KEYHOOK_INLINE bool operator!=(const error& a, const error& b);
KEYHOOK_INLINE std::ostream& operator<<(std::ostream& os, const error& e);

// Thrown by the throwing forms. what() is "[keyhook.<kind>] <path>: <message>".
class exception : public std::runtime_error {
public:
    KEYHOOK_INLINE explicit exception(keyhook::error e);

    [[nodiscard]] const keyhook::error& error() const noexcept { return error_; }
    [[nodiscard]] errc code() const noexcept { return error_.code; }
    [[nodiscard]] const std::string& path() const noexcept { return error_.path; }

private:
    keyhook::error error_;
};

template <class T>
class result;

namespace detail {

template <class R>
struct is_result : std::false_type {};
template <class T>
struct is_result<result<T>> : std::true_type {};

template <class T, class = void>
struct is_printable : std::false_type {};
template <class T>
struct is_printable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>>
    : std::true_type {};

// Writes text escaped as escaped_text would, between double quotes (P1).
KEYHOOK_INLINE void print_quoted(std::ostream& os, std::string_view text);
// Writes "ok" (result<void>); out of line so that this header needs only <iosfwd>.
KEYHOOK_INLINE void print_ok(std::ostream& os);

// What `os << r` writes for a value: text between double quotes so that it
// cannot pass for an error (P1); other values by their own operator<<, which
// escapes what it quotes.
template <class T>
void print_value(std::ostream& os, const T& v) {
    if constexpr (std::is_convertible_v<const T&, std::string_view>) {
        print_quoted(os, std::string_view(v));
    } else {
        os << v;
    }
}

// std::invoke without <functional>: a callable, or a pointer to member applied
// to an object, a pointer or a reference_wrapper, as and_then/transform
// accept them.
template <class T, class = void>
struct has_get : std::false_type {};
template <class T>
struct has_get<T, std::void_t<decltype(std::declval<T&>().get())>> : std::true_type {};

template <class C, class M, class Obj, class... Args>
decltype(auto) invoke_member(M C::*pm, Obj&& obj, Args&&... args) {
    if constexpr (std::is_base_of_v<C, std::decay_t<Obj>>) {
        if constexpr (std::is_function_v<M>)
            return (std::forward<Obj>(obj).*pm)(std::forward<Args>(args)...);
        else
            return (std::forward<Obj>(obj).*pm);
    } else if constexpr (has_get<std::remove_reference_t<Obj>>::value) {
        return detail::invoke_member(pm, obj.get(), std::forward<Args>(args)...);
    } else {
        if constexpr (std::is_function_v<M>)
            return ((*std::forward<Obj>(obj)).*pm)(std::forward<Args>(args)...);
        else
            return ((*std::forward<Obj>(obj)).*pm);
    }
}

template <class F, class... Args>
std::invoke_result_t<F, Args...> invoke(F&& f, Args&&... args) {
    if constexpr (std::is_member_pointer_v<std::decay_t<F>>)
        return detail::invoke_member(f, std::forward<Args>(args)...);
    else
        return std::forward<F>(f)(std::forward<Args>(args)...);
}

// The result<U> that f(args...) makes in and_then/or_else: checked here so a
// wrong callable fails with one clear message.
template <class F, class... Args>
using monadic_result_t = std::remove_cv_t<std::remove_reference_t<std::invoke_result_t<F, Args...>>>;

// transform_error keeps keyhook::error as the error type (see docs/design.md).
template <class F>
error transformed_error(F&& f, const error& e) {
    static_assert(std::is_convertible_v<std::invoke_result_t<F, const error&>, error>,
                  "transform_error's function returns a keyhook::error");
    return detail::invoke(std::forward<F>(f), e);
}

}  // namespace detail

// The value of a non-throwing call: a T or the error that prevented it. The
// interface is std::expected<T, keyhook::error>'s (has_value, value, error,
// operator*, operator->, value_or, and_then, transform, or_else,
// transform_error), so that under C++23 result<T> can become an alias of it;
// docs/design.md lists what would differ. value() on an error throws
// keyhook::exception carrying the error, so a caller can switch forms late.
template <class T>
class result {
    static_assert(!std::is_same_v<std::decay_t<T>, keyhook::error>, "result<error> is ambiguous");
    static_assert(!std::is_reference_v<T>, "result holds values, as std::expected does");

public:
    using value_type = T;
    using error_type = keyhook::error;
    template <class U>
    using rebind = result<U>;

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

    // Precondition: has_value().
    [[nodiscard]] T& operator*() & noexcept { return *value_; }
    [[nodiscard]] const T& operator*() const& noexcept { return *value_; }
    [[nodiscard]] T&& operator*() && noexcept { return std::move(*value_); }
    [[nodiscard]] T* operator->() noexcept { return &*value_; }
    [[nodiscard]] const T* operator->() const noexcept { return &*value_; }

    // Precondition: !has_value().
    [[nodiscard]] const keyhook::error& error() const& noexcept { return error_; }
    [[nodiscard]] keyhook::error&& error() && noexcept { return std::move(error_); }

    template <class U>
    [[nodiscard]] T value_or(U&& fallback) const& {
        return has_value() ? *value_ : static_cast<T>(std::forward<U>(fallback));
    }
    template <class U>
    [[nodiscard]] T value_or(U&& fallback) && {
        return has_value() ? std::move(*value_) : static_cast<T>(std::forward<U>(fallback));
    }

    // f(value) -> result<U>; an error passes through unchanged.
    template <class F>
    auto and_then(F&& f) const& {
        using R = detail::monadic_result_t<F, const T&>;
        static_assert(detail::is_result<R>::value, "and_then's function returns a keyhook::result");
        if (has_value()) return detail::invoke(std::forward<F>(f), *value_);
        return R(error_);
    }
    template <class F>
    auto and_then(F&& f) && {
        using R = detail::monadic_result_t<F, T&&>;
        static_assert(detail::is_result<R>::value, "and_then's function returns a keyhook::result");
        if (has_value()) return detail::invoke(std::forward<F>(f), std::move(*value_));
        return R(std::move(error_));
    }

    // f(value) -> U, giving result<U> (result<void> when f returns nothing).
    template <class F>
    auto transform(F&& f) const& {
        using U = std::remove_cv_t<std::invoke_result_t<F, const T&>>;
        if (!has_value()) return result<U>(error_);
        if constexpr (std::is_void_v<U>) {
            detail::invoke(std::forward<F>(f), *value_);
            return result<U>();
        } else {
            return result<U>(detail::invoke(std::forward<F>(f), *value_));
        }
    }
    template <class F>
    auto transform(F&& f) && {
        using U = std::remove_cv_t<std::invoke_result_t<F, T&&>>;
        if (!has_value()) return result<U>(std::move(error_));
        if constexpr (std::is_void_v<U>) {
            detail::invoke(std::forward<F>(f), std::move(*value_));
            return result<U>();
        } else {
            return result<U>(detail::invoke(std::forward<F>(f), std::move(*value_)));
        }
    }

    // f(error) -> result<T>; a value passes through unchanged.
    template <class F>
    result or_else(F&& f) const& {
        static_assert(std::is_same_v<detail::monadic_result_t<F, const keyhook::error&>, result>,
                      "or_else's function returns the same keyhook::result");
        if (has_value()) return *this;
        return detail::invoke(std::forward<F>(f), error_);
    }
    template <class F>
    result or_else(F&& f) && {
        static_assert(std::is_same_v<detail::monadic_result_t<F, keyhook::error&&>, result>,
                      "or_else's function returns the same keyhook::result");
        if (has_value()) return std::move(*this);
        return detail::invoke(std::forward<F>(f), std::move(error_));
    }

    // f(error) -> keyhook::error (to add context, for instance a path prefix).
    template <class F>
    result transform_error(F&& f) const& {
        if (has_value()) return *this;
        return detail::transformed_error(std::forward<F>(f), error_);
    }
    template <class F>
    result transform_error(F&& f) && {
        if (has_value()) return std::move(*this);
        return detail::transformed_error(std::forward<F>(f), error_);
    }

    friend bool operator==(const result& a, const result& b) {
        if (a.has_value() != b.has_value()) return false;
        return a.has_value() ? *a.value_ == *b.value_ : a.error_ == b.error_;
    }
    friend bool operator!=(const result& a, const result& b) { return !(a == b); }

private:
    void check() const {
        if (!has_value()) throw exception(error_);
    }
    // An optional and a plain error instead of std::variant<T, error>: the same
    // behaviour for much less template work in every translation unit.
    std::optional<T> value_;
    keyhook::error error_;
};

// The result of a call that gives nothing back but can fail (a check).
// Default-constructed, it holds success, as std::expected<void, E> does.
template <>
class result<void> {
public:
    using value_type = void;
    using error_type = keyhook::error;
    template <class U>
    using rebind = result<U>;

    result() noexcept = default;
    result(keyhook::error e) : failed_(true), error_(std::move(e)) {}  // NOLINT: implicit on purpose

    [[nodiscard]] bool has_value() const noexcept { return !failed_; }
    explicit operator bool() const noexcept { return has_value(); }

    // Throws keyhook::exception on an error, does nothing otherwise.
    void value() const {
        if (failed_) throw exception(error_);
    }
    void operator*() const noexcept {}

    [[nodiscard]] const keyhook::error& error() const& noexcept { return error_; }
    [[nodiscard]] keyhook::error&& error() && noexcept { return std::move(error_); }

    template <class F>
    auto and_then(F&& f) const {
        using R = detail::monadic_result_t<F>;
        static_assert(detail::is_result<R>::value, "and_then's function returns a keyhook::result");
        if (has_value()) return detail::invoke(std::forward<F>(f));
        return R(error_);
    }
    template <class F>
    auto transform(F&& f) const {
        using U = std::remove_cv_t<std::invoke_result_t<F>>;
        if (!has_value()) return result<U>(error_);
        if constexpr (std::is_void_v<U>) {
            detail::invoke(std::forward<F>(f));
            return result<U>();
        } else {
            return result<U>(detail::invoke(std::forward<F>(f)));
        }
    }
    template <class F>
    result or_else(F&& f) const {
        static_assert(std::is_same_v<detail::monadic_result_t<F, const keyhook::error&>, result>,
                      "or_else's function returns keyhook::result<void>");
        if (has_value()) return *this;
        return detail::invoke(std::forward<F>(f), error_);
    }
    template <class F>
    result transform_error(F&& f) const {
        if (has_value()) return *this;
        return detail::transformed_error(std::forward<F>(f), error_);
    }

    friend bool operator==(const result& a, const result& b) {
        return a.failed_ == b.failed_ && (!a.failed_ || a.error_ == b.error_);
    }
    friend bool operator!=(const result& a, const result& b) { return !(a == b); }

private:
    bool failed_ = false;
    keyhook::error error_;
};

// Prints the value (text quoted and escaped, P1) or the error as
// `[keyhook.<kind>] <path>: <message>`; result<void> prints "ok" or the error.
template <class T, class = std::enable_if_t<std::is_void_v<T> || detail::is_printable<T>::value>>
std::ostream& operator<<(std::ostream& os, const result<T>& r) {
    if (!r.has_value()) return os << r.error();
    if constexpr (std::is_void_v<T>) {
        detail::print_ok(os);
        return os;
    } else {
        detail::print_value(os, *r);
        return os;
    }
}

namespace detail {

// Quotes untrusted input for an error message: at most `limit` bytes of s
// (never part of a character), escaped as in escape_text with '"' escaped as
// well, between double quotes; "..." follows when s was cut.
KEYHOOK_INLINE std::string quote_input(std::string_view s, std::size_t limit = 64);

// The error of a try_ function whose host callable threw, for its catch (...)
// block (the try_ contract: nothing escapes). A keyhook::exception passes its
// error on; any other exception becomes errc::host_failure at `callable` (the
// parameter's name, such as "random") with its what() quoted (P1).
KEYHOOK_INLINE error current_host_error(std::string_view callable);

// The one wording of each fault that several parsers report (issue 12): a
// missing member, a member of the wrong JSON type (`found` is nlohmann's
// type_name(): "number", "array", ...) and text that is not a T1 timestamp.
KEYHOOK_INLINE error missing_member_error(std::string path);
KEYHOOK_INLINE error wrong_type_error(std::string path, std::string_view expected, std::string_view found);
template <class Json>
error wrong_type(std::string path, std::string_view expected, const Json& found) {
    return wrong_type_error(std::move(path), expected, found.type_name());
}
KEYHOOK_INLINE error timestamp_error(std::string path, std::string_view text);

// Appends ".member" or "[index]" to a JSON path.
KEYHOOK_INLINE std::string path_member(std::string_view base, std::string_view member);
KEYHOOK_INLINE std::string path_index(std::string_view base, std::size_t index);

// The parameter type of a DOM reader declared `template <class Json =
// nlohmann::json> f(const non_deduced_t<Json>&)`: it accepts what a plain
// `const nlohmann::json&` did, and its body is compiled only where it is called.
template <class T>
struct non_deduced {
    using type = T;
};
template <class T>
using non_deduced_t = typename non_deduced<T>::type;

}  // namespace detail
}  // namespace keyhook

template <>
struct std::is_error_code_enum<keyhook::errc> : std::true_type {};

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/error.ipp"
#endif
