// keyhook: the list call (spec 4.1, rules L1 to L3). Builds the request,
// decodes the response straight into api_key records with nlohmann's SAX
// interface (no DOM), and selects the default view of the keys.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/json_parser.hpp"
#include "keyhook/api_key.hpp"
#include "keyhook/error.hpp"
#include "keyhook/http.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// ---------------------------------------------------------------------------
// L1: the request

inline constexpr std::int64_t default_list_page = 1;
inline constexpr std::int64_t default_list_page_size = 100;

// What to ask the list call for. `token` is the bearer token (a secret: it
// prints masked). An empty `type` or `status` leaves that parameter out.
struct key_list_query {
    std::string base_url;                        // the utilities host, e.g. "https://utilities.example.com"
    std::string tenant;                          // percent-encoded into the path
    std::int64_t page = default_list_page;       // `_page`, at least 1
    std::int64_t size = default_list_page_size;  // `_size`, at least 1
    std::string type = "synthetic";
    std::optional<std::string> status;  // e.g. "active"; none: every status
    secret token;

    friend bool operator==(const key_list_query& a, const key_list_query& b) {
        return a.base_url == b.base_url && a.tenant == b.tenant && a.page == b.page && a.size == b.size &&
               a.type == b.type && a.status == b.status && a.token == b.token;
    }
    friend bool operator!=(const key_list_query& a, const key_list_query& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_list_query& q) {
        os << "key_list_query{base_url=" << detail::quote_input(redact_url(q.base_url), 128)
           << ", tenant=" << detail::quote_input(q.tenant) << ", page=" << q.page << ", size=" << q.size
           << ", type=" << detail::quote_input(q.type) << ", status=";
        if (q.status)
            os << detail::quote_input(*q.status);
        else
            os << "none";
        return os << ", token=" << q.token << '}';
    }
};

namespace detail {
constexpr bool starts_with_ascii_nocase(std::string_view s, std::string_view prefix) noexcept {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i]) return false;
    }
    return true;
}
}  // namespace detail

// The longest list-call URL try_list_keys_request builds (J3; H2's limit).
inline constexpr std::size_t max_list_url_length = 8192;

// L1: GET {base_url}/{tenant}/api/v1/key/apikeys?_page=..&_size=..&type=..[&status=..]
// with `Authorization: Bearer <token>` (marked sensitive). Trailing '/' on
// base_url are dropped. Errors name the field (page, size, base_url, tenant, token).
[[nodiscard]] inline result<http_request> try_list_keys_request(const key_list_query& q) {
    std::string_view base = q.base_url;
    while (!base.empty() && base.back() == '/') base.remove_suffix(1);
    std::size_t scheme = 0;
    if (detail::starts_with_ascii_nocase(base, "https://"))
        scheme = 8;
    else if (detail::starts_with_ascii_nocase(base, "http://"))
        scheme = 7;
    else
        return error{errc::invalid_value, "base_url", "expected an absolute http or https URL"};
    if (base.size() == scheme) return error{errc::invalid_value, "base_url", "expected a host after the scheme"};
    for (char ch : base) {
        const auto c = static_cast<unsigned char>(ch);
        if (c <= 0x20 || c == 0x7f)
            return error{errc::invalid_value, "base_url", "must not contain spaces or control characters"};
        if (c == '?' || c == '#')
            return error{errc::invalid_value, "base_url", "must not contain a query or a fragment"};
    }
    if (q.tenant.empty()) return error{errc::invalid_value, "tenant", "must not be empty"};
    // URL resolvers remove "." and ".." segments, encoded or not (%2E is a
    // dot to them): such a tenant would send the token to another path.
    if (q.tenant == "." || q.tenant == "..")
        return error{errc::invalid_value, "tenant",
                     "must not be \".\" or \"..\" (a URL resolver removes such a segment)"};
    if (q.page < 1) return error{errc::out_of_range, "page", "expected at least 1, got " + std::to_string(q.page)};
    if (q.size < 1) return error{errc::out_of_range, "size", "expected at least 1, got " + std::to_string(q.size)};
    if (q.token.empty()) return error{errc::invalid_value, "token", "must not be empty"};
    for (char ch : q.token.reveal()) {
        const auto c = static_cast<unsigned char>(ch);
        // A header value must not break the header block; the token itself is never quoted.
        if (c < 0x20 || c == 0x7f) return error{errc::invalid_header, "token", "must not contain control characters"};
    }

    // J3, as H2 for webhooks: the URL is measured before it is built and may
    // not pass 8192 bytes, so one long field cannot make a request of any size.
    std::size_t encoded_tenant = 0;
    for (char c : q.tenant) encoded_tenant += detail::is_unreserved(static_cast<unsigned char>(c)) ? 1 : 3;
    const std::pair<const char*, std::size_t> parts[] = {{"base_url", base.size()},
                                                         {"tenant", encoded_tenant},
                                                         {"type", q.type.size() * 3},
                                                         {"status", q.status ? q.status->size() * 3 : 0}};
    std::size_t url_bytes = 96;  // separators, path, _page and _size
    const auto* largest = &parts[0];
    for (const auto& part : parts) {
        url_bytes += part.second;
        if (part.second > largest->second) largest = &part;
    }
    if (url_bytes > max_list_url_length)
        return error{errc::limit_exceeded, largest->first,
                     "the request URL would exceed " + std::to_string(max_list_url_length) + " bytes"};
    http_request r;
    r.method = "GET";
    r.url.reserve(url_bytes);
    r.url.append(base);
    r.url += '/';
    r.url += percent_encode(q.tenant);
    r.url += "/api/v1/key/apikeys";
    append_query_parameter(r.url, "_page", std::to_string(q.page));
    append_query_parameter(r.url, "_size", std::to_string(q.size));
    if (!q.type.empty()) append_query_parameter(r.url, "type", q.type);
    if (q.status && !q.status->empty()) append_query_parameter(r.url, "status", *q.status);
    r.headers.push_back(http_header{"Authorization", "Bearer " + q.token.reveal(), true});
    r.headers.push_back(http_header{"Accept", "application/json", false});
    return r;
}

[[nodiscard]] inline http_request list_keys_request(const key_list_query& q) {
    return try_list_keys_request(q).value();
}

// ---------------------------------------------------------------------------
// L2: the response

// At most this many errors of rejected records are kept (J3); the others are counted.
inline constexpr std::size_t key_list_max_rejected = 100;

// One page of the list call. `count` is the total number of matching keys
// across all pages. In lenient mode, `rejected_count` counts the records that
// could not be read and `rejected` holds the errors of the first 100 of them
// (key_list_max_rejected), with their paths (e.g. "data.result[3].expireAt").
struct key_list_page {
    std::int64_t count = 0;
    std::int64_t page = 0;
    std::int64_t page_size = 0;
    std::vector<api_key> records;
    std::vector<error> rejected;
    std::size_t rejected_count = 0;

    // Elements of data.result this response held: records read plus rejected.
    [[nodiscard]] std::size_t elements() const noexcept { return records.size() + rejected_count; }

    // ceil(count / page_size); 0 when either is not positive.
    [[nodiscard]] std::int64_t total_pages() const noexcept {
        if (count <= 0 || page_size <= 0) return 0;
        return count / page_size + (count % page_size != 0 ? 1 : 0);
    }
    [[nodiscard]] bool has_next_page() const noexcept { return page >= 0 && page < total_pages(); }

    friend bool operator==(const key_list_page& a, const key_list_page& b) {
        return a.count == b.count && a.page == b.page && a.page_size == b.page_size && a.records == b.records &&
               a.rejected == b.rejected && a.rejected_count == b.rejected_count;
    }
    friend bool operator!=(const key_list_page& a, const key_list_page& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_list_page& p) {
        os << "key_list_page{count=" << p.count << ", page=" << p.page << ", page_size=" << p.page_size
           << ", records=" << p.records.size() << ", rejected=" << p.rejected_count << '}';
        return os;
    }
};

// The query for the page after `received`, asked with `current`; none on the
// last page. It asks for the page size the service reported, so page numbers
// stay consistent when the service capped the size asked for.
[[nodiscard]] inline std::optional<key_list_query> next_page_query(const key_list_query& current,
                                                                   const key_list_page& received) {
    if (!received.has_next_page()) return std::nullopt;
    key_list_query next = current;
    next.page = received.page + 1;
    if (received.page_size > 0) next.size = received.page_size;
    return next;
}

// What to do with a record that cannot be read.
enum class key_list_mode {
    lenient,  // keep the valid records; bad ones are counted, the first 100 kept in `rejected` (the default)
    strict,   // the first bad record fails the whole parse
};

[[nodiscard]] constexpr std::string_view to_string(key_list_mode m) noexcept {
    return m == key_list_mode::strict ? "strict" : "lenient";
}
inline std::ostream& operator<<(std::ostream& os, key_list_mode m) { return os << to_string(m); }

struct key_list_options {
    key_list_mode mode = key_list_mode::lenient;
    // Containers nested deeper than this fail the parse (errc::limit_exceeded).
    std::size_t max_depth = 64;
    // A string kept in a record longer than this (bytes) makes the record bad.
    std::size_t max_string_bytes = 64 * 1024;

    friend bool operator==(const key_list_options& a, const key_list_options& b) {
        return a.mode == b.mode && a.max_depth == b.max_depth && a.max_string_bytes == b.max_string_bytes;
    }
    friend bool operator!=(const key_list_options& a, const key_list_options& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_list_options& o) {
        return os << "key_list_options{mode=" << o.mode << ", max_depth=" << o.max_depth
                  << ", max_string_bytes=" << o.max_string_bytes << '}';
    }
};

namespace detail {

// The record members, in the order try_api_key_from_json checks them: when a
// record has several faults, the first in this order is reported, as there.
enum class list_field : unsigned char {
    id,
    user_id,
    name,
    description,
    masked,
    status,
    type,
    groups,
    created_at,
    created_by,
    updated_at,
    active_from,
    expire_at,
    last_used_at,
    none,
};

constexpr std::uint16_t field_bit(list_field f) noexcept {
    return static_cast<std::uint16_t>(1u << static_cast<unsigned>(f));
}

inline constexpr list_field required_list_fields[] = {list_field::id, list_field::name, list_field::status,
                                                      list_field::active_from, list_field::expire_at};

constexpr std::string_view list_field_name(list_field f) noexcept {
    switch (f) {
        case list_field::id: return member::id;
        case list_field::user_id: return member::user_id;
        case list_field::name: return member::name;
        case list_field::description: return member::description;
        case list_field::masked: return member::masked;
        case list_field::status: return member::status;
        case list_field::type: return member::type;
        case list_field::groups: return member::groups;
        case list_field::created_at: return member::created_at;
        case list_field::created_by: return member::created_by;
        case list_field::updated_at: return member::updated_at;
        case list_field::active_from: return member::active_from;
        case list_field::expire_at: return member::expire_at;
        case list_field::last_used_at: return member::last_used_at;
        case list_field::none: break;
    }
    return {};
}

// Member name to field without allocating: the length, then one byte that
// tells the candidates apart, then one memcmp of a constant size (inlined).
inline list_field list_field_of(std::string_view k) noexcept {
    const auto is = [k](std::string_view m, list_field f) noexcept {
        return std::memcmp(k.data(), m.data(), m.size()) == 0 ? f : list_field::none;
    };
    switch (k.size()) {
        case 2: return is(member::id, list_field::id);
        case 4: return k[0] == 'n' ? is(member::name, list_field::name) : is(member::type, list_field::type);
        case 6:
            switch (k[0]) {
                case 's': return is(member::status, list_field::status);
                case 'm': return is(member::masked, list_field::masked);
                case 'g': return is(member::groups, list_field::groups);
                default: return is(member::user_id, list_field::user_id);
            }
        case 8: return is(member::expire_at, list_field::expire_at);
        case 9:
            if (k[0] == 'u') return is(member::updated_at, list_field::updated_at);
            return k[7] == 'A' ? is(member::created_at, list_field::created_at)
                               : is(member::created_by, list_field::created_by);
        case 10:
            return k[0] == 'a' ? is(member::active_from, list_field::active_from)
                               : is(member::last_used_at, list_field::last_used_at);
        case 11: return is(member::description, list_field::description);
        default: return list_field::none;
    }
}

constexpr bool is_time_field(list_field f) noexcept {
    return f == list_field::created_at || f == list_field::updated_at || f == list_field::active_from ||
           f == list_field::expire_at || f == list_field::last_used_at;
}

// What try_api_key_from_json says it expected for each member.
constexpr std::string_view expected_for(list_field f) noexcept {
    if (f == list_field::groups) return "an array of strings";
    if (is_time_field(f)) return "an ISO 8601 timestamp string";
    return "a string";
}

// A number token no double holds ("1e400"), by its place among the input's
// number tokens in document order. nlohmann's parser stops at such a number,
// which in lenient mode would lose the page's valid records (J2: it is a wrong
// value like any other); try_parse_key_list parses a copy in which each is a
// zero of the same length, and the handler recognizes it by its place.
struct overflowing_number {
    std::size_t ordinal;
    std::string_view text;
};

// Does this well-formed-looking number token exceed a double's range? Only
// tokens with an exponent or over 300 bytes can; underflow ("1e-400") reads
// as zero, as nlohmann reads it.
inline bool number_overflows(std::string_view token) {
    if (token.size() <= 300 && token.find_first_of("eE") == std::string_view::npos) return false;
    double value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc::result_out_of_range) return false;
    (void)end;
    // Out of range both ways: overflow when the first significant digit sits at a positive power of ten.
    const std::size_t e = token.find_first_of("eE");
    const std::string_view mantissa = token.substr(0, e);
    long long exponent = 0;
    if (e != std::string_view::npos) {
        std::size_t i = e + 1;
        bool negative = false;
        if (i < token.size() && (token[i] == '+' || token[i] == '-')) negative = token[i++] == '-';
        for (; i < token.size(); ++i) exponent = std::min(exponent * 10 + (token[i] - '0'), 1000000000LL);
        if (negative) exponent = -exponent;
    }
    // The power of ten of the first significant digit.
    const std::size_t dot = mantissa.find('.');
    const std::string_view whole = mantissa.substr(0, dot);
    long long power = 0;
    if (const std::size_t first = whole.find_first_not_of("-0"); first != std::string_view::npos) {
        power = exponent + static_cast<long long>(whole.size() - first) - 1;
    } else {
        const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
        power = exponent - static_cast<long long>(std::min(fraction.find_first_not_of('0'), fraction.size())) - 1;
    }
    return power > 0;
}

// The number tokens outside strings that overflow a double; none for almost every input.
inline std::vector<overflowing_number> find_overflowing_numbers(std::string_view json) {
    std::vector<overflowing_number> found;
    std::size_t ordinal = 0;
    for (std::size_t i = 0; i < json.size();) {
        const char c = json[i];
        if (c == '"') {
            for (++i; i < json.size() && json[i] != '"'; ++i)
                if (json[i] == '\\') ++i;
            ++i;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            const std::size_t start = i;
            while (i < json.size() && std::strchr("0123456789+-.eE", json[i]) != nullptr && json[i] != '\0') ++i;
            const std::string_view token = json.substr(start, i - start);
            if (number_overflows(token)) found.push_back({ordinal, token});
            ++ordinal;
        } else {
            ++i;
        }
    }
    return found;
}

// The copy nlohmann parses: each overflowing number becomes 0e00... of its length.
inline std::string with_overflows_zeroed(std::string_view json, const std::vector<overflowing_number>& found) {
    std::string copy(json);
    for (const auto& n : found) {
        const auto at = static_cast<std::size_t>(n.text.data() - json.data());
        const std::size_t sign = n.text.front() == '-' ? 1 : 0;
        copy.replace(at + sign, n.text.size() - sign, "0e" + std::string(n.text.size() - sign - 2, '0'));
    }
    return copy;
}

// Decodes a list-call response event by event. The structure is fixed
// (envelope > data > result > record > groups), so the position is known from
// `where_` alone; anything else is skipped by counting its nesting.
class key_list_sax {
public:
    using json = nlohmann::json;
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    // `exact_capacity`: the number of valid records, when a first pass found
    // more than it had room for (see try_parse_key_list).
    key_list_sax(const key_list_options& options, std::size_t input_bytes,
                 std::optional<std::size_t> exact_capacity = std::nullopt) noexcept
        : options_(options), input_bytes_(input_bytes), exact_capacity_(exact_capacity) {}

    bool null() { return scalar(kind::null); }
    bool boolean(bool) { return scalar(kind::boolean); }
    bool number_integer(number_integer_t v) {
        if (const auto* o = next_is_overflow()) return overflowed(o->text);
        return number(v, numeric::integer, {});
    }
    bool number_unsigned(number_unsigned_t v) {
        if (const auto* o = next_is_overflow()) return overflowed(o->text);
        if (v > static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max()))
            return number(0, numeric::too_large, std::to_string(v));
        return number(static_cast<std::int64_t>(v), numeric::integer, {});
    }
    bool number_float(number_float_t, const string_t& text) {
        if (const auto* o = next_is_overflow()) return overflowed(o->text);
        // Integer syntax too large for 64 bits (J2: out of range, not a fraction).
        const bool integral = text.find_first_of(".eE") == string_t::npos;
        return number(0, integral ? numeric::too_large : numeric::floating, text);
    }

    // The numbers find_overflowing_numbers found, which the parsed copy holds as zeros.
    void expect_overflows(const std::vector<overflowing_number>* found) noexcept { overflows_ = found; }
    bool binary(binary_t&) { return scalar(kind::other); }

    bool string(string_t& val) {
        pos_.value_done();
        if (skip_ > 0) return true;
        switch (slot_) {
            case slot::field: field_string(val); return true;
            case slot::group: group_string(val); return !fatal_;
            case slot::record: reject_element(kind::string); return true;
            case slot::status:
                status_seen_ = true;
                status_ok_ = ascii_iequal(val, "success");
                if (!status_ok_) status_text_ = quote_input(val);
                return true;
            case slot::message: message_ = quote_input(val); return true;
            case slot::error_code: error_code_ = quote_input(val); return true;
            case slot::root: return root_not_object(kind::string);
            case slot::data:
            case slot::result:
            case slot::count:
            case slot::page:
            case slot::page_size: envelope_wrong_type(kind::string); return true;
            case slot::ignore: return true;
        }
        return true;
    }

    bool start_object(std::size_t) {
        if (!enter(true)) return false;
        if (skip_ > 0) {
            ++skip_;
            return true;
        }
        switch (slot_) {
            case slot::root:
                where_ = place::envelope;
                slot_ = slot::ignore;
                return true;
            case slot::data:
                data_seen_ = true;
                where_ = place::data;
                slot_ = slot::ignore;
                return true;
            case slot::record: begin_record(); return true;
            case slot::field: field_wrong_type(kind::object); break;
            case slot::group: group_wrong_type(kind::object); break;
            case slot::status:
            case slot::result:
            case slot::count:
            case slot::page:
            case slot::page_size: envelope_wrong_type(kind::object); break;
            case slot::message:
            case slot::error_code:
            case slot::ignore: break;
        }
        skip_ = 1;
        return true;
    }

    bool start_array(std::size_t) {
        if (!enter(false)) return false;
        if (skip_ > 0) {
            ++skip_;
            return true;
        }
        switch (slot_) {
            case slot::root: return root_not_object(kind::array);
            case slot::result:
                result_seen_ = true;
                where_ = place::result;
                slot_ = slot::record;
                next_index_ = 0;
                plan_records();
                return true;
            case slot::field:
                if (field_ == list_field::groups) {
                    rec().groups.clear();
                    group_bytes_ = 0;
                    where_ = place::groups;
                    slot_ = slot::group;
                    group_index_ = 0;
                    group_failed_ = false;
                    return true;
                }
                field_wrong_type(kind::array);
                break;
            case slot::record: reject_element(kind::array); break;
            case slot::group: group_wrong_type(kind::array); break;
            case slot::status:
            case slot::data:
            case slot::count:
            case slot::page:
            case slot::page_size: envelope_wrong_type(kind::array); break;
            case slot::message:
            case slot::error_code:
            case slot::ignore: break;
        }
        skip_ = 1;
        return true;
    }

    bool key(string_t& k) {
        // Every object's names are recorded, skipped ones too (J1 everywhere).
        if (!pos_.key(k)) {
            fail(error{errc::limit_exceeded, pos_.container_path(), "member names longer than 4 GiB"});
            return false;
        }
        if (skip_ > 0) return true;
        switch (where_) {
            case place::record:
                field_ = list_field_of(k);
                slot_ = field_ == list_field::none ? slot::ignore : slot::field;
                return true;
            case place::envelope:
                if (k == "status")
                    slot_ = slot::status;
                else if (k == "data")
                    slot_ = slot::data;
                else if (k == "message")
                    slot_ = slot::message;
                else if (k == "errorCode")
                    slot_ = slot::error_code;
                else
                    slot_ = slot::ignore;
                return true;
            case place::data:
                if (k == "result")
                    slot_ = slot::result;
                else if (k == "count")
                    slot_ = slot::count;
                else if (k == "page")
                    slot_ = slot::page;
                else if (k == "pageSize")
                    slot_ = slot::page_size;
                else
                    slot_ = slot::ignore;
                return true;
            case place::root:
            case place::result:
            case place::groups: return true;
        }
        return true;
    }

    bool end_object() {
        --depth_;
        // J1: a member name repeated in this object refuses the whole input.
        if (auto repeated = pos_.close(true)) {
            fail(error{errc::duplicate_member, std::move(*repeated), "member name repeated in one object"});
            return false;
        }
        if (skip_ > 0) {
            --skip_;
            return true;
        }
        switch (where_) {
            case place::record:
                end_record();
                where_ = place::result;
                slot_ = slot::record;
                return !fatal_;
            case place::data:
                where_ = place::envelope;
                slot_ = slot::ignore;
                return true;
            case place::envelope:
                where_ = place::root;
                slot_ = slot::ignore;
                return true;
            case place::root:
            case place::result:
            case place::groups: return true;
        }
        return true;
    }

    bool end_array() {
        --depth_;
        (void)pos_.close(false);
        if (skip_ > 0) {
            --skip_;
            return true;
        }
        if (where_ == place::groups) {
            where_ = place::record;
            slot_ = slot::ignore;
        } else if (where_ == place::result) {
            where_ = place::data;
            slot_ = slot::ignore;
        }
        return true;
    }

    bool parse_error(std::size_t position, const std::string& token, const nlohmann::json::exception& ex) {
        if (ex.id != 406) {
            syntax_error(position, ex.what());
            return false;
        }
        // J2: a number no double holds ("1e400"). try_parse_key_list parses again
        // with such numbers zeroed, so that one inside a record rejects only it.
        stopped_at_overflow_ = true;
        return refuse_overflow(token);
    }

    [[nodiscard]] bool stopped_at_overflow() const noexcept { return stopped_at_overflow_; }

    // The page-level refusal of a number no double holds, with its path and the reason.
    bool refuse_overflow(std::string_view token) {
        if (skip_ == 0 && (slot_ == slot::count || slot_ == slot::page || slot_ == slot::page_size))
            fail(error{errc::out_of_range, std::string(slot_path()),
                       "expected a non-negative 64-bit integer, got " + quote_input(token)});
        else
            fail(number_overflow_error(pos_.path(), token));
        return false;
    }

    const overflowing_number* next_is_overflow() noexcept {
        const std::size_t ordinal = numbers_seen_++;
        if (overflows_ == nullptr || next_overflow_ >= overflows_->size()) return nullptr;
        const auto& o = (*overflows_)[next_overflow_];
        if (o.ordinal != ordinal) return nullptr;
        ++next_overflow_;
        return &o;
    }

    // J2 for a number no double holds: in a record (or as an element of
    // data.result) it rejects that record like any wrong value; in the
    // envelope it refuses the page.
    bool overflowed(std::string_view token) {
        const bool in_record = where_ == place::record || where_ == place::groups;
        const bool as_element = where_ == place::result && slot_ == slot::record && skip_ == 0;
        if (!in_record && !as_element) return refuse_overflow(token);
        auto e = number_overflow_error(pos_.path(), token);
        pos_.value_done();
        if (as_element) {
            index_ = next_index_++;
            reject(std::move(e));
        } else if (skip_ == 0 && slot_ == slot::group) {
            if (!group_failed_) field_error(list_field::groups, e.code, std::move(e.path), std::move(e.message));
            group_failed_ = true;
            ++group_index_;
        } else {
            field_error(skip_ == 0 && slot_ == slot::field ? field_ : list_field::none, e.code, std::move(e.path),
                        std::move(e.message));
        }
        return true;
    }

    void syntax_error(std::size_t position, std::string_view what) {
        // nlohmann's text reads "... - <reason>; last read: '<input>'; ...":
        // keep the reason only, never the input.
        std::string_view reason;
        if (const auto dash = what.find(" - "); dash != std::string_view::npos) {
            reason = what.substr(dash + 3);
            if (const auto cut = reason.find("; last read"); cut != std::string_view::npos)
                reason = reason.substr(0, cut);
            if (reason.size() > 120) reason = reason.substr(0, 120);
        }
        // nlohmann counts the offending byte as read; report its 0-based offset.
        std::string message = "malformed JSON at byte offset " + std::to_string(position > 0 ? position - 1 : 0);
        if (!reason.empty()) {
            message += ": ";
            message += reason;
        }
        const bool utf8 = what.find("UTF-8") != std::string_view::npos;
        fail(error{utf8 ? errc::invalid_utf8 : errc::syntax_error, {}, std::move(message)});
    }

    // The outcome, once sax_parse has returned.
    [[nodiscard]] result<key_list_page> finish() {
        if (fatal_) return std::move(*fatal_);
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
        if (first_record_error_) return std::move(*first_record_error_);
        key_list_page p;
        p.count = *count_;
        p.page = *page_;
        p.page_size = *page_size_;
        p.records = std::move(records_);
        p.rejected = std::move(rejected_);
        p.rejected_count = rejected_count_;
        return p;
    }

    // More valid records came than the capacity planned (a pageSize lower
    // than the page, or none before data.result): the records past it were
    // counted, not kept, and a second pass with this exact capacity is needed.
    [[nodiscard]] std::optional<std::size_t> needs_exact_capacity() const noexcept {
        if (fatal_ || !overflowed_) return std::nullopt;
        return valid_records_;
    }

    // J3: the fewest bytes a record that decodes can take in the input:
    // {"id":"","name":"","status":"Active","activeFrom":"YYYY-MM-DDTHH:MM:SSZ","expireAt":"..."}
    static constexpr std::size_t min_record_bytes = 107;
    // Pages of up to this many records are decoded in one pass; a larger one
    // (or one larger than its pageSize) takes a second pass with the exact
    // count, so no declared size is trusted for an allocation (finding 6).
    static constexpr std::size_t single_pass_records = 1024;
    // J3: what a decode may keep besides 4 bytes per input byte.
    static constexpr std::size_t memory_allowance = std::size_t{1} << 20;

private:
    enum class place : unsigned char { root, envelope, data, result, record, groups };
    // What the next value is: a member of a known container, or to be ignored.
    enum class slot : unsigned char {
        root,
        ignore,
        status,
        message,
        error_code,
        data,
        count,
        page,
        page_size,
        result,
        record,
        field,
        group,
    };
    enum class kind : unsigned char { null, boolean, number, string, object, array, other };

    static std::string_view kind_name(kind k) noexcept {
        switch (k) {
            case kind::null: return "null";
            case kind::boolean: return "boolean";
            case kind::number: return "number";
            case kind::string: return "string";
            case kind::object: return "object";
            case kind::array: return "array";
            case kind::other: return "binary";
        }
        return "binary";
    }

    api_key& rec() noexcept { return *rec_; }

    bool enter(bool object) {
        if (++depth_ > options_.max_depth) {
            fail(error{errc::limit_exceeded, current_path(),
                       "nested deeper than " + std::to_string(options_.max_depth) + " levels"});
            return false;
        }
        (void)pos_.open(object, std::numeric_limits<std::size_t>::max());
        return true;
    }

    void fail(error e) {
        if (!fatal_) fatal_ = std::move(e);
    }

    std::string record_path() const { return path_index("data.result", index_); }

    std::string current_path() const {
        switch (where_) {
            case place::root:
            case place::envelope: return {};
            case place::data: return "data";
            case place::result: return "data.result";
            case place::record: return record_path();
            case place::groups: return path_member(record_path(), member::groups);
        }
        return {};
    }

    bool root_not_object(kind k) {
        fail(wrong_type_error({}, "an object", kind_name(k)));
        return false;
    }

    std::string_view slot_path() const noexcept {
        switch (slot_) {
            case slot::status: return "status";
            case slot::data: return "data";
            case slot::count: return "data.count";
            case slot::page: return "data.page";
            case slot::page_size: return "data.pageSize";
            case slot::result: return "data.result";
            default: return {};
        }
    }

    void envelope_error(error e) {
        if (slot_ == slot::status) {
            if (!status_error_) status_error_ = std::move(e);
            return;
        }
        if (!envelope_error_) envelope_error_ = std::move(e);
    }

    void envelope_wrong_type(kind k) {
        std::string_view expected = "an integer";
        if (slot_ == slot::status)
            expected = "a string";
        else if (slot_ == slot::data)
            expected = "an object";
        else if (slot_ == slot::result)
            expected = "an array of records";
        envelope_error(wrong_type_error(std::string(slot_path()), expected, kind_name(k)));
    }

    bool scalar(kind k) {
        pos_.value_done();
        if (skip_ > 0) return true;
        switch (slot_) {
            case slot::field: field_scalar(k); return true;
            case slot::group: group_wrong_type(k); return true;
            case slot::record: reject_element(k); return true;
            case slot::root: return root_not_object(k);
            case slot::status:
            case slot::data:
            case slot::result:
            case slot::count:
            case slot::page:
            case slot::page_size:
                // null stands for a missing member, as in try_api_key_from_json.
                if (k != kind::null) envelope_wrong_type(k);
                return true;
            case slot::message:
            case slot::error_code:
            case slot::ignore: return true;
        }
        return true;
    }

    // Integers carry their value; the others their text.
    enum class numeric : unsigned char { integer, too_large, floating };

    bool number(std::int64_t v, numeric n, std::string_view text) {
        if (skip_ > 0) {
            pos_.value_done();
            return true;
        }
        switch (slot_) {
            case slot::count:
            case slot::page:
            case slot::page_size: {
                if (n == numeric::floating) {
                    envelope_error(error{errc::wrong_type, std::string(slot_path()),
                                         "expected an integer, got " + quote_input(text)});
                } else if (n == numeric::too_large || v < 0) {
                    envelope_error(error{errc::out_of_range, std::string(slot_path()),
                                         "expected a non-negative 64-bit integer, got " +
                                             (n == numeric::integer ? std::to_string(v) : std::string(text))});
                } else if (slot_ == slot::count) {
                    count_ = v;
                } else if (slot_ == slot::page) {
                    page_ = v;
                } else {
                    page_size_ = v;
                }
                pos_.value_done();
                return true;
            }
            case slot::error_code:
                pos_.value_done();
                error_code_ = n == numeric::integer ? std::to_string(v) : quote_input(text);
                return true;
            case slot::message: pos_.value_done(); return true;
            default: return scalar(kind::number);
        }
    }

    // ---- records

    void begin_record() {
        index_ = next_index_++;
        // Read into a scratch record: a rejected one never reaches records_.
        scratch_ = api_key{};
        rec_ = &scratch_;
        where_ = place::record;
        slot_ = slot::ignore;
        present_ = 0;
        field_errors_.clear();
    }

    void reject_element(kind k) {
        index_ = next_index_++;
        reject(wrong_type_error(record_path(), "an object", kind_name(k)));
    }

    void reject(error e) {
        if (options_.mode == key_list_mode::strict) {
            if (!first_record_error_) first_record_error_ = std::move(e);
            return;
        }
        // J3: the first 100 errors are kept, the others only counted.
        ++rejected_count_;
        if (rejected_.size() < key_list_max_rejected) {
            kept_bytes_ += e.path.capacity() + e.message.capacity() + 2;
            if (rejected_.empty()) {
                rejected_.reserve(key_list_max_rejected);
                kept_bytes_ += key_list_max_rejected * sizeof(error);
            }
            rejected_.push_back(std::move(e));
        }
    }

    // J3: room for the records without trusting a declared size: never more
    // than the input could hold (min_record_bytes each), than pageSize (100
    // when none came before data.result), or than single_pass_records; a
    // second pass with the exact count fixes a short plan.
    void plan_records() {
        if (planned_) return;
        planned_ = true;
        std::size_t plan = std::min(input_bytes_ / min_record_bytes + 1, single_pass_records);
        if (exact_capacity_)
            plan = *exact_capacity_;
        else
            plan = std::min(plan, page_size_ ? static_cast<std::size_t>(*page_size_)
                                             : static_cast<std::size_t>(default_list_page_size));
        records_.reserve(plan);
        capacity_ = plan;
        kept_bytes_ += plan * sizeof(api_key);
    }

    static std::size_t heap_bytes(const std::string& s) noexcept { return s.capacity() > 15 ? s.capacity() + 1 : 0; }
    static std::size_t heap_bytes(const std::optional<std::string>& s) noexcept { return s ? heap_bytes(*s) : 0; }

    // Heap bytes a record holds besides its own size.
    static std::size_t heap_bytes(const api_key& k) noexcept {
        std::size_t n = heap_bytes(k.id.str()) + heap_bytes(k.name) + heap_bytes(k.user_id) +
                        heap_bytes(k.description) + heap_bytes(k.masked) + heap_bytes(k.type) +
                        heap_bytes(k.created_by) + k.groups.capacity() * sizeof(std::string);
        for (const auto& g : k.groups) n += heap_bytes(g);
        return n;
    }

    // J3: would the page, with `extra` bytes more, pass 4 bytes an input byte
    // plus the allowance?
    bool over_budget(std::size_t extra) const noexcept {
        const std::size_t budget = input_bytes_ * 4 + memory_allowance;
        return kept_bytes_ + pos_.capacity_bytes() + extra > budget;
    }

    void keep_record() {
        ++valid_records_;
        if (records_.size() >= capacity_) {
            overflowed_ = true;  // counted; the second pass keeps it
            return;
        }
        kept_bytes_ += heap_bytes(scratch_);
        records_.push_back(std::move(scratch_));
        // J3 by construction: refuse an input whose records would take more.
        if (over_budget(0))
            fail(error{errc::limit_exceeded, record_path(),
                       "the records would take more than 4 times the input's size in memory (rule J3)"});
    }

    void field_error(list_field f, errc code, std::string path, std::string message) {
        field_errors_.push_back({f, error{code, std::move(path), std::move(message)}});
    }

    void field_error(list_field f, errc code, std::string message) {
        field_error(f, code, path_member(record_path(), list_field_name(f)), std::move(message));
    }

    void field_wrong_type(kind k) {
        if (k == kind::null) return field_null();
        field_error(field_, errc::wrong_type, wrong_type_error({}, expected_for(field_), kind_name(k)).message);
    }

    void field_scalar(kind k) { field_wrong_type(k); }

    void field_null() {
        auto& r = rec();
        present_ = static_cast<std::uint16_t>(present_ & ~field_bit(field_));
        switch (field_) {
            case list_field::user_id: r.user_id.reset(); break;
            case list_field::description: r.description.reset(); break;
            case list_field::masked: r.masked.reset(); break;
            case list_field::type: r.type.reset(); break;
            case list_field::created_by: r.created_by.reset(); break;
            case list_field::groups: r.groups.clear(); break;
            case list_field::created_at: r.created_at.reset(); break;
            case list_field::updated_at: r.updated_at.reset(); break;
            case list_field::last_used_at: r.last_used_at.reset(); break;
            default: break;  // required: reported as missing when the record ends
        }
    }

    void too_long(list_field f, std::string path, std::string_view val) {
        field_error(f, errc::limit_exceeded, std::move(path),
                    "a string of " + std::to_string(val.size()) + " bytes, more than the limit of " +
                        std::to_string(options_.max_string_bytes));
    }

    static void assign(std::optional<std::string>& out, const std::string& val) {
        if (out)
            out->assign(val);
        else
            out.emplace(val);
    }

    // A string kept in the record must respect max_string_bytes.
    bool keepable(list_field f, const std::string& val) {
        if (val.size() <= options_.max_string_bytes) return true;
        too_long(f, path_member(record_path(), list_field_name(f)), val);
        return false;
    }

    template <class T>
    bool read_time(list_field f, const std::string& val, T& out) {
        timestamp t{};
        if (parse_timestamp_into(val, t)) {
            out = t;
            return true;
        }
        field_error(f, errc::invalid_timestamp, timestamp_error({}, val).message);
        return false;
    }

    void field_string(const std::string& val) {
        auto& r = rec();
        const auto f = field_;
        switch (f) {
            case list_field::id:
                if (keepable(f, val)) {
                    r.id = key_id(val);
                    present_ |= field_bit(f);
                }
                return;
            case list_field::name:
                if (keepable(f, val)) {
                    r.name.assign(val);
                    present_ |= field_bit(f);
                }
                return;
            case list_field::user_id:
                if (keepable(f, val)) assign(r.user_id, val);
                return;
            case list_field::description:
                if (keepable(f, val)) assign(r.description, val);
                return;
            case list_field::masked:
                if (keepable(f, val)) assign(r.masked, val);
                return;
            case list_field::type:
                if (keepable(f, val)) assign(r.type, val);
                return;
            case list_field::created_by:
                if (keepable(f, val)) assign(r.created_by, val);
                return;
            case list_field::status:
                if (const auto s = read_key_status(val)) {
                    r.status = *s;
                    present_ |= field_bit(f);
                } else {
                    auto e = unknown_key_status(path_member(record_path(), list_field_name(f)), val);
                    field_error(f, e.code, std::move(e.path), std::move(e.message));
                }
                return;
            case list_field::created_at: read_time(f, val, r.created_at); return;
            case list_field::updated_at: read_time(f, val, r.updated_at); return;
            case list_field::last_used_at: read_time(f, val, r.last_used_at); return;
            case list_field::active_from:
                if (read_time(f, val, r.active_from)) present_ |= field_bit(f);
                return;
            case list_field::expire_at:
                if (read_time(f, val, r.expire_at)) present_ |= field_bit(f);
                return;
            case list_field::groups:
                field_error(f, errc::wrong_type,
                            wrong_type_error({}, expected_for(f), kind_name(kind::string)).message);
                return;
            case list_field::none: return;
        }
    }

    std::string group_path() const { return path_index(path_member(record_path(), member::groups), group_index_); }

    void group_string(const std::string& val) {
        if (val.size() > options_.max_string_bytes) {
            if (!group_failed_) too_long(list_field::groups, group_path(), val);
            group_failed_ = true;
        } else {
            auto& groups = rec().groups;
            // J3: 32 bytes a group for as few as 3 bytes of input (""): checked
            // before growing (the new buffer, twice the old, and the old).
            if (groups.size() == groups.capacity() &&
                over_budget(3 * std::max<std::size_t>(groups.capacity(), 2) * sizeof(std::string) + group_bytes_ +
                            val.size())) {
                fail(error{errc::limit_exceeded, group_path(),
                           "the groups would take more than 4 times the input's size in memory (rule J3)"});
                return;
            }
            // Records carry one to a few groups: one allocation instead of growing.
            if (groups.empty()) groups.reserve(4);
            groups.push_back(val);
            group_bytes_ += heap_bytes(groups.back());
        }
        ++group_index_;
    }

    void group_wrong_type(kind k) {
        // The first bad element is the one reported, as try_api_key_from_json does.
        if (!group_failed_)
            field_error(list_field::groups, errc::wrong_type, group_path(),
                        wrong_type_error({}, "a string", kind_name(k)).message);
        group_failed_ = true;
        ++group_index_;
    }

    void end_record() {
        if ((present_ & required_mask) != required_mask) {
            for (const auto f : required_list_fields) {
                if ((present_ & field_bit(f)) != 0) continue;
                const bool reported = std::any_of(field_errors_.begin(), field_errors_.end(),
                                                  [f](const auto& fe) { return fe.first == f; });
                if (!reported) field_error(f, errc::missing_member, "required member is missing");
            }
        }
        if (field_errors_.empty()) return keep_record();
        // The earliest member in try_api_key_from_json's order; the first found on a tie.
        auto worst = field_errors_.begin();
        for (auto it = field_errors_.begin(); it != field_errors_.end(); ++it)
            if (it->first < worst->first) worst = it;
        reject(std::move(worst->second));
    }

    static constexpr std::uint16_t required_mask = field_bit(list_field::id) | field_bit(list_field::name) |
                                                   field_bit(list_field::status) | field_bit(list_field::active_from) |
                                                   field_bit(list_field::expire_at);

    const key_list_options& options_;
    std::size_t input_bytes_;
    std::optional<std::size_t> exact_capacity_;
    json_position pos_;  // paths for J2, repeated names for J1

    place where_ = place::root;
    slot slot_ = slot::root;
    list_field field_ = list_field::none;
    std::size_t depth_ = 0;  // open containers, skipped ones included
    std::size_t skip_ = 0;   // open containers inside a value being skipped

    // envelope
    bool status_seen_ = false;
    bool status_ok_ = false;
    bool data_seen_ = false;
    bool result_seen_ = false;
    std::string status_text_;  // quoted, only when not "success"
    std::string message_;      // quoted
    std::string error_code_;   // quoted, or the number
    std::optional<std::int64_t> count_, page_, page_size_;
    std::optional<error> status_error_, envelope_error_, fatal_;

    // records
    std::vector<api_key> records_;
    api_key scratch_;
    api_key* rec_ = nullptr;  // &scratch_ while a record is read
    std::vector<error> rejected_;
    std::size_t rejected_count_ = 0;
    bool planned_ = false;
    bool overflowed_ = false;
    std::size_t capacity_ = 0;                 // records_ may hold this many
    std::size_t valid_records_ = 0;            // kept or not
    std::size_t kept_bytes_ = 0;               // J3: heap bytes of what the page will hold
    std::size_t group_bytes_ = 0;              // heap bytes of the group names of the record being read
    std::optional<error> first_record_error_;  // strict mode
    std::size_t next_index_ = 0;
    std::size_t index_ = 0;  // of the element being read
    std::uint16_t present_ = 0;
    std::size_t group_index_ = 0;
    bool group_failed_ = false;
    std::vector<std::pair<list_field, error>> field_errors_;  // of the record being read

    const std::vector<overflowing_number>* overflows_ = nullptr;
    std::size_t numbers_seen_ = 0;
    std::size_t next_overflow_ = 0;
    bool stopped_at_overflow_ = false;
};

}  // namespace detail

// L2: decodes a list-call response. The envelope's `status` must be "success"
// (any case), else errc::not_success with the status and any `errorCode` and
// `message` of the body. data.count, data.page, data.pageSize (non-negative
// integers) and data.result are required. Records follow try_api_key_from_json
// (same messages; paths such as "data.result[3].expireAt"); a bad record fails
// the parse in strict mode and is counted in lenient mode (the default), the
// first 100 kept in `rejected`. Malformed JSON gives errc::syntax_error with
// the byte offset; a member name repeated in any object errc::duplicate_member
// (J1) and a number no double holds errc::out_of_range (J2), both with the path.
// J3: memory at most 4 times the input plus a constant, time linear.
[[nodiscard]] inline result<key_list_page> try_parse_key_list(std::string_view json,
                                                              const key_list_options& options = {}) {
    // J2: where nlohmann stops at a number no double holds, such numbers are
    // found and the text parsed again with each zeroed, so that one in a record
    // rejects that record (see overflowing_number); ordinary input pays nothing.
    std::vector<detail::overflowing_number> overflows;
    std::string zeroed;
    std::string_view text = json;
    bool stopped_at_overflow = false;
    const auto run = [&](std::optional<std::size_t> exact) {
        detail::key_list_sax sax(options, json.size(), exact);
        sax.expect_overflows(&overflows);
        // nlohmann's lexer takes a NUL byte for the end of input and would ignore
        // what follows; JSON text never holds a raw NUL, so refuse it here.
        if (const auto nul = json.find('\0'); nul != std::string_view::npos) {
            sax.syntax_error(nul + 1, " - a NUL byte is not allowed in JSON text");
            return std::make_pair(sax.finish(), std::optional<std::size_t>());
        }
        try {
            detail::run_json_parser(text, sax);
        } catch (const nlohmann::json::exception& ex) {
            // sax_parse reports through parse_error; this is a second net only.
            sax.syntax_error(0, ex.what());
        }
        stopped_at_overflow = sax.stopped_at_overflow();
        const auto again = sax.needs_exact_capacity();
        return std::make_pair(again ? result<key_list_page>(error{}) : sax.finish(), again);
    };
    auto first = run(std::nullopt);
    if (stopped_at_overflow && overflows.empty()) {
        overflows = detail::find_overflowing_numbers(json);
        if (!overflows.empty()) {
            first = {result<key_list_page>(error{}), std::nullopt};
            zeroed = detail::with_overflows_zeroed(json, overflows);
            text = zeroed;
            first = run(std::nullopt);
        }
    }
    if (!first.second) return std::move(first.first);
    // The first pass's records are freed before the second pass allocates.
    const std::size_t exact = *first.second;
    first = {result<key_list_page>(error{}), std::nullopt};
    return run(exact).first;
}

[[nodiscard]] inline key_list_page parse_key_list(std::string_view json, const key_list_options& options = {}) {
    return try_parse_key_list(json, options).value();
}

// ---------------------------------------------------------------------------
// L3: the default view and filters

// Which keys to select; an empty member selects all. `status` is the status
// derived at `now` (S1). `type` compares ASCII case-insensitively ("synthetic"
// matches "Synthetic"); `group` must equal one of the key's groups exactly;
// `name_contains` is an ASCII case-insensitive substring of the name.
struct key_filter {
    std::optional<key_status> status;
    std::optional<std::string> type;
    std::optional<std::string> group;
    std::optional<std::string> name_contains;

    [[nodiscard]] bool matches(const api_key& key, timestamp now) const;

    friend bool operator==(const key_filter& a, const key_filter& b) {
        return a.status == b.status && a.type == b.type && a.group == b.group && a.name_contains == b.name_contains;
    }
    friend bool operator!=(const key_filter& a, const key_filter& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_filter& f) {
        os << "key_filter{";
        const char* sep = "";
        if (f.status) {
            os << "status=" << *f.status;
            sep = ", ";
        }
        if (f.type) {
            os << sep << "type=" << detail::quote_input(*f.type);
            sep = ", ";
        }
        if (f.group) {
            os << sep << "group=" << detail::quote_input(*f.group);
            sep = ", ";
        }
        if (f.name_contains) os << sep << "name_contains=" << detail::quote_input(*f.name_contains);
        return os << '}';
    }
};

namespace detail {

inline bool ascii_icontains(std::string_view haystack, std::string_view needle) noexcept {
    if (needle.empty()) return true;
    if (needle.size() > haystack.size()) return false;
    const char first = ascii_lower(needle[0]);
    for (std::size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
        if (ascii_lower(haystack[i]) != first) continue;
        if (ascii_iequal(haystack.substr(i, needle.size()), needle)) return true;
    }
    return false;
}

// One selected key: its sort key inline, so sorting touches the records only
// on a tie of expireAt.
template <class Ptr>
struct view_entry {
    std::int64_t expire;
    Ptr key;
};

// L3's order: earliest expireAt first, then name, then id; records equal in
// all three keep no particular order.
template <class Ptr>
void sort_view(std::vector<view_entry<Ptr>>& v) {
    std::sort(v.begin(), v.end(), [](const view_entry<Ptr>& a, const view_entry<Ptr>& b) {
        if (a.expire != b.expire) return a.expire < b.expire;
        if (const int c = a.key->name.compare(b.key->name); c != 0) return c < 0;
        return a.key->id < b.key->id;
    });
}

template <class Ptr, class It>
std::vector<view_entry<Ptr>> select_entries(It first, It last, const key_filter& filter, timestamp now) {
    std::vector<view_entry<Ptr>> v;
    if constexpr (std::is_base_of_v<std::random_access_iterator_tag,
                                    typename std::iterator_traits<It>::iterator_category>)
        v.reserve(static_cast<std::size_t>(last - first));
    for (; first != last; ++first) {
        auto& key = *first;
        if (filter.matches(key, now)) v.push_back({key.expire_at.time_since_epoch().count(), &key});
    }
    sort_view(v);
    return v;
}

// Copying a view reads records in expireAt order, which is random in memory:
// fetching a record a few steps ahead, and its strings a little later, hides
// most of the cache misses (about a third of the time on 100,000 records).
inline void prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

inline void prefetch_record(const api_key* k) noexcept {
    const auto* bytes = reinterpret_cast<const char*>(k);
    for (std::size_t offset = 0; offset < sizeof(api_key); offset += 64) prefetch(bytes + offset);
}

inline void prefetch_strings(const api_key& k) noexcept {
    prefetch(k.id.str().data());
    prefetch(k.name.data());
    for (const auto* s : {&k.user_id, &k.description, &k.masked, &k.created_by})
        if (*s) prefetch((*s)->data());
    if (!k.groups.empty()) prefetch(k.groups.data());
}

template <class Out, class Ptr, class Take>
void copy_view(const std::vector<view_entry<Ptr>>& entries, Out& out, Take take) {
    constexpr std::size_t record_ahead = 8, strings_ahead = 4;
    const std::size_t n = entries.size();
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (i + record_ahead < n) prefetch_record(entries[i + record_ahead].key);
        if (i + strings_ahead < n) prefetch_strings(*entries[i + strings_ahead].key);
        out.push_back(take(*entries[i].key));
    }
}

template <class Range>
using key_range_check =
    std::enable_if_t<std::is_convertible_v<decltype(*std::begin(std::declval<const Range&>())), const api_key&>, int>;

}  // namespace detail

inline bool key_filter::matches(const api_key& key, timestamp now) const {
    if (status && status_at(key, now) != *status) return false;
    if (type && !(key.type && detail::ascii_iequal(*key.type, *type))) return false;
    if (group && std::find(key.groups.begin(), key.groups.end(), *group) == key.groups.end()) return false;
    if (name_contains && !detail::ascii_icontains(key.name, *name_contains)) return false;
    return true;
}

// L3: the keys `filter` selects at `now`, earliest expireAt first, ties by name
// then id. The _refs forms return pointers into `records` (no copies: the
// fastest way to show a view); the others copy, or move from an rvalue vector.
template <class Range, detail::key_range_check<Range> = 0>
[[nodiscard]] std::vector<const api_key*> select_key_refs(const Range& records, const key_filter& filter,
                                                          timestamp now) {
    const auto entries = detail::select_entries<const api_key*>(std::begin(records), std::end(records), filter, now);
    std::vector<const api_key*> out;
    out.reserve(entries.size());
    for (const auto& e : entries) out.push_back(e.key);
    return out;
}
// Pointers into a temporary would dangle.
template <class Range, detail::key_range_check<Range> = 0>
void select_key_refs(const Range&& records, const key_filter& filter, timestamp now) = delete;

template <class Range, detail::key_range_check<Range> = 0>
[[nodiscard]] std::vector<api_key> select_keys(const Range& records, const key_filter& filter, timestamp now) {
    const auto entries = detail::select_entries<const api_key*>(std::begin(records), std::end(records), filter, now);
    std::vector<api_key> out;
    detail::copy_view(entries, out, [](const api_key& k) -> const api_key& { return k; });
    return out;
}

[[nodiscard]] inline std::vector<api_key> select_keys(std::vector<api_key>&& records, const key_filter& filter,
                                                      timestamp now) {
    const auto entries = detail::select_entries<api_key*>(records.begin(), records.end(), filter, now);
    std::vector<api_key> out;
    detail::copy_view(entries, out, [](api_key& k) -> api_key&& { return std::move(k); });
    return out;
}

// The filter of the default view: Active keys only.
[[nodiscard]] inline key_filter default_view_filter() {
    key_filter f;
    f.status = key_status::active;
    return f;
}

// L3: the default view, Active keys only (status derived at `now`), earliest
// expireAt first, ties by name then id.
template <class Range, detail::key_range_check<Range> = 0>
[[nodiscard]] std::vector<api_key> default_view(const Range& records, timestamp now) {
    return select_keys(records, default_view_filter(), now);
}

[[nodiscard]] inline std::vector<api_key> default_view(std::vector<api_key>&& records, timestamp now) {
    return select_keys(std::move(records), default_view_filter(), now);
}

template <class Range, detail::key_range_check<Range> = 0>
[[nodiscard]] std::vector<const api_key*> default_view_refs(const Range& records, timestamp now) {
    return select_key_refs(records, default_view_filter(), now);
}
template <class Range, detail::key_range_check<Range> = 0>
void default_view_refs(const Range&& records, timestamp now) = delete;

}  // namespace keyhook
