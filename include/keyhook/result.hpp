// keyhook: result<T>, the value of a non-throwing call: a T or the
// keyhook::error that prevented it, with the interface of
// std::expected<T, keyhook::error>. It includes keyhook/error.hpp; the
// dependency is one way (error.hpp does not include this header).
#pragma once

#include <iosfwd>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "keyhook/config.hpp"
#include "keyhook/error.hpp"
#include "keyhook/escape.hpp"

namespace keyhook {

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
// A result's value, if it has one: std::optional's storage without its
// constructor overloads and their constraints, which each of the thirty-odd
// result types a translation unit names would instantiate again
// (docs/performance.md, "Compile time").
template <class T>
class value_slot {
    static constexpr bool nothrow_move_assignable =
        std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>;

public:
    value_slot() noexcept {}  // NOLINT: the union holds no value yet
    explicit value_slot(T&& v) : value_(std::move(v)), engaged_(true) {}
    value_slot(const value_slot& other) {
        if (other.engaged_) emplace(other.value_);
    }
    value_slot(value_slot&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
        if (other.engaged_) emplace(std::move(other.value_));
    }
    value_slot& operator=(const value_slot& other) {
        assign(other);
        return *this;
    }
    value_slot& operator=(value_slot&& other) noexcept(nothrow_move_assignable) {
        assign(std::move(other));
        return *this;
    }
    ~value_slot() { reset(); }

    [[nodiscard]] bool has_value() const noexcept { return engaged_; }
    [[nodiscard]] T& operator*() & noexcept { return value_; }
    [[nodiscard]] const T& operator*() const& noexcept { return value_; }
    [[nodiscard]] T&& operator*() && noexcept { return std::move(value_); }

private:
    template <class U>
    void emplace(U&& v) {
        ::new (static_cast<void*>(&value_)) T(std::forward<U>(v));
        engaged_ = true;
    }
    void reset() noexcept {
        if (engaged_) value_.~T();
        engaged_ = false;
    }
    template <class Slot>
    void assign(Slot&& other) {
        if (!other.engaged_)
            reset();
        else if (engaged_)
            value_ = std::forward<Slot>(other).value_;
        else
            emplace(std::forward<Slot>(other).value_);
    }

    union {
        T value_;
    };
    bool engaged_ = false;
};

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
    // A value slot and a plain error instead of std::variant<T, error>: the same
    // behaviour for much less template work in every translation unit.
    detail::value_slot<T> value_;
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

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/result.ipp"
#endif
