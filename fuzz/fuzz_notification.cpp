// Notification bodies (H6, H7). The first byte chooses:
//  even: the rest is a received body for parse_notification (tolerant): never
//    crashes; it reads as the general parser alone does, and the one-pass
//    reader of the platform's own shape, when it accepts, agrees; errors are
//    of the documented kinds; a member name repeated in an object (an oracle
//    on nlohmann's SAX) is refused naming a repeated member (J1), a body nlohmann refuses is refused; what converts to
//    a notification writes, parses and writes back to the same bytes;
//  odd: the rest builds a notification from fuzzed strings, and the direct
//    writer is compared with nlohmann::ordered_json's dump (a differential
//    check): equal bytes for valid UTF-8; for invalid UTF-8 the writer gives
//    errc::invalid_utf8 naming the first bad field and offset (checked against
//    an independent validator) while dump throws type_error 316.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>
#include <nlohmann/json.hpp>

#include "duplicate_members.hpp"
#include "fuzz_common.hpp"
#include "keyhook/events.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/received_notification.hpp"

namespace {

using keyhook::errc;

void fuzz_received(std::string_view body) {
    const auto r = keyhook::try_parse_notification(body);
    // The one-pass reader of the platform's own shape and the parser agree.
    if (body.size() <= keyhook::body_limits{}.max_bytes) {
        const auto general = keyhook::detail::parse_received_body(body, keyhook::body_limits{}.max_depth);
        fuzz::check(r.has_value() == general.has_value() && (r ? *r == *general : r.error() == general.error()),
                    "try_parse_notification and the parser disagree", r ? "" : r.error().what());
        keyhook::received_notification one_pass;
        if (keyhook::detail::read_canonical_notification(body, one_pass))
            fuzz::check(general.has_value() && one_pass == *general, "the one-pass reader and the parser disagree");
    }
    nlohmann::json dom;
    const bool have_dom = fuzz::parse_json(body, dom, 16);
    bool nlohmann_reads = false;
    // The repeats found before nlohmann stops, if it does.
    const auto repeated = fuzz::repeated_members(body, nlohmann_reads);
    if (!have_dom) fuzz::check(!r, "parse_notification accepts what nlohmann refuses");
    if (!repeated.empty()) fuzz::check(!r, "parse_notification accepts a repeated member name", repeated.front());
    if (!r) {
        const auto c = r.error().code;
        fuzz::check(c == errc::syntax_error || c == errc::limit_exceeded || c == errc::wrong_type ||
                        c == errc::duplicate_member || c == errc::out_of_range,
                    "parse_notification failed with an undocumented kind", r.error().what());
        if (c == errc::duplicate_member)
            fuzz::check(std::find(repeated.begin(), repeated.end(), r.error().path) != repeated.end(),
                        "duplicate_member names no repeated member", r.error().path);
        return;
    }
    fuzz::check(r->event.has_value() == keyhook::find_event_type(r->user_action).has_value(),
                "event is set iff UserAction names a known type");
    const auto n = keyhook::try_to_notification(*r);
    if (!n) {
        const auto c = n.error().code;
        fuzz::check((c == errc::unknown_event && n.error().path == "UserAction") ||
                        (c == errc::invalid_timestamp && n.error().path == "RequestTimeStamp"),
                    "to_notification failed with an undocumented error", n.error().what());
        return;
    }
    const auto body1 = keyhook::try_notification_body(*n);
    fuzz::check(body1.has_value(), "a parsed notification does not write", body1 ? "" : body1.error().what());
    const auto r2 = keyhook::try_parse_notification(*body1);
    fuzz::check(r2.has_value(), "a written body does not parse");
    fuzz::check(r2->mismatches.empty(), "a written body has mismatched Data twins");
    const auto n2 = keyhook::try_to_notification(*r2);
    fuzz::check(n2.has_value(), "a written body does not convert back");
    fuzz::check(n2->folder_name == n->folder_name && n2->service_name == n->service_name &&
                    n2->entity_id == n->entity_id && n2->user_action == n->user_action &&
                    n2->audit_type == n->audit_type && n2->file_name == n->file_name &&
                    n2->service_version_id == n->service_version_id && n2->tenant == n->tenant,
                "write, parse changed a field");
    const auto body2 = keyhook::try_notification_body(*n2);
    fuzz::check(body2.has_value() && *body2 == *body1, "write, parse, write is not stable");
}

void fuzz_writer(FuzzedDataProvider& in) {
    keyhook::notification n;
    std::string* fields[] = {&n.folder_name, &n.service_name,       &n.entity_id, &n.audit_type,
                             &n.file_name,   &n.service_version_id, &n.tenant};
    for (auto* f : fields) *f = in.ConsumeRandomLengthString(256);
    n.user_action =
        keyhook::all_event_types()[in.ConsumeIntegralInRange<std::size_t>(0, keyhook::event_type_count - 1)];
    n.request_time = keyhook::timestamp{std::chrono::microseconds{in.ConsumeIntegral<std::int64_t>()}};

    const auto written = keyhook::try_notification_body(n);
    nlohmann::ordered_json j = n;
    std::string dumped;
    bool dump_threw = false;
    try {
        dumped = j.dump();
    } catch (const nlohmann::json::type_error& e) {
        fuzz::check(e.id == 316, "dump threw a type_error other than 316", e.what());
        dump_threw = true;
    }

    // The first invalid field, in the writer's order of checking.
    const char* paths[] = {"FolderName",    "ServiceName",           "EntityId", "AuditType",
                           "Data.FileName", "Data.ServiceVersionId", "Tenant"};
    std::string expected_path;
    std::size_t expected_at = std::string::npos;
    for (std::size_t i = 0; i < 7 && expected_path.empty(); ++i) {
        expected_at = fuzz::first_invalid_utf8(*fields[i]);
        if (expected_at != std::string::npos) expected_path = paths[i];
    }

    if (expected_path.empty()) {
        fuzz::check(!dump_threw, "dump refused valid UTF-8");
        fuzz::check(written.has_value(), "the writer refused valid UTF-8", written ? "" : written.error().what());
        fuzz::check(*written == dumped, "the writer's bytes differ from ordered_json's dump", *written + "\n" + dumped);
        // Appending writes the same bytes after what is there.
        std::string out = "prefix";
        const auto appended = keyhook::try_write_notification(out, n);
        fuzz::check(appended.has_value() && *appended == dumped.size() && out == "prefix" + dumped,
                    "appending differs from writing");
    } else {
        fuzz::check(dump_threw, "dump accepted invalid UTF-8");
        fuzz::check(!written, "the writer accepted invalid UTF-8");
        fuzz::check(written.error().code == errc::invalid_utf8, "invalid UTF-8 gave another kind");
        fuzz::check(written.error().path == expected_path, "invalid UTF-8 names the wrong field", written.error().path);
        fuzz::check(written.error().message == "invalid UTF-8 at byte " + std::to_string(expected_at),
                    "invalid UTF-8 names the wrong offset", written.error().message);
        std::string out = "kept";
        fuzz::check(!keyhook::try_write_notification(out, n) && out == "kept", "a failed write changed the output");
    }
}

}  // namespace

KEYHOOK_FUZZ_TARGET(notification) {
    if (size == 0) return 0;
    if ((data[0] & 1) == 0) {
        fuzz_received(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
    } else {
        FuzzedDataProvider in(data + 1, size - 1);
        fuzz_writer(in);
    }
    return 0;
}
