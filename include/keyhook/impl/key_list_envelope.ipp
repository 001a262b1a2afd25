// keyhook: the envelope of a list-call response (rule L2): status, and the
// message and errorCode of a failure, at the top; count, page, pageSize and
// result inside data. Used by impl/key_list_sax.ipp, which tells it which
// member each value belongs to; it keeps what it reads and says, once the
// text is read, what the envelope lacks or got wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/json_kind.hpp"
#include "keyhook/error.hpp"
#include "keyhook/key_list.hpp"

namespace keyhook::detail {

// A template only so that its member functions are compiled where they are
// used (a deferred definition, config.hpp), not in every translation unit that
// includes the JSON readers.
template <class D = void>
class key_list_envelope {
public:
    // The members read; any other is skipped.
    enum class member : unsigned char { ignore, status, message, error_code, data, count, page, page_size, result };

    // A member of the top-level object, or of data.
    static member of_envelope(std::string_view name) noexcept {
        if (name == "status") return member::status;
        if (name == "data") return member::data;
        if (name == "message") return member::message;
        if (name == "errorCode") return member::error_code;
        return member::ignore;
    }
    static member of_data(std::string_view name) noexcept {
        if (name == "result") return member::result;
        if (name == "count") return member::count;
        if (name == "page") return member::page;
        if (name == "pageSize") return member::page_size;
        return member::ignore;
    }

    // The members read as an integer (J2: a number no double holds there refuses the page).
    static bool integral(member m) noexcept {
        return m == member::count || m == member::page || m == member::page_size;
    }

    static std::string_view path(member m) noexcept {
        switch (m) {
            case member::status: return "status";
            case member::data: return "data";
            case member::count: return "data.count";
            case member::page: return "data.page";
            case member::page_size: return "data.pageSize";
            case member::result: return "data.result";
            case member::ignore:
            case member::message:
            case member::error_code: return {};
        }
        return {};
    }

    // The containers the list reader enters.
    void data_opened() noexcept { data_seen_ = true; }
    void result_opened() noexcept { result_seen_ = true; }

    void string(member m, const std::string& val) {
        switch (m) {
            case member::status:
                status_seen_ = true;
                status_ok_ = ascii_iequal(val, "success");
                if (!status_ok_) status_text_ = quote_input(val);
                return;
            case member::message: message_ = quote_input(val); return;
            case member::error_code: error_code_ = quote_input(val); return;
            case member::ignore: return;
            case member::data:
            case member::count:
            case member::page:
            case member::page_size:
            case member::result: return wrong_type(m, json_kind::string);
        }
    }

    // How a number token reads: integers carry their value, the others their text.
    enum class numeric : unsigned char { integer, too_large, floating };

    void number(member m, std::int64_t v, numeric n, std::string_view text) {
        if (integral(m)) {
            if (n == numeric::floating) {
                report(m, error{errc::wrong_type, std::string(path(m)), "expected an integer, got " + quote_input(text)});
            } else if (n == numeric::too_large || v < 0) {
                report(m, error{errc::out_of_range, std::string(path(m)),
                                "expected a non-negative 64-bit integer, got " +
                                    (n == numeric::integer ? std::to_string(v) : std::string(text))});
            } else {
                (m == member::count ? count_ : m == member::page ? page_ : page_size_) = v;
            }
        } else if (m == member::error_code) {
            error_code_ = n == numeric::integer ? std::to_string(v) : quote_input(text);
        } else if (m != member::message) {
            other(m, json_kind::number);
        }
    }

    // A value of another kind: wrong where a type is expected, except null,
    // which stands for a missing member (as in try_api_key_from_json).
    void other(member m, json_kind k) {
        if (k != json_kind::null) wrong_type(m, k);
    }

    // What the envelope lacks or got wrong, in the order L2 reports it; none
    // when the page may be built.
    [[nodiscard]] std::optional<error> fault() {
        if (!status_seen_) {
            if (status_error_) return std::move(*status_error_);
            return missing_member_error("status");
        }
        if (!status_ok_) {
            std::string m = "expected \"success\", got " + status_text_;
            if (!error_code_.empty()) m += ", errorCode " + error_code_;
            if (!message_.empty()) m += ", message " + message_;
            return error{errc::not_success, "status", std::move(m)};
        }
        if (envelope_error_) return std::move(*envelope_error_);
        if (!data_seen_) return missing_member_error("data");
        if (!count_) return missing_member_error("data.count");
        if (!page_) return missing_member_error("data.page");
        if (!page_size_) return missing_member_error("data.pageSize");
        if (!result_seen_) return missing_member_error("data.result");
        return std::nullopt;
    }

    [[nodiscard]] const std::optional<std::int64_t>& page_size() const noexcept { return page_size_; }

    // The page's figures (once fault() found none missing).
    void fill(key_list_page& p) const noexcept {
        p.count = count_.value_or(0);
        p.page = page_.value_or(0);
        p.page_size = page_size_.value_or(0);
    }

private:
    void wrong_type(member m, json_kind k) {
        std::string_view expected;
        switch (m) {
            case member::status: expected = "a string"; break;
            case member::data: expected = "an object"; break;
            case member::result: expected = "an array of records"; break;
            case member::count:
            case member::page:
            case member::page_size: expected = "an integer"; break;
            case member::ignore:
            case member::message:
            case member::error_code: return;  // any type will do
        }
        report(m, wrong_type_error(std::string(path(m)), expected, json_kind_name(k)));
    }

    // The first fault of status is kept apart: it matters only when status is missing.
    void report(member m, error e) {
        auto& slot = m == member::status ? status_error_ : envelope_error_;
        if (!slot) slot = std::move(e);
    }

    bool status_seen_ = false;
    bool status_ok_ = false;
    bool data_seen_ = false;
    bool result_seen_ = false;
    std::string status_text_;  // quoted, only when not "success"
    std::string message_;      // quoted
    std::string error_code_;   // quoted, or the number
    std::optional<std::int64_t> count_, page_, page_size_;
    std::optional<error> status_error_, envelope_error_;
};

}  // namespace keyhook::detail
