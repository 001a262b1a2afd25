// keyhook: definitions of error.hpp (see config.hpp for when they are compiled).
#pragma once

#include <ostream>
#include <string>

#include "keyhook/error.hpp"

namespace keyhook {

namespace detail {
class error_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "keyhook"; }
    std::string message(int ev) const override { return std::string(to_string(static_cast<errc>(ev))); }
};
}  // namespace detail

KEYHOOK_INLINE const std::error_category& error_category() noexcept {
    static const detail::error_category_impl instance;
    return instance;
}

KEYHOOK_INLINE bool error::is_equal(const error& a, const error& b) {
    return a.code == b.code && a.path == b.path && a.message == b.message;
}

KEYHOOK_INLINE std::ostream& error::print_to(std::ostream& os, const error& e) {
    return os << "[keyhook." << to_string(e.code) << "] " << e.what();
}

KEYHOOK_INLINE std::string error::what() const {
    std::string s;
    s.reserve(path.size() + 2 + message.size());
    if (!path.empty()) {
        detail::append_escaped(s, path);
        s += ": ";
    }
    detail::append_escaped(s, message, detail::escape_style::composed);
    return s;
}

KEYHOOK_INLINE exception::exception(keyhook::error e)
    : std::runtime_error("[keyhook." + std::string(to_string(e.code)) + "] " + e.what()), error_(std::move(e)) {}

namespace detail {

KEYHOOK_INLINE error current_host_error(std::string_view callable) {
    try {
        throw;
    } catch (const exception& e) {
        return e.error();
    } catch (const std::exception& e) {
        return error{errc::host_failure, std::string(callable), "the host's callable threw: " + quote_input(e.what())};
    } catch (...) {
        return error{errc::host_failure, std::string(callable), "the host's callable threw a non-standard exception"};
    }
}

KEYHOOK_INLINE error missing_member_error(std::string path) {
    return error{errc::missing_member, std::move(path), "required member is missing"};
}

KEYHOOK_INLINE error wrong_type_error(std::string path, std::string_view expected, std::string_view found) {
    std::string why = "expected ";
    why += expected;
    why += ", got ";
    why += found;
    return error{errc::wrong_type, std::move(path), std::move(why)};
}

KEYHOOK_INLINE error timestamp_error(std::string path, std::string_view text) {
    return error{errc::invalid_timestamp, std::move(path), "expected an ISO 8601 timestamp, got " + quote_input(text)};
}

KEYHOOK_INLINE std::string path_member(std::string_view base, std::string_view member) {
    return json_path_member(base, member);
}

KEYHOOK_INLINE std::string path_index(std::string_view base, std::size_t index) { return json_path_index(base, index); }

}  // namespace detail

KEYHOOK_INLINE std::string json_path_member(std::string_view base, std::string_view member) {
    std::string p;
    p.reserve(base.size() + 1 + member.size());
    p += base;
    if (!base.empty()) p += '.';
    p += member;
    return p;
}

KEYHOOK_INLINE std::string json_path_index(std::string_view base, std::size_t index) {
    std::string p(base);
    p += '[';
    p += std::to_string(index);
    p += ']';
    return p;
}

}  // namespace keyhook
