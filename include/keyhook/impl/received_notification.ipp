#pragma once
// keyhook: definitions of received_notification.hpp.

#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "keyhook/detail/json_for.hpp"
#include "keyhook/detail/json_parser.hpp"
#include "keyhook/detail/utf8.hpp"
#include "keyhook/notification.hpp"  // json_byte_classes
#include "keyhook/detail/notification_table.hpp"
#include "keyhook/detail/received_notification_table.hpp"
#include "keyhook/received_notification.hpp"
#include "keyhook/receiving.hpp"

namespace keyhook {

KEYHOOK_INLINE bool received_notification::is_equal(const received_notification& a, const received_notification& b) {
    return detail::members_equal(a, b);
}

KEYHOOK_INLINE std::ostream& received_notification::print_to(std::ostream& os, const received_notification& n) {
    os << "received_notification(" << detail::quote_input(n.user_action) << (n.event ? "" : " (unknown)") << ", tenant "
       << detail::quote_input(n.tenant) << ", folder " << detail::quote_input(n.folder_name) << ", service "
       << detail::quote_input(n.service_name) << ", at " << detail::quote_input(n.request_time_text);
    for (const auto& m : n.mismatches) os << ", " << escaped(m) << " differs";
    return os << ')';
}

namespace detail {

// A table path inside the body's Data object ("Data.FileName").
inline constexpr std::string_view received_data_prefix = "Data.";
constexpr bool in_received_data(std::string_view path) noexcept {
    return path.substr(0, received_data_prefix.size()) == received_data_prefix;
}

// The order the reader reports type errors in: the body, its top-level
// members, Data, the members of Data, then the Data twins (first to last).
template <std::size_t N>
constexpr std::array<std::size_t, N + 5> received_report_order(const std::array<std::string_view, N>& names,
                                                               std::size_t root, std::size_t data,
                                                               std::size_t first_twin, std::size_t last_twin,
                                                               std::size_t none) noexcept {
    std::array<std::size_t, N + 5> order{};
    std::size_t n = 0;
    order[n++] = root;
    for (std::size_t f = 0; f < N; ++f)
        if (!names[f].empty() && !in_received_data(names[f])) order[n++] = f;
    order[n++] = data;
    for (std::size_t f = 0; f < N; ++f)
        if (in_received_data(names[f])) order[n++] = f;
    for (std::size_t f = first_twin; f <= last_twin; ++f) order[n++] = f;
    while (n < order.size()) order[n++] = none;  // derived rows: never an error
    return order;
}

// H7's reader: a SAX handler that keeps the members a receiver reads and
// skips every other value as it goes (checked for syntax, depth, J1 and J2,
// never stored), so a body's unknown members cost no memory beyond the
// bookkeeping of its open objects. A member of the wrong type is noted and
// reported only once the whole body has parsed, first in the order of the
// fields below, so that malformed text is always reported as such. A class
// template only so that its members compile where parse_received_body is
// called (a deferred class, config.hpp).
template <class D>
class received_notification_reader {
public:
    using json = typename json_for<D>::type;

    received_notification_reader(received_notification& out, std::size_t max_depth)
        : out_(out), max_depth_(max_depth) {}

    bool null() { return scalar("null"); }
    bool boolean(bool) { return scalar("boolean"); }
    bool number_integer(typename json::number_integer_t) { return scalar("number"); }
    bool number_unsigned(typename json::number_unsigned_t) { return scalar("number"); }
    bool number_float(typename json::number_float_t, const typename json::string_t&) { return scalar("number"); }
    bool string(typename json::string_t& v) {
        if (field_ < fields::count)
            (void)fields::store(out_, field_, v);  // a text_form row: never an error
        else if (std::string* t = twin(field_))
            *t = std::move(v);
        return scalar("string");
    }
    bool binary(typename json::binary_t&) {
        return fail(error{errc::wrong_type, position_.path(), "binary values are not JSON"});
    }

    bool start_object(std::size_t) {
        const bool opens_data = field_ == data;
        if (position_.depth() == 0) root_is_object_ = true;
        if (!opening(true)) return false;
        if (opens_data) in_data_ = true;
        return true;
    }
    bool start_array(std::size_t) { return opening(false); }

    bool key(typename json::string_t& k) {
        if (!position_.key(k))
            return fail(error{errc::limit_exceeded, position_.path(), "member names longer than 4 GiB"});
        field_ = none;
        if (position_.depth() == 1 && root_is_object_)
            field_ = find_field(k, false);
        else if (position_.depth() == 2 && in_data_)
            field_ = find_field(k, true);
        return true;
    }

    bool end_object() {
        if (auto repeated = position_.close(true))
            return fail(error{errc::duplicate_member, std::move(*repeated), "member name repeated in one object"});
        if (position_.depth() == 1) in_data_ = false;
        return true;
    }
    bool end_array() {
        (void)position_.close(false);
        return true;
    }

    bool parse_error(std::size_t position, const std::string& token, const typename json::exception& ex) {
        if (ex.id == 406) return fail(number_overflow_error(position_.path(), token));
        return fail(json_syntax_error(position, ex.what()));
    }

    bool fail(error e) {
        if (!error_) error_ = std::move(e);
        return false;
    }

    // The first failure: malformed text, a limit, J1 or J2 first, then a wrong type.
    [[nodiscard]] std::optional<error> finish() {
        if (error_) return std::move(error_);
        for (std::size_t f : report_order)
            if (f != none && type_errors_[f]) return std::move(type_errors_[f]);
        return std::nullopt;
    }

    // The Data twins as read (empty when absent).
    std::string product_name, engine_name, product_id;

private:
    // The members read: the table's rows (received_notification.hpp) by
    // index, then the Data object itself and the Data twins.
    using fields = member_index<received_notification>;
    static constexpr std::size_t data = fields::count;
    static constexpr std::size_t product_name_field = data + 1;
    static constexpr std::size_t engine_name_field = data + 2;
    static constexpr std::size_t product_id_field = data + 3;
    static constexpr std::size_t root = data + 4;
    static constexpr std::size_t none = data + 5;
    static constexpr std::string_view twin_names[] = {"ProductName", "EngineName", "ProductId"};

    static constexpr std::string_view data_prefix = received_data_prefix;
    static constexpr bool in_data(std::string_view path) noexcept { return in_received_data(path); }
    static constexpr auto report_order =
        received_report_order(fields::names, root, data, product_name_field, product_id_field, none);

    // A member name at the top level or inside Data.
    static std::size_t find_field(std::string_view k, bool inside_data) {
        for (std::size_t f = 0; f < fields::count; ++f) {
            const std::string_view name = fields::names[f];
            if (name.empty() || in_data(name) != inside_data) continue;
            if ((inside_data ? name.substr(data_prefix.size()) : name) == k) return f;
        }
        if (!inside_data) return k == "Data" ? data : none;
        for (std::size_t t = 0; t < 3; ++t)
            if (twin_names[t] == k) return product_name_field + t;
        return none;
    }

    std::string* twin(std::size_t f) {
        switch (f) {
            case product_name_field: return &product_name;
            case engine_name_field: return &engine_name;
            case product_id_field: return &product_id;
            default: return nullptr;
        }
    }

    static std::string path_of(std::size_t f) {
        if (f == root) return {};
        if (f == data) return "Data";
        if (f < fields::count) return std::string(fields::names[f]);
        return std::string(data_prefix) + std::string(twin_names[f - product_name_field]);
    }

    void type_error(std::size_t f, const char* expected, const char* found) {
        if (type_errors_[f]) return;
        type_errors_[f] = wrong_type_error(path_of(f), expected, found);
    }

    // Notes a value of JSON type `found` where the body or a member that is
    // read expects another: null reads as "" (or no Data) and is right for
    // every member, a string for every member but Data, an object for Data.
    void check_type(const char* found) {
        const std::string_view type = found;
        if (position_.depth() == 0) {
            if (type != "object") type_error(root, "a JSON object", found);
        } else if (field_ == data) {
            if (type != "null" && type != "object") type_error(data, "an object", found);
        } else if (field_ != none) {
            if (type != "null" && type != "string") type_error(field_, "a string", found);
        }
        field_ = none;
    }

    bool scalar(const char* found) {
        check_type(found);
        position_.value_done();
        return true;
    }

    bool opening(bool object) {
        check_type(object ? "object" : "array");
        if (!position_.open(object, max_depth_))
            return fail(
                error{errc::limit_exceeded, {}, "body nests deeper than the limit of " + std::to_string(max_depth_)});
        return true;
    }

    received_notification& out_;
    std::size_t max_depth_;
    json_position position_;
    std::size_t field_ = none;  // the member whose value comes next, if one that is read
    bool root_is_object_ = false;
    bool in_data_ = false;                    // the object open at depth 2 is Data
    std::optional<error> type_errors_[none];  // by field
    std::optional<error> error_;
};

}  // namespace detail

namespace detail {

// What both readers do once the members are read: the Data twins (the
// top-level member wins; a differing twin is listed), the event, the time.
inline void finish_received(received_notification& r, std::string& product_name, std::string& engine_name,
                            std::string& product_id) {
    struct twin {
        std::string* data_member;
        std::string* top_level;
        const char* path;
    };
    for (const auto& t :
         {twin{&product_name, &r.folder_name, "Data.ProductName"},
          twin{&engine_name, &r.service_name, "Data.EngineName"}, twin{&product_id, &r.entity_id, "Data.ProductId"}}) {
        if (t.top_level->empty())
            *t.top_level = std::move(*t.data_member);
        else if (!t.data_member->empty() && *t.data_member != *t.top_level)
            r.mismatches.emplace_back(t.path);
    }
    r.event = find_event_type(r.user_action);
    timestamp t{};
    if (parse_timestamp_into(r.request_time_text, t)) r.request_time = t;
}

// The canonical reader fills these, slot by slot of notification_layout.
inline constexpr std::string_view canonical_slot_paths[] = {
    "FolderName",     "ServiceName",           "EntityId",        "UserAction",
    "AuditType",      "Data.ProductName",      "Data.EngineName", "Data.FileName",
    "Data.ProductId", "Data.ServiceVersionId", "Tenant",          "RequestTimeStamp"};
constexpr bool canonical_slots_match() noexcept {
    if (std::size(canonical_slot_paths) != std::size(notification_layout)) return false;
    for (std::size_t i = 0; i < std::size(notification_layout); ++i)
        if (canonical_slot_paths[i] != notification_layout[i].path) return false;
    return true;
}
static_assert(canonical_slots_match(), "read_canonical_notification follows notification_layout slot by slot");

// The deepest nesting of arrays and objects in `text`, strings skipped; stops
// counting past `limit`. One pass, no recursion: H9 wants the depth known
// before the parser sees the body. Exact for JSON text; malformed text is
// refused either way.
inline std::size_t json_nesting_depth(std::string_view text, std::size_t limit) noexcept {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
            if (deepest > limit) return deepest;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

// The offset of the quote closing the string value that starts at s[i], when
// the value holds only bytes JSON lets stand for themselves (no escape, no
// control byte, well-formed UTF-8); npos otherwise.
inline std::size_t plain_json_string_end(std::string_view s, std::size_t i) noexcept {
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        switch (json_byte_classes[c]) {
            case json_copy: ++i; break;
            case json_utf8: {
                const std::size_t n = utf8_sequence_length(s, i);
                if (n == 0) return std::string_view::npos;
                i += n;
                break;
            }
            default: return c == '"' ? i : std::string_view::npos;
        }
    }
    return std::string_view::npos;
}

}  // namespace detail

KEYHOOK_INLINE bool detail::read_canonical_notification(std::string_view body, received_notification& out) {
    out = received_notification{};
    std::string product_name, engine_name, product_id;
    std::string* const values[] = {&out.folder_name, &out.service_name,       &out.entity_id, &out.user_action,
                                   &out.audit_type,  &product_name,           &engine_name,   &out.file_name,
                                   &product_id,      &out.service_version_id, &out.tenant,    &out.request_time_text};
    static_assert(std::size(values) == std::size(canonical_slot_paths));
    std::size_t at = 0;
    for (std::size_t slot = 0; slot < std::size(notification_layout); ++slot) {
        const std::string_view before = notification_layout[slot].before;
        if (body.substr(at, before.size()) != before) return false;
        at += before.size();
        const std::size_t end = plain_json_string_end(body, at);
        if (end == std::string_view::npos) return false;
        values[slot]->assign(body.data() + at, end - at);
        at = end;
    }
    if (body.substr(at) != notification_end) return false;
    finish_received(out, product_name, engine_name, product_id);
    return true;
}

template <class D>
KEYHOOK_INLINE result<received_notification> detail::parse_received_body(std::string_view body, std::size_t max_depth) {
    using json = typename json_for<D>::type;
    received_notification r;
    received_notification_reader<D> reader(r, max_depth);
    // nlohmann's lexer takes a NUL byte for the end of input and would ignore
    // what follows; JSON text never holds a raw NUL, so refuse it here.
    if (const auto nul = body.find('\0'); nul != std::string_view::npos) {
        reader.fail(nul_byte_error(nul));
    } else if (json_nesting_depth(body, max_depth) > max_depth) {
        reader.fail(
            error{errc::limit_exceeded, {}, "body nests deeper than the limit of " + std::to_string(max_depth)});
    } else {
        try {
            run_json_parser_checked(body, reader);
        } catch (const typename json::exception& ex) {
            // sax_parse reports through parse_error; a second net only.
            reader.fail(json_syntax_error(0, ex.what()));
        }
    }
    if (auto e = reader.finish()) {
        // Malformed text (invalid UTF-8 included): nothing of the body is quoted.
        if (e->code == errc::syntax_error || e->code == errc::invalid_utf8)
            return error{errc::syntax_error, {}, "expected a JSON body, " + e->message};
        return std::move(*e);
    }
    finish_received(r, reader.product_name, reader.engine_name, reader.product_id);
    return r;
}

template <class D>
KEYHOOK_INLINE result<received_notification> try_parse_notification(std::string_view body, const body_limits& limits) {
    if (body.size() > limits.max_bytes)
        return error{errc::limit_exceeded,
                     {},
                     "body of " + std::to_string(body.size()) + " bytes exceeds the limit of " +
                         std::to_string(limits.max_bytes)};
    // What the platform sends (the canonical shape, 2 deep: its depth is
    // known before it is read, H9) is read in one pass; anything else, or a
    // depth limit under 2, goes to the parser, its depth counted first.
    if (limits.max_depth >= 2) {
        received_notification r;
        if (detail::read_canonical_notification(body, r)) return r;
    }
    return detail::parse_received_body<D>(body, limits.max_depth);
}

template <class D>
KEYHOOK_INLINE received_notification parse_notification(std::string_view body, const body_limits& limits) {
    return try_parse_notification<D>(body, limits).value();
}

KEYHOOK_INLINE result<notification> try_to_notification(const received_notification& r) {
    notification n;
    auto event = r.event ? result<event_type>(*r.event) : try_parse_event_type(r.user_action);
    if (!event) {
        error e = event.error();
        e.path = "UserAction";
        return e;
    }
    n.user_action = *event;
    auto when = r.request_time ? result<timestamp>(*r.request_time) : try_parse_timestamp(r.request_time_text);
    if (!when) {
        error e = when.error();
        e.path = "RequestTimeStamp";
        return e;
    }
    n.request_time = *when;
    n.folder_name = r.folder_name;
    n.service_name = r.service_name;
    n.entity_id = r.entity_id;
    n.audit_type = r.audit_type;
    n.file_name = r.file_name;
    n.service_version_id = r.service_version_id;
    n.tenant = r.tenant;
    return n;
}

KEYHOOK_INLINE notification to_notification(const received_notification& r) { return try_to_notification(r).value(); }

template <class D>
KEYHOOK_INLINE result<received_notification> try_receive_notification(const http_request& request,
                                                                      const secret& expected_key,
                                                                      const body_limits& limits) {
    if (auto method = try_check_method(request); !method) return method.error();
    if (auto key = try_authenticate(request, expected_key); !key) return key.error();
    return try_parse_notification<D>(request.body, limits);
}

template <class D>
KEYHOOK_INLINE received_notification receive_notification(const http_request& request, const secret& expected_key,
                                                          const body_limits& limits) {
    return try_receive_notification<D>(request, expected_key, limits).value();
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the one instantiation of each deferred definition (config.hpp).
namespace keyhook {
template result<received_notification> detail::parse_received_body<void>(std::string_view, std::size_t);
template result<received_notification> try_parse_notification<void>(std::string_view, const body_limits&);
template received_notification parse_notification<void>(std::string_view, const body_limits&);
template result<received_notification> try_receive_notification<void>(const http_request&, const secret&,
                                                                      const body_limits&);
template received_notification receive_notification<void>(const http_request&, const secret&, const body_limits&);
}  // namespace keyhook
#endif
