// The hostile-input catalogue: malformed and hostile inputs for every core
// parser and validator, each with the exact error kind and path it must give.
// Truncated and malformed JSON, wrong types, huge and negative numbers, deep
// nesting (10,000 levels), 10 MB strings, invalid UTF-8, NUL bytes, CR/LF in
// header values, out-of-range dates, refused addresses, ...
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hostile.hpp"
#include "keyhook/keyhook.hpp"
#include "../../examples/shared/dispatch_input.hpp"

using namespace std::string_literals;
using hostile::row;
using keyhook::errc;

namespace {

const std::string ten_mb(10u << 20, 'a');

std::string repeat(const std::string& s, std::size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

// ---------------------------------------------------------------------------
// List responses and records (L2, S2, T1-T3)

nlohmann::json good_record() {
    return {{"id", "3f2a7c4e-1b2d-4e5f-8a9b-0c1d2e3f4a5b"},
            {"name", "billing sync"},
            {"status", "Active"},
            {"activeFrom", "2025-01-02T00:00:00Z"},
            {"expireAt", "2025-02-01T00:00:00Z"}};
}

std::string record_with(const std::string& member, const nlohmann::json& value) {
    auto r = good_record();
    r[member] = value;
    return r.dump();
}

std::string record_without(const std::string& member) {
    auto r = good_record();
    r.erase(member);
    return r.dump();
}

// A record whose `member` holds raw JSON text (for bytes nlohmann would not write).
std::string record_raw(const std::string& member, const std::string& raw) {
    auto r = good_record();
    r.erase(member);
    auto text = r.dump();
    text.pop_back();
    return text + ",\"" + member + "\":" + raw + "}";
}

std::string page_of(const std::string& records) {
    return R"({"status":"success","data":{"count":1,"page":1,"pageSize":1,"result":[)" + records + "]}}";
}

std::string data_of(const std::string& members) { return R"({"status":"success","data":{)" + members + "}}"; }

hostile::runner_map list_runners() {
    hostile::runner_map m;
    m["key_list"] = [](const std::string& in) -> std::optional<keyhook::error> {
        keyhook::key_list_options o;
        o.mode = keyhook::key_list_mode::strict;
        auto p = keyhook::try_parse_key_list(in, o);
        if (p) return std::nullopt;
        return p.error();
    };
    m["key_list_lenient"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto p = keyhook::try_parse_key_list(in);
        if (!p) return p.error();
        if (p->rejected.empty()) return std::nullopt;
        return p->rejected.back();
    };
    m["record"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto r = keyhook::try_api_key_from_json(nlohmann::json::parse(in), "record");
        if (r) return std::nullopt;
        return r.error();
    };
    m["timestamp"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto t = keyhook::try_parse_timestamp(in);
        if (t) return std::nullopt;
        return t.error();
    };
    return m;
}

const std::string ok_data = R"("count":1,"page":1,"pageSize":1)";
const std::string r0 = "data.result[0]";

std::vector<row> list_rows() {
    const std::string deep_open = repeat("[", 10000), deep_close = repeat("]", 10000);
    return {
        // not JSON, truncated, trailing bytes
        {"key_list", "", errc::syntax_error, "", "L2"},
        {"key_list", "{", errc::syntax_error, "", "L2"},
        {"key_list", R"({"status":"success","data":{"count":1)", errc::syntax_error, "", "L2"},
        {"key_list", page_of(good_record().dump()).substr(0, 90), errc::syntax_error, "", "L2"},
        {"key_list", page_of(good_record().dump()) + " x", errc::syntax_error, "", "L2"},
        {"key_list", page_of(good_record().dump()) + "{}", errc::syntax_error, "", "L2"},
        {"key_list", R"({"status":"success",})", errc::syntax_error, "", "L2"},
        {"key_list", R"({'status':'success'})", errc::syntax_error, "", "L2"},
        {"key_list", "\xef\xbb\xbf\xef\xbb\xbf{}", errc::syntax_error, "", "L2"},
        {"key_list",
         R"({"status":"succ)"
         "\x00"
         R"(ess"})"s,
         errc::syntax_error, "", "L2"},
        {"key_list", R"({"status":"succ\x"})", errc::syntax_error, "", "L2"},
        {"key_list", R"({"status":"\ud800"})", errc::syntax_error, "", "L2"},
        // invalid UTF-8 inside strings
        {"key_list", "{\"status\":\"succ\xff\"}", errc::invalid_utf8, "", "L2"},
        {"key_list", "{\"status\":\"\xc0\xaf\"}", errc::invalid_utf8, "", "L2"},
        {"key_list", "{\"status\":\"\xed\xa0\x80\"}", errc::invalid_utf8, "", "L2"},
        {"key_list", page_of(record_raw("name", "\"\xf4\x90\x80\x80\"")), errc::invalid_utf8, "", "L2"},
        // the envelope: wrong types and missing members
        {"key_list", "[]", errc::wrong_type, "", "L2"},
        {"key_list", "null", errc::wrong_type, "", "L2"},
        {"key_list", "\"success\"", errc::wrong_type, "", "L2"},
        {"key_list", "42", errc::wrong_type, "", "L2"},
        // A root of the wrong type is reported once the text is read; this one
        // nests past the depth limit first.
        {"key_list", deep_open + deep_close, errc::limit_exceeded, "", "L2"},
        {"key_list", repeat("[", 64) + repeat("]", 64), errc::wrong_type, "", "L2"},
        {"key_list", "{}", errc::missing_member, "status", "L2"},
        {"key_list", R"({"status":null})", errc::missing_member, "status", "L2"},
        {"key_list", R"({"status":1})", errc::wrong_type, "status", "L2"},
        {"key_list", R"({"status":["success"]})", errc::wrong_type, "status", "L2"},
        {"key_list", R"({"status":"failure","message":"token expired","errorCode":401})", errc::not_success, "status",
         "L2"},
        {"key_list", R"({"status":"","data":{}})", errc::not_success, "status", "L2"},
        {"key_list", R"({"status":"success "})", errc::not_success, "status", "L2"},
        {"key_list", "{\"status\":\"" + ten_mb + "\"}", errc::not_success, "status", "L2"},
        {"key_list", R"({"status":"success"})", errc::missing_member, "data", "L2"},
        {"key_list", R"({"status":"success","data":null})", errc::missing_member, "data", "L2"},
        {"key_list", R"({"status":"success","data":[]})", errc::wrong_type, "data", "L2"},
        {"key_list", R"({"status":"success","data":"x"})", errc::wrong_type, "data", "L2"},
        {"key_list", data_of(""), errc::missing_member, "data.count", "L2"},
        {"key_list", data_of(R"("count":1)"), errc::missing_member, "data.page", "L2"},
        {"key_list", data_of(R"("count":1,"page":1)"), errc::missing_member, "data.pageSize", "L2"},
        {"key_list", data_of(ok_data), errc::missing_member, "data.result", "L2"},
        {"key_list", data_of(ok_data + R"(,"result":null)"), errc::missing_member, "data.result", "L2"},
        {"key_list", data_of(ok_data + R"(,"result":{})"), errc::wrong_type, "data.result", "L2"},
        {"key_list", data_of(ok_data + R"(,"result":"[]")"), errc::wrong_type, "data.result", "L2"},
        // numbers: negative, fractional, huge, of the wrong type
        {"key_list", data_of(R"("count":-1,"page":1,"pageSize":1,"result":[])"), errc::out_of_range, "data.count",
         "L2"},
        {"key_list", data_of(R"("count":1,"page":-5,"pageSize":1,"result":[])"), errc::out_of_range, "data.page", "L2"},
        {"key_list", data_of(R"("count":1,"page":1,"pageSize":-100,"result":[])"), errc::out_of_range, "data.pageSize",
         "L2"},
        {"key_list", data_of(R"("count":1,"page":-9223372036854775808,"pageSize":1,"result":[])"), errc::out_of_range,
         "data.page", "L2"},
        {"key_list", data_of(R"("count":9223372036854775808,"page":1,"pageSize":1,"result":[])"), errc::out_of_range,
         "data.count", "L2"},
        {"key_list", data_of(R"("count":18446744073709551615,"page":1,"pageSize":1,"result":[])"), errc::out_of_range,
         "data.count", "L2"},
        {"key_list", data_of(R"("count":18446744073709551616,"page":1,"pageSize":1,"result":[])"), errc::out_of_range,
         "data.count", "L2 J2"},
        {"key_list", data_of(R"("count":1,"page":1.5,"pageSize":1,"result":[])"), errc::wrong_type, "data.page", "L2"},
        {"key_list", data_of(R"("count":1,"page":1,"pageSize":1e3,"result":[])"), errc::wrong_type, "data.pageSize",
         "L2"},
        {"key_list", data_of(R"("count":"1","page":1,"pageSize":1,"result":[])"), errc::wrong_type, "data.count", "L2"},
        {"key_list", data_of(R"("count":true,"page":1,"pageSize":1,"result":[])"), errc::wrong_type, "data.count",
         "L2"},
        {"key_list", data_of(R"("count":1,"page":{},"pageSize":1,"result":[])"), errc::wrong_type, "data.page", "L2"},
        // J2 (once pinned as syntax errors without a path)
        {"key_list", data_of(R"("count":1e999,"page":1,"pageSize":1,"result":[])"), errc::out_of_range, "data.count",
         "L2 J2"},
        {"key_list", data_of("\"count\":" + repeat("9", 5000) + R"(,"page":1,"pageSize":1,"result":[])"),
         errc::out_of_range, "data.count", "L2 J2"},
        // nesting 10,000 deep, in the envelope and inside a record
        {"key_list", R"({"status":"success","data":)" + deep_open + deep_close + "}", errc::limit_exceeded, "", "L2"},
        {"key_list", repeat(R"({"a":)", 10000) + "1" + repeat("}", 10000), errc::limit_exceeded, "", "L2"},
        {"key_list", page_of(record_raw("description", deep_open + deep_close)), errc::limit_exceeded, r0, "L2"},
        {"key_list", page_of(record_raw("groups", deep_open + deep_close)), errc::limit_exceeded, r0 + ".groups", "L2"},
        // records
        {"key_list", page_of("1"), errc::wrong_type, r0, "L2"},
        {"key_list", page_of("null"), errc::wrong_type, r0, "L2"},
        {"key_list", page_of("[]"), errc::wrong_type, r0, "L2"},
        {"key_list", page_of(nlohmann::json(good_record().dump()).dump()), errc::wrong_type, r0, "L2"},
        {"key_list", page_of("{}"), errc::missing_member, r0 + ".id", "L2"},
        {"key_list", page_of(record_without("id")), errc::missing_member, r0 + ".id", "L2"},
        {"key_list", page_of(record_with("id", nullptr)), errc::missing_member, r0 + ".id", "L2"},
        {"key_list", page_of(record_with("id", 7)), errc::wrong_type, r0 + ".id", "L2"},
        {"key_list", page_of(record_without("name")), errc::missing_member, r0 + ".name", "L2"},
        {"key_list", page_of(record_with("name", nlohmann::json::array())), errc::wrong_type, r0 + ".name", "L2"},
        {"key_list", page_of(record_with("name", ten_mb)), errc::limit_exceeded, r0 + ".name", "L2"},
        {"key_list", page_of(record_with("description", ten_mb)), errc::limit_exceeded, r0 + ".description", "L2"},
        {"key_list", page_of(record_with("groups", {"user:pf", ten_mb})), errc::limit_exceeded, r0 + ".groups[1]",
         "L2"},
        {"key_list", page_of(record_without("status")), errc::missing_member, r0 + ".status", "L2 S2"},
        {"key_list", page_of(record_with("status", "Pending")), errc::invalid_value, r0 + ".status", "S2"},
        {"key_list", page_of(record_with("status", "")), errc::invalid_value, r0 + ".status", "S2"},
        {"key_list", page_of(record_with("status", "Activ")), errc::invalid_value, r0 + ".status", "S2"},
        {"key_list", page_of(record_with("status", "Active\u00a0")), errc::invalid_value, r0 + ".status", "S2"},
        {"key_list", page_of(record_with("status", "Active"s + '\0')), errc::invalid_value, r0 + ".status", "S2"},
        {"key_list", page_of(record_with("status", repeat("active ", 1000))), errc::invalid_value, r0 + ".status",
         "S2"},
        {"key_list", page_of(record_with("status", ten_mb)), errc::invalid_value, r0 + ".status", "S2"},
        {"key_list", page_of(record_with("status", 1)), errc::wrong_type, r0 + ".status", "S2"},
        {"key_list", page_of(record_with("masked", 5)), errc::wrong_type, r0 + ".masked", "L2"},
        {"key_list", page_of(record_with("userId", false)), errc::wrong_type, r0 + ".userId", "L2"},
        {"key_list", page_of(record_with("type", nlohmann::json::object())), errc::wrong_type, r0 + ".type", "L2"},
        {"key_list", page_of(record_with("createdBy", 1.5)), errc::wrong_type, r0 + ".createdBy", "L2"},
        {"key_list", page_of(record_with("groups", "user:pf")), errc::wrong_type, r0 + ".groups", "L2"},
        {"key_list", page_of(record_with("groups", {1})), errc::wrong_type, r0 + ".groups[0]", "L2"},
        {"key_list", page_of(record_with("groups", {"user:pf", nullptr})), errc::wrong_type, r0 + ".groups[1]", "L2"},
        {"key_list", page_of(record_with("groups", {"user:pf", {"x"}})), errc::wrong_type, r0 + ".groups[1]", "L2"},
        // timestamps inside records
        {"key_list", page_of(record_without("activeFrom")), errc::missing_member, r0 + ".activeFrom", "L2"},
        {"key_list", page_of(record_with("activeFrom", nullptr)), errc::missing_member, r0 + ".activeFrom", "L2"},
        {"key_list", page_of(record_with("activeFrom", "2025-02-30T00:00:00Z")), errc::invalid_timestamp,
         r0 + ".activeFrom", "T2"},
        {"key_list", page_of(record_with("expireAt", "2025-13-01T00:00:00Z")), errc::invalid_timestamp,
         r0 + ".expireAt", "T2"},
        {"key_list", page_of(record_with("expireAt", 1735689600)), errc::wrong_type, r0 + ".expireAt", "T1"},
        {"key_list", page_of(record_with("expireAt", ten_mb)), errc::invalid_timestamp, r0 + ".expireAt", "T2"},
        {"key_list", page_of(record_with("createdAt", "yesterday")), errc::invalid_timestamp, r0 + ".createdAt", "T2"},
        {"key_list", page_of(record_with("updatedAt", "2025-01-01T00:00:00")), errc::invalid_timestamp,
         r0 + ".updatedAt", "T2"},
        {"key_list", page_of(record_with("lastUsedAt", true)), errc::wrong_type, r0 + ".lastUsedAt", "T1"},
        // the first of several faults in a record, and records after the first
        {"key_list", page_of(record_with("name", 1) + "," + record_without("id")), errc::wrong_type, r0 + ".name",
         "L2"},
        {"key_list", page_of(good_record().dump() + "," + record_without("id")), errc::missing_member,
         "data.result[1].id", "L2"},
        {"key_list", page_of(good_record().dump() + ",2," + good_record().dump()), errc::wrong_type, "data.result[1]",
         "L2"},
        // lenient mode keeps the good records and sets the bad ones aside (the last is checked)
        {"key_list_lenient", page_of(good_record().dump() + "," + record_with("expireAt", "2023-02-29T00:00:00Z")),
         errc::invalid_timestamp, "data.result[1].expireAt", "L2 T2"},
        {"key_list_lenient", page_of("1,2,3," + good_record().dump() + ",[]"), errc::wrong_type, "data.result[4]",
         "L2"},
        {"key_list_lenient", page_of(record_with("status", "deleted")), errc::invalid_value, r0 + ".status", "L2 S2"},
        {"key_list_lenient", data_of(R"("count":1,"page":0,"pageSize":-1,"result":[])"), errc::out_of_range,
         "data.pageSize", "L2"},
        {"key_list_lenient", page_of(record_raw("groups", deep_open + deep_close)), errc::limit_exceeded,
         r0 + ".groups", "L2"},
        // a record on its own
        {"record", "[]", errc::wrong_type, "record", "L2"},
        {"record", "{}", errc::missing_member, "record.id", "L2"},
        {"record", record_with("id", {{"x", 1}}), errc::wrong_type, "record.id", "L2"},
        {"record", record_with("status", "REVOKED!"), errc::invalid_value, "record.status", "S2"},
        {"record", record_with("groups", {"a", 2}), errc::wrong_type, "record.groups[1]", "L2"},
        {"record", record_with("expireAt", "2025-01-01T00:00:00+01:60"), errc::invalid_timestamp, "record.expireAt",
         "T1"},
        {"record", record_with("activeFrom", "0000-12-31T23:59:59Z"), errc::invalid_timestamp, "record.activeFrom",
         "T3"},
        // timestamps on their own (T1-T3)
        {"timestamp", "", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01T00:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01T00:00:00", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01 00:00:00Z", errc::invalid_timestamp, "", "T1"},
        {"timestamp", "2025-1-01T00:00:00Z", errc::invalid_timestamp, "", "T1"},
        {"timestamp", "+2025-01-01T00:00:00Z", errc::invalid_timestamp, "", "T1"},
        {"timestamp", "-2025-01-01T00:00:00Z", errc::invalid_timestamp, "", "T1"},
        {"timestamp", "2025-13-01T00:00:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-00-10T00:00:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-00T00:00:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-04-31T00:00:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-02-29T00:00:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "1900-02-29T00:00:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01T24:00:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01T00:60:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01T00:00:61Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01T00:00:00.Z", errc::invalid_timestamp, "", "T1"},
        {"timestamp", "2025-01-01T00:00:00.1234567890Z", errc::invalid_timestamp, "", "T1"},
        {"timestamp", "2025-01-01T00:00:00+0100", errc::invalid_timestamp, "", "T1"},
        {"timestamp", "2025-01-01T00:00:00+01", errc::invalid_timestamp, "", "T1"},
        {"timestamp", "2025-01-01T00:00:00+01:60", errc::invalid_timestamp, "", "T1"},
        {"timestamp", "2025-01-01T00:00:00ZZ", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01T00:00:00Z ", errc::invalid_timestamp, "", "T2"},
        {"timestamp", " 2025-01-01T00:00:00Z", errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01T00:00:00\0Z"s, errc::invalid_timestamp, "", "T2"},
        {"timestamp", "2025-01-01T00:00:00Z\0"s, errc::invalid_timestamp, "", "T2"},
        {"timestamp", "\xef\xbc\x92\xef\xbc\x90\xef\xbc\x92\xef\xbc\x95-01-01T00:00:00Z", errc::invalid_timestamp, "",
         "T1"},
        {"timestamp", "10000-01-01T00:00:00Z", errc::invalid_timestamp, "", "T3"},
        {"timestamp", "0000-01-01T00:00:00Z", errc::invalid_timestamp, "", "T3"},
        {"timestamp", "9999-12-31T23:59:59-00:01", errc::invalid_timestamp, "", "T3"},
        {"timestamp", "0001-01-01T00:00:00+00:01", errc::invalid_timestamp, "", "T3"},
        {"timestamp", ten_mb, errc::invalid_timestamp, "", "T2"},
    };
}

// ---------------------------------------------------------------------------
// Notifications (H6, H7), event names (H3, H5)

const keyhook::timestamp when{std::chrono::milliseconds{1767225600123}};

keyhook::notification good_notification() {
    keyhook::notification n;
    n.folder_name = "Lending";
    n.service_name = "Pricing";
    n.entity_id = "f00d";
    n.user_action = keyhook::event_type::PublishEngine;
    n.audit_type = "ProductEngine";
    n.file_name = "pricing.xlsx";
    n.service_version_id = "v7";
    n.tenant = "acme";
    n.request_time = when;
    return n;
}

std::optional<keyhook::error> write_with(std::string keyhook::notification::*field, const std::string& value) {
    auto n = good_notification();
    n.*field = value;
    auto body = keyhook::try_notification_body(n);
    if (body) return std::nullopt;
    return body.error();
}

hostile::runner_map event_runners() {
    hostile::runner_map m;
    m["notification"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto r = keyhook::try_parse_notification(in);
        if (r) return std::nullopt;
        return r.error();
    };
    m["to_notification"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto r = keyhook::try_parse_notification(in);
        if (!r) return r.error();
        auto n = keyhook::try_to_notification(*r);
        if (n) return std::nullopt;
        return n.error();
    };
    m["write_FolderName"] = [](const std::string& in) { return write_with(&keyhook::notification::folder_name, in); };
    m["write_ServiceName"] = [](const std::string& in) { return write_with(&keyhook::notification::service_name, in); };
    m["write_EntityId"] = [](const std::string& in) { return write_with(&keyhook::notification::entity_id, in); };
    m["write_FileName"] = [](const std::string& in) { return write_with(&keyhook::notification::file_name, in); };
    m["write_Tenant"] = [](const std::string& in) { return write_with(&keyhook::notification::tenant, in); };
    m["write_AuditType"] = [](const std::string& in) { return write_with(&keyhook::notification::audit_type, in); };
    m["write_ServiceVersionId"] = [](const std::string& in) {
        return write_with(&keyhook::notification::service_version_id, in);
    };
    m["event_name"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto e = keyhook::try_parse_event_type(in);
        if (e) return std::nullopt;
        return e.error();
    };
    m["event_filter"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto f = keyhook::try_parse_event_filter(hostile::split(in));
        if (f) return std::nullopt;
        return f.error();
    };
    return m;
}

std::vector<row> event_rows() {
    const std::string body =
        R"({"FolderName":"Lending","UserAction":"PublishEngine","RequestTimeStamp":"2025-03-04T05:06:07.890Z"})";
    return {
        {"notification", "", errc::syntax_error, "", "H7"},
        {"notification", "{", errc::syntax_error, "", "H7"},
        {"notification", body.substr(0, body.size() - 3), errc::syntax_error, "", "H7"},
        {"notification", body + "{}", errc::syntax_error, "", "H7"},
        {"notification",
         R"({"FolderName":"a)"
         "\0"
         R"(b"})"s,
         errc::syntax_error, "", "H7"},
        {"notification", "{\"FolderName\":\"\xff\"}", errc::syntax_error, "", "H7"},
        {"notification", body + "\0"s + body, errc::syntax_error, "", "H7"},
        {"notification", body + "\0"s, errc::syntax_error, "", "H7"},
        {"notification", "{\"FolderName\":\"\xed\xa0\x80\"}", errc::syntax_error, "", "H7"},
        {"notification", R"({"FolderName":"\udc00"})", errc::syntax_error, "", "H7"},
        // J2 (once pinned as syntax errors without a path)
        {"notification", R"({"x":1e999})", errc::out_of_range, "x", "H7 J2"},
        {"notification", "55e0555555555", errc::out_of_range, "", "H7 J2"},
        {"notification", R"({"FolderName":"a","Data":{"FileName":-1e400}})", errc::out_of_range, "Data.FileName",
         "H7 J2"},
        {"notification", "[]", errc::wrong_type, "", "H7"},
        {"notification", "null", errc::wrong_type, "", "H7"},
        {"notification", "\"x\"", errc::wrong_type, "", "H7"},
        {"notification", R"({"FolderName":1})", errc::wrong_type, "FolderName", "H7"},
        {"notification", R"({"ServiceName":[]})", errc::wrong_type, "ServiceName", "H7"},
        {"notification", R"({"EntityId":{}})", errc::wrong_type, "EntityId", "H7"},
        {"notification", R"({"UserAction":["PublishEngine"]})", errc::wrong_type, "UserAction", "H7"},
        {"notification", R"({"AuditType":true})", errc::wrong_type, "AuditType", "H7"},
        {"notification", R"({"Tenant":false})", errc::wrong_type, "Tenant", "H7"},
        {"notification", R"({"RequestTimeStamp":1741064767})", errc::wrong_type, "RequestTimeStamp", "H7"},
        {"notification", R"({"Data":[]})", errc::wrong_type, "Data", "H7"},
        {"notification", R"({"Data":"x"})", errc::wrong_type, "Data", "H7"},
        {"notification", R"({"Data":{"FileName":{}}})", errc::wrong_type, "Data.FileName", "H7"},
        {"notification", R"({"Data":{"ServiceVersionId":7}})", errc::wrong_type, "Data.ServiceVersionId", "H7"},
        {"notification", R"({"Data":{"ProductName":5}})", errc::wrong_type, "Data.ProductName", "H7"},
        {"notification", R"({"Data":{"EngineName":[1]}})", errc::wrong_type, "Data.EngineName", "H7"},
        {"notification", R"({"Data":{"ProductId":1.5}})", errc::wrong_type, "Data.ProductId", "H7"},
        {"notification", "{\"FolderName\":\"" + ten_mb + "\"}", errc::limit_exceeded, "", "H7"},
        {"notification", std::string(2u << 20, ' ') + "{}", errc::limit_exceeded, "", "H7"},
        {"notification", R"({"x":)" + repeat("[", 10000) + repeat("]", 10000) + "}", errc::limit_exceeded, "", "H7"},
        {"notification", repeat(R"({"Data":)", 17) + "{}" + repeat("}", 17), errc::limit_exceeded, "", "H7"},
        {"to_notification", R"({"UserAction":"publishengine","RequestTimeStamp":"2025-03-04T05:06:07Z"})",
         errc::unknown_event, "UserAction", "H5"},
        {"to_notification", R"({"RequestTimeStamp":"2025-03-04T05:06:07Z"})", errc::unknown_event, "UserAction", "H5"},
        {"to_notification", R"({"UserAction":"PublishEngine","RequestTimeStamp":"2025-02-30T05:06:07Z"})",
         errc::invalid_timestamp, "RequestTimeStamp", "T2"},
        {"to_notification", R"({"UserAction":"PublishEngine"})", errc::invalid_timestamp, "RequestTimeStamp", "T2"},
        {"to_notification", R"({"UserAction":"PublishEngine","RequestTimeStamp":"now"})", errc::invalid_timestamp,
         "RequestTimeStamp", "T2"},
        // the writer refuses what is not UTF-8 rather than writing invalid JSON (H6)
        {"write_FolderName", "\xff", errc::invalid_utf8, "FolderName", "H6"},
        {"write_FolderName", "ok\xc0\xaf", errc::invalid_utf8, "FolderName", "H6"},
        {"write_ServiceName", "\xed\xa0\x80", errc::invalid_utf8, "ServiceName", "H6"},
        {"write_EntityId", "\xf4\x90\x80\x80", errc::invalid_utf8, "EntityId", "H6"},
        {"write_AuditType", "\xe2\x82", errc::invalid_utf8, "AuditType", "H6"},
        {"write_FileName", "\x80", errc::invalid_utf8, "Data.FileName", "H6"},
        {"write_ServiceVersionId", "\xf8\x88\x80\x80\x80", errc::invalid_utf8, "Data.ServiceVersionId", "H6"},
        {"write_Tenant", ten_mb + "\xfe", errc::invalid_utf8, "Tenant", "H6"},
        // event names are case-sensitive, exact, and the 53 of spec 6.1
        {"event_name", "", errc::unknown_event, "", "H3 H5"},
        {"event_name", "addproduct", errc::unknown_event, "", "H3 H5"},
        {"event_name", "AddProduct ", errc::unknown_event, "", "H3 H5"},
        {"event_name", " AddProduct", errc::unknown_event, "", "H3 H5"},
        {"event_name", "AddProduct\0"s, errc::unknown_event, "", "H3 H5"},
        {"event_name", "AddProduct\n", errc::unknown_event, "", "H3 H5"},
        {"event_name", "EventsDataRetentionSuccess", errc::unknown_event, "", "H5"},
        {"event_name", "SparkLogin", errc::unknown_event, "", "H5"},
        {"event_name", "\xff\xfe", errc::unknown_event, "", "H3"},
        {"event_name", ten_mb, errc::unknown_event, "", "H3"},
        {"event_filter", "AddProduct|Nope", errc::unknown_event, "events[1]", "H3"},
        {"event_filter", "", errc::unknown_event, "events[0]", "H3"},
    };
}

// ---------------------------------------------------------------------------
// Endpoints and addresses (H1)

hostile::runner_map endpoint_runners() {
    hostile::runner_map m;
    m["endpoint"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto e = keyhook::try_validate_endpoint(in);
        if (e) return std::nullopt;
        return e.error();
    };
    m["address"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto a = keyhook::try_check_address(in);
        if (a) return std::nullopt;
        return a.error();
    };
    return m;
}

std::vector<row> endpoint_rows() {
    const auto bad = errc::invalid_endpoint;
    const auto refused = errc::forbidden_address;
    const std::string at_limit = "https://hooks.example.com/" + std::string(2048 - 26, 'p');
    return {
        {"endpoint", "", bad, "endpoint", "H1"},
        {"endpoint", "hooks.example.com/in", bad, "endpoint", "H1"},
        {"endpoint", "//hooks.example.com/in", bad, "endpoint", "H1"},
        {"endpoint", "ftp://hooks.example.com/in", bad, "endpoint", "H1"},
        {"endpoint", "javascript:alert(1)", bad, "endpoint", "H1"},
        {"endpoint", "http://hooks.example.com/in", bad, "endpoint", "H1"},
        {"endpoint", "https:hooks.example.com/in", bad, "endpoint", "H1"},
        {"endpoint", "https:///in", bad, "endpoint", "H1"},
        {"endpoint", "https://user:pw@hooks.example.com/in", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com@evil.example/in", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com\\@evil.example/", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com/in#frag", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com/a b", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com/in\r\nX-Injected: 1", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com/in\0"s, bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com/\x7f", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com/caf\xc3\xa9", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com/%zz", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com/%4", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com/a<b>", bad, "endpoint", "H1"},
        {"endpoint", at_limit + "p", bad, "endpoint", "H1"},
        {"endpoint", "https://" + ten_mb, bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com:0/", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com:65536/", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com:-1/", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com:99999999999999999999/", bad, "endpoint", "H1"},
        {"endpoint", "https://hooks.example.com:/", bad, "endpoint", "H1"},
        {"endpoint", "https://h%6fst.example/", bad, "endpoint", "H1"},
        {"endpoint", "https://-bad-.example.com/", bad, "endpoint", "H1"},
        {"endpoint", "https://" + std::string(64, 'a') + ".example.com/", bad, "endpoint", "H1"},
        {"endpoint", "https://a..example.com/", bad, "endpoint", "H1"},
        {"endpoint", "https://[::1/", bad, "endpoint", "H1"},
        {"endpoint", "https://[fe80::1%25eth0]/", bad, "endpoint", "H1"},
        {"endpoint", "https://[::1]x/", bad, "endpoint", "H1"},
        {"endpoint", "https://[127.0.0.1]/", bad, "endpoint", "H1"},
        // numeric hosts some parsers read as loopback: refused as ambiguous
        {"endpoint", "https://0x7f.0.0.1/", bad, "endpoint", "H1"},
        {"endpoint", "https://0177.0.0.1/", bad, "endpoint", "H1"},
        {"endpoint", "https://2130706433/", bad, "endpoint", "H1"},
        {"endpoint", "https://127.1/", bad, "endpoint", "H1"},
        {"endpoint", "https://127.0.0.01/", bad, "endpoint", "H1"},
        {"endpoint", "https://1.2.3.4.5/", bad, "endpoint", "H1"},
        {"endpoint", "https://example.0x10/", bad, "endpoint", "H1"},
        // refused ranges and names
        {"endpoint", "https://localhost/in", refused, "endpoint", "H1"},
        {"endpoint", "https://LOCALHOST./in", refused, "endpoint", "H1"},
        {"endpoint", "https://api.localhost:8443/in", refused, "endpoint", "H1"},
        {"endpoint", "https://127.0.0.1/in", refused, "endpoint", "H1"},
        {"endpoint", "https://127.0.0.1./in", refused, "endpoint", "H1"},
        {"endpoint", "https://0.0.0.0/", refused, "endpoint", "H1"},
        {"endpoint", "https://10.1.2.3/", refused, "endpoint", "H1"},
        {"endpoint", "https://172.16.0.1/", refused, "endpoint", "H1"},
        {"endpoint", "https://172.31.255.255/", refused, "endpoint", "H1"},
        {"endpoint", "https://192.168.0.1/", refused, "endpoint", "H1"},
        {"endpoint", "https://169.254.169.254/latest/meta-data/", refused, "endpoint", "H1"},
        {"endpoint", "https://100.64.0.1/", refused, "endpoint", "H1"},
        {"endpoint", "https://224.0.0.1/", refused, "endpoint", "H1"},
        {"endpoint", "https://255.255.255.255/", refused, "endpoint", "H1"},
        {"endpoint", "https://[::1]/", refused, "endpoint", "H1"},
        {"endpoint", "https://[::]/", refused, "endpoint", "H1"},
        {"endpoint", "https://[0:0:0:0:0:0:0:1]:443/", refused, "endpoint", "H1"},
        {"endpoint", "https://[fe80::1]/", refused, "endpoint", "H1"},
        {"endpoint", "https://[fc00::1]/", refused, "endpoint", "H1"},
        {"endpoint", "https://[ff02::1]/", refused, "endpoint", "H1"},
        {"endpoint", "https://[::ffff:127.0.0.1]/", refused, "endpoint", "H1"},
        {"endpoint", "https://[::ffff:7f00:1]/", refused, "endpoint", "H1"},
        {"endpoint", "https://[::FFFF:10.0.0.1]/", refused, "endpoint", "H1"},
        {"endpoint", "https://[64:ff9b::a00:1]/", refused, "endpoint", "H1"},
        {"endpoint", "https://[2002:c0a8:101::1]/", refused, "endpoint", "H1"},
        // the same check after name resolution
        {"address", "127.0.0.1", refused, "address", "H1"},
        {"address", "10.0.0.1", refused, "address", "H1"},
        {"address", "100.127.255.255", refused, "address", "H1"},
        {"address", "169.254.0.0", refused, "address", "H1"},
        {"address", "240.0.0.1", refused, "address", "H1"},
        {"address", "::1", refused, "address", "H1"},
        {"address", "::ffff:192.168.1.1", refused, "address", "H1"},
        {"address", "fe80::abcd", refused, "address", "H1"},
        {"address", "fec0::1", refused, "address", "H1"},
        {"address", "fd12:3456::1", refused, "address", "H1"},
        {"address", "", errc::invalid_value, "address", "H1"},
        {"address", "localhost", errc::invalid_value, "address", "H1"},
        {"address", "127.1", errc::invalid_value, "address", "H1"},
        {"address", "0x7f000001", errc::invalid_value, "address", "H1"},
        {"address", "01.2.3.4", errc::invalid_value, "address", "H1"},
        {"address", "256.1.1.1", errc::invalid_value, "address", "H1"},
        {"address", "1.2.3.4 ", errc::invalid_value, "address", "H1"},
        {"address", "1.2.3.4\0"s, errc::invalid_value, "address", "H1"},
        {"address", "[::1]", errc::invalid_value, "address", "H1"},
        {"address", "fe80::1%eth0", errc::invalid_value, "address", "H1"},
        {"address", "1:2:3:4:5:6:7:8:9", errc::invalid_value, "address", "H1"},
        {"address", ":::", errc::invalid_value, "address", "H1"},
        {"address", "1::2::3", errc::invalid_value, "address", "H1"},
        {"address", "::ffff:1.2.3", errc::invalid_value, "address", "H1"},
        {"address", "12345::", errc::invalid_value, "address", "H1"},
        {"address", ten_mb, errc::invalid_value, "address", "H1"},
    };
}

// ---------------------------------------------------------------------------
// Webhook configuration (H1-H3), dispatch (H4, H6, H8)

keyhook::webhook good_webhook() {
    keyhook::webhook w;
    w.name = "crm-sync";
    w.endpoint = "https://hooks.example.com/in";
    w.saved = true;
    return w;
}

std::optional<keyhook::error> validate(const keyhook::webhook& w) {
    auto v = keyhook::try_validate_webhook(w);
    if (v) return std::nullopt;
    return v.error();
}

std::optional<keyhook::error> with_auth(keyhook::auth_location in, std::string name, std::string value) {
    auto w = good_webhook();
    w.auth.push_back({in, std::move(name), keyhook::secret(std::move(value))});
    return validate(w);
}

const std::string tenant_json = R"("tenant":{"name":"acme","webhooksEnabled":true})";

std::string settings_with(const std::string& webhooks) {
    return "{" + tenant_json + R"(,"webhooks":)" + webhooks + "}";
}

std::string hook_with(const std::string& extra) {
    return R"({"name":"crm","endpoint":"https://hooks.example.com/in","saved":true)" + extra + "}";
}

std::string dispatch_with(const std::string& event) {
    return "{" + tenant_json + R"(,"webhooks":[)" + hook_with("") + R"(],"event":)" + event + "}";
}

hostile::runner_map webhook_runners() {
    using keyhook::auth_location;
    hostile::runner_map m;
    m["auth_header_value"] = [](const std::string& in) { return with_auth(auth_location::header, "x-api-key", in); };
    m["auth_header_name"] = [](const std::string& in) { return with_auth(auth_location::header, in, "k-123"); };
    m["auth_query_name"] = [](const std::string& in) { return with_auth(auth_location::query, in, "k-123"); };
    m["auth_query_value"] = [](const std::string& in) { return with_auth(auth_location::query, "api_key", in); };
    m["auth_two_headers"] = [](const std::string& in) {
        auto w = good_webhook();
        for (const auto& name : hostile::split(in))
            w.auth.push_back({auth_location::header, name, keyhook::secret("v")});
        return validate(w);
    };
    m["webhook_name"] = [](const std::string& in) {
        auto w = good_webhook();
        w.name = in;
        return validate(w);
    };
    m["webhook_signing_secret"] = [](const std::string& in) {
        auto w = good_webhook();
        w.signing_secret = keyhook::secret(in);
        return validate(w);
    };
    m["webhook_settings"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto s = keyhook::try_webhook_settings_from_json(nlohmann::json::parse(in));
        if (s) return std::nullopt;
        return s.error();
    };
    m["dispatch_input"] = [](const std::string& in) -> std::optional<keyhook::error> {
        auto d = examples::try_dispatch_input_from_json(nlohmann::json::parse(in), when);
        if (d) return std::nullopt;
        return d.error();
    };
    // A notification field for the one webhook of tenant "acme" (split "field|value").
    m["dispatch_event"] = [](const std::string& in) -> std::optional<keyhook::error> {
        const auto parts = hostile::split(in);
        keyhook::tenant_settings tenant{"acme", true};
        const std::vector<keyhook::validated_webhook> hooks{keyhook::validate_webhook(good_webhook())};
        auto n = good_notification();
        if (parts[0] == "Tenant") n.tenant = parts[1];
        if (parts[0] == "FolderName") n.folder_name = parts[1];
        if (parts[0] == "FileName") n.file_name = parts[1];
        auto r = keyhook::try_dispatch(tenant, hooks, n);
        if (r) return std::nullopt;
        return r.error();
    };
    return m;
}

std::vector<row> webhook_rows() {
    const auto hdr = errc::invalid_header;
    const auto qry = errc::invalid_parameter;
    return {
        // header values: no CR, LF, NUL or other control characters (request splitting)
        {"auth_header_value", "k-1\r\nX-Injected: 1", hdr, "auth[0].value", "H2"},
        {"auth_header_value", "k-1\n", hdr, "auth[0].value", "H2"},
        {"auth_header_value", "\rk-1", hdr, "auth[0].value", "H2"},
        {"auth_header_value", "k-1\0k-2"s, hdr, "auth[0].value", "H2"},
        {"auth_header_value", "k\x01-1", hdr, "auth[0].value", "H2"},
        {"auth_header_value", "k\x7f", hdr, "auth[0].value", "H2"},
        {"auth_header_value", "", hdr, "auth[0].value", "H2"},
        {"auth_header_value", " k-1", hdr, "auth[0].value", "H2"},
        {"auth_header_value", "k-1\t", hdr, "auth[0].value", "H2"},
        // H2 limits come first: a 10 MB value is refused on its length (J3: no quadratic work).
        {"auth_header_value", ten_mb + "\r\n", errc::limit_exceeded, "auth[0].value", "H2"},
        // header names: HTTP tokens, not framing or signing headers
        {"auth_header_name", "", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "x api key", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "x-api-key:", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "x-api-key\r\nX-Injected", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "x-api\0-key"s, hdr, "auth[0].name", "H2"},
        {"auth_header_name", "x-\xc3\xa4pi", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "(x)", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "Host", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "content-length", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "Content-Type", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "TRANSFER-ENCODING", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "Connection", hdr, "auth[0].name", "H2"},
        {"auth_header_name", "webhook-signature", hdr, "auth[0].name", "H2 B1"},
        {"auth_two_headers", "x-api-key|X-API-KEY", hdr, "auth[1].name", "H2"},
        // query parameters: the value is percent-encoded, but line breaks and NUL are refused outright
        {"auth_query_name", "", qry, "auth[0].name", "H2"},
        {"auth_query_name", "api\r\nkey", qry, "auth[0].name", "H2"},
        {"auth_query_name", "api\0key"s, qry, "auth[0].name", "H2"},
        {"auth_query_value", "", qry, "auth[0].value", "H2"},
        {"auth_query_value", "k\n1", qry, "auth[0].value", "H2"},
        {"auth_query_value", "k\0001"s, qry, "auth[0].value", "H2"},
        // the webhook itself
        {"webhook_name", "", errc::invalid_name, "name", "H1"},
        {"webhook_name", "   ", errc::invalid_name, "name", "H1"},
        {"webhook_name", "crm\x07", errc::invalid_name, "name", "H1"},
        {"webhook_name", "crm\nsync", errc::invalid_name, "name", "H1"},
        {"webhook_name", std::string(129, 'w'), errc::invalid_name, "name", "H1"},
        {"webhook_name", "crm\xff", errc::invalid_utf8, "name", "H1"},
        {"webhook_name", ten_mb, errc::invalid_name, "name", "H1"},
        {"webhook_signing_secret", "", errc::invalid_value, "signingSecret", "B1"},
        // configuration JSON
        {"webhook_settings", "[]", errc::wrong_type, "", "H1"},
        {"webhook_settings", "{}", errc::missing_member, "tenant", "H4"},
        {"webhook_settings", R"({"tenant":null,"webhooks":[]})", errc::wrong_type, "tenant", "H4"},
        {"webhook_settings", R"({"tenant":)" + repeat("[", 10000) + repeat("]", 10000) + "}", errc::wrong_type,
         "tenant", "H4"},
        {"webhook_settings", R"({"tenant":{"name":"acme"},"webhooks":[]})", errc::missing_member,
         "tenant.webhooksEnabled", "H4"},
        {"webhook_settings", R"({"tenant":{"name":"acme","webhooksEnabled":"yes"},"webhooks":[]})", errc::wrong_type,
         "tenant.webhooksEnabled", "H4"},
        {"webhook_settings", R"({"tenant":{"name":5,"webhooksEnabled":true},"webhooks":[]})", errc::wrong_type,
         "tenant.name", "H4"},
        {"webhook_settings", "{" + tenant_json + "}", errc::missing_member, "webhooks", "H4"},
        {"webhook_settings", settings_with("{}"), errc::wrong_type, "webhooks", "H1"},
        {"webhook_settings", settings_with("[1]"), errc::wrong_type, "webhooks[0]", "H1"},
        {"webhook_settings", settings_with("[{}]"), errc::missing_member, "webhooks[0].name", "H1"},
        {"webhook_settings", settings_with(R"([{"name":"a"}])"), errc::missing_member, "webhooks[0].endpoint", "H1"},
        {"webhook_settings", settings_with(R"([{"name":"a","endpoint":"https://h.example/"}])"), errc::missing_member,
         "webhooks[0].saved", "H4"},
        {"webhook_settings", settings_with("[" + hook_with(R"(,"saved":"true")") + "]"), errc::wrong_type,
         "webhooks[0].saved", "H4"},
        {"webhook_settings", settings_with("[" + hook_with(R"(,"events":"AddProduct")") + "]"), errc::wrong_type,
         "webhooks[0].events", "H3"},
        {"webhook_settings", settings_with("[" + hook_with(R"(,"events":[1])") + "]"), errc::wrong_type,
         "webhooks[0].events[0]", "H3"},
        {"webhook_settings", settings_with("[" + hook_with(R"(,"events":["AddProduct","addproduct"])") + "]"),
         errc::unknown_event, "webhooks[0].events[1]", "H3"},
        {"webhook_settings", settings_with("[" + hook_with(R"(,"auth":{})") + "]"), errc::wrong_type,
         "webhooks[0].auth", "H2"},
        {"webhook_settings", settings_with("[" + hook_with(R"(,"auth":["x-api-key"])") + "]"), errc::wrong_type,
         "webhooks[0].auth[0]", "H2"},
        {"webhook_settings",
         settings_with("[" + hook_with(R"(,"auth":[{"in":"cookie","name":"k","value":"v"}])") + "]"),
         errc::invalid_value, "webhooks[0].auth[0].in", "H2"},
        {"webhook_settings", settings_with("[" + hook_with(R"(,"auth":[{"name":"k","value":"v"}])") + "]"),
         errc::missing_member, "webhooks[0].auth[0].in", "H2"},
        {"webhook_settings",
         settings_with("[" + hook_with(R"(,"auth":[{"in":"header","name":"x-api-key","value":5}])") + "]"),
         errc::wrong_type, "webhooks[0].auth[0].value", "H2"},
        {"webhook_settings",
         settings_with("[" + hook_with(R"(,"auth":[{"in":"header","name":"x-api-key","value":"a\r\nb"}])") + "]"),
         errc::invalid_header, "webhooks[0].auth[0].value", "H2"},
        {"webhook_settings", settings_with("[" + hook_with(R"(,"signingSecret":5)") + "]"), errc::wrong_type,
         "webhooks[0].signingSecret", "B1"},
        {"webhook_settings", settings_with(R"([{"name":"a","endpoint":"https://10.0.0.1/","saved":true}])"),
         errc::forbidden_address, "webhooks[0].endpoint", "H1"},
        {"webhook_settings",
         settings_with("[" + hook_with("") + R"(,{"name":"b","endpoint":"http://h.example/","saved":true}])"),
         errc::invalid_endpoint, "webhooks[1].endpoint", "H1"},
        {"webhook_settings", settings_with("[" + hook_with("") + "," + hook_with("") + "]"), errc::invalid_name,
         "webhooks[1].name", "H8"},
        // the dispatch input and dispatch
        {"dispatch_input", "{" + tenant_json + R"(,"webhooks":[]})", errc::missing_member, "event", "H4"},
        {"dispatch_input", dispatch_with("[]"), errc::wrong_type, "event", "H4"},
        {"dispatch_input", dispatch_with("{}"), errc::missing_member, "event.UserAction", "H5"},
        {"dispatch_input", dispatch_with(R"({"UserAction":5})"), errc::wrong_type, "event.UserAction", "H5"},
        {"dispatch_input", dispatch_with(R"({"UserAction":"Nope"})"), errc::unknown_event, "event.UserAction", "H3 H5"},
        {"dispatch_input", dispatch_with(R"({"UserAction":"AddProduct","FolderName":5})"), errc::wrong_type,
         "event.FolderName", "H6"},
        {"dispatch_input", dispatch_with(R"({"UserAction":"AddProduct","ServiceVersionId":{}})"), errc::wrong_type,
         "event.ServiceVersionId", "H6"},
        {"dispatch_event", "Tenant|globex", errc::invalid_value, "Tenant", "H4"},
        {"dispatch_event", "Tenant|", errc::invalid_value, "Tenant", "H4"},
        {"dispatch_event", "FolderName|\xff", errc::invalid_utf8, "FolderName", "H6"},
        {"dispatch_event", "FileName|\xc0\x80", errc::invalid_utf8, "Data.FileName", "H6"},
    };
}

// ---------------------------------------------------------------------------
// Receiving (H7), key creation (K2, K3), the list request (L1), and the small
// parsers: Retry-After (B2), base64 (B1), delivery ids (H8)

const keyhook::secret expected_key("correct-key-123");

keyhook::http_request post(std::string url, keyhook::http_headers headers, std::string body = "{}") {
    return keyhook::http_request{"POST", std::move(url), std::move(headers), std::move(body)};
}

template <class R>
std::optional<keyhook::error> error_of(const R& r) {
    if (r) return std::nullopt;
    return r.error();
}

keyhook::key_request good_request() {
    keyhook::key_request r;
    r.name = "billing sync";
    r.active_from = keyhook::parse_timestamp("2025-01-01T00:00:00Z");
    r.expire_at = keyhook::parse_timestamp("2025-02-01T00:00:00Z");
    r.groups = {"user:pf"};
    return r;
}

std::optional<keyhook::error> first_problem(const keyhook::key_request& r) {
    auto errors = keyhook::key_request_problems(r);
    if (errors.empty()) return std::nullopt;
    return errors.front();
}

keyhook::key_list_query good_query() {
    keyhook::key_list_query q;
    q.base_url = "https://utilities.example.com";
    q.tenant = "acme";
    q.token = keyhook::secret("token-123");
    return q;
}

hostile::runner_map misc_runners() {
    hostile::runner_map m;
    m["receive_method"] = [](const std::string& in) {
        auto r = post("/hook", {{"x-api-key", "correct-key-123", true}});
        r.method = in;
        return error_of(keyhook::try_receive_notification(r, expected_key));
    };
    m["receive_url"] = [](const std::string& in) { return error_of(keyhook::try_extract_api_key(post(in, {}))); };
    m["receive_url_and_header"] = [](const std::string& in) {
        return error_of(keyhook::try_extract_api_key(post(in, {{"X-Api-Key", "correct-key-123", true}})));
    };
    m["receive_headers"] = [](const std::string& in) {
        keyhook::http_headers h;
        for (const auto& v : hostile::split(in)) h.push_back({"x-api-key", v, true});
        return error_of(keyhook::try_extract_api_key(post("/hook", h)));
    };
    m["receive_key"] = [](const std::string& in) {
        return error_of(keyhook::try_authenticate(post("/hook", {{"x-api-key", in, true}}), expected_key));
    };
    m["receive_unconfigured"] = [](const std::string& in) {
        return error_of(keyhook::try_authenticate(post("/hook", {{"x-api-key", in, true}}), keyhook::secret()));
    };
    m["receive_body"] = [](const std::string& in) {
        return error_of(keyhook::try_receive_notification(post("/hook?api_key=correct-key-123", {}, in), expected_key));
    };
    m["key_name"] = [](const std::string& in) {
        auto r = good_request();
        r.name = in;
        return first_problem(r);
    };
    m["key_description"] = [](const std::string& in) {
        auto r = good_request();
        r.description = in;
        return first_problem(r);
    };
    m["key_groups"] = [](const std::string& in) {
        auto r = good_request();
        r.groups = in.empty() ? std::vector<std::string>{} : hostile::split(in);
        return first_problem(r);
    };
    m["key_period"] = [](const std::string& in) {
        const auto parts = hostile::split(in);
        auto r = good_request();
        r.active_from = keyhook::timestamp{std::chrono::microseconds{std::stoll(parts[0])}};
        r.expire_at = keyhook::timestamp{std::chrono::microseconds{std::stoll(parts[1])}};
        return first_problem(r);
    };
    m["own_key"] = [](const std::string& in) {
        auto r = good_request();
        r.method = keyhook::own_key{keyhook::secret(in)};
        return first_problem(r);
    };
    m["list_page"] = [](const std::string& in) {
        auto q = good_query();
        q.page = std::stoll(in);
        return error_of(keyhook::try_list_keys_request(q));
    };
    m["list_size"] = [](const std::string& in) {
        auto q = good_query();
        q.size = std::stoll(in);
        return error_of(keyhook::try_list_keys_request(q));
    };
    m["list_base_url"] = [](const std::string& in) {
        auto q = good_query();
        q.base_url = in;
        return error_of(keyhook::try_list_keys_request(q));
    };
    m["list_tenant"] = [](const std::string& in) {
        auto q = good_query();
        q.tenant = in;
        return error_of(keyhook::try_list_keys_request(q));
    };
    m["list_token"] = [](const std::string& in) {
        auto q = good_query();
        q.token = keyhook::secret(in);
        return error_of(keyhook::try_list_keys_request(q));
    };
    m["retry_after"] = [](const std::string& in) { return error_of(keyhook::try_parse_retry_after(in)); };
    m["base64"] = [](const std::string& in) { return error_of(keyhook::try_base64_decode(in)); };
    m["delivery_id"] = [](const std::string& in) { return error_of(keyhook::try_parse_delivery_id(in)); };
    return m;
}

std::vector<row> misc_rows() {
    const std::string hex32 = "0123456789abcdef0123456789abcdef";
    return {
        // receiving (H7, spec 4.4)
        {"receive_method", "GET", errc::method_not_allowed, "method", "H7"},
        {"receive_method", "post", errc::method_not_allowed, "method", "H7"},
        {"receive_method", "", errc::method_not_allowed, "method", "H7"},
        {"receive_method", "POST ", errc::method_not_allowed, "method", "H7"},
        {"receive_method", "POST\r\n", errc::method_not_allowed, "method", "H7"},
        {"receive_url", "/hook", errc::unauthorized, "x-api-key", "H7"},
        {"receive_url", "/hook?api_key=", errc::unauthorized, "x-api-key", "H7"},
        {"receive_url", "/hook?API_KEY=k", errc::unauthorized, "x-api-key", "H7"},
        {"receive_url", "/hook#api_key=k", errc::unauthorized, "x-api-key", "H7"},
        {"receive_url", "/hook?api_key=%zz", errc::invalid_parameter, "api_key", "H7"},
        {"receive_url", "/hook?api_key=%", errc::invalid_parameter, "api_key", "H7"},
        {"receive_url", "/hook?api_key=a&api_key=b", errc::conflicting_keys, "api_key", "H7"},
        {"receive_url_and_header", "/hook?api_key=other-key", errc::conflicting_keys, "api_key", "H7"},
        {"receive_url_and_header", "/hook?api_key=correct-key-12", errc::conflicting_keys, "api_key", "H7"},
        {"receive_headers", "k-1|k-2", errc::conflicting_keys, "x-api-key", "H7"},
        {"receive_headers", "", errc::unauthorized, "x-api-key", "H7"},
        {"receive_headers", " \t ", errc::unauthorized, "x-api-key", "H7"},
        {"receive_key", "wrong-key-1234", errc::unauthorized, "x-api-key", "H7"},
        {"receive_key", "correct-key-12", errc::unauthorized, "x-api-key", "H7"},
        {"receive_key", "correct-key-1234", errc::unauthorized, "x-api-key", "H7"},
        {"receive_key", "correct-key-123\0"s, errc::unauthorized, "x-api-key", "H7"},
        {"receive_key", ten_mb, errc::unauthorized, "x-api-key", "H7"},
        {"receive_unconfigured", "", errc::unauthorized, "x-api-key", "H7"},
        {"receive_unconfigured", "anything", errc::invalid_key, "expected_key", "H7"},
        {"receive_body", "", errc::syntax_error, "", "H7"},
        {"receive_body", std::string(2u << 20, '['), errc::limit_exceeded, "", "H7"},
        {"receive_body", R"({"FolderName":7})", errc::wrong_type, "FolderName", "H7"},
        {"receive_body", R"({"x":[1e999]})", errc::out_of_range, "x[0]", "H7 J2"},
        {"receive_body",
         R"({"FolderName":"a"})"
         "\0"s,
         errc::syntax_error, "", "H7"},
        // creating keys (K2, K3)
        {"key_name", "", errc::invalid_name, "name", "K3"},
        {"key_name", " \t\r\n ", errc::invalid_name, "name", "K3"},
        {"key_name", std::string(129, 'n'), errc::invalid_name, "name", "K3"},
        {"key_name", repeat("\xc3\xa9", 129), errc::invalid_name, "name", "K3"},
        {"key_name", "bill\x01ing", errc::invalid_name, "name", "K3"},
        {"key_name", "bill\ning", errc::invalid_name, "name", "K3"},
        {"key_name", "bill\0ing"s, errc::invalid_name, "name", "K3"},
        {"key_name", "bill\xc2\x85ing", errc::invalid_name, "name", "K3"},
        {"key_name", "bill\xffing", errc::invalid_utf8, "name", "K3"},
        {"key_name", "\xc0\x80", errc::invalid_utf8, "name", "K3"},
        {"key_name", "\xed\xb0\x80", errc::invalid_utf8, "name", "K3"},
        {"key_name", ten_mb, errc::invalid_name, "name", "K3"},
        {"key_description", std::string(1025, 'd'), errc::invalid_name, "description", "K3"},
        {"key_description", "a\x1b[31mred", errc::invalid_name, "description", "K3"},
        {"key_description", "\xe2\x28\xa1", errc::invalid_utf8, "description", "K3"},
        {"key_period", "1000|1000", errc::invalid_period, "expireAt", "K3"},
        {"key_period", "2000|1000", errc::invalid_period, "expireAt", "K3"},
        {"key_period", "0|-9223372036854775807", errc::invalid_period, "expireAt", "K3 T3"},
        {"key_period", "-9223372036854775807|0", errc::invalid_period, "activeFrom", "K3 T3"},
        {"key_period", "0|9223372036854775807", errc::invalid_period, "expireAt", "K3 T3"},
        {"key_groups", "", errc::invalid_group, "groups", "K3"},
        {"key_groups", "admin", errc::invalid_group, "groups[0]", "K3"},
        {"key_groups", "User:pf", errc::invalid_group, "groups[0]", "K3"},
        {"key_groups", "user:", errc::invalid_group, "groups[0]", "K3"},
        {"key_groups", "user:a b", errc::invalid_group, "groups[0]", "K3"},
        {"key_groups", "user:a\nb", errc::invalid_group, "groups[0]", "K3"},
        {"key_groups", "user:\xff", errc::invalid_group, "groups[0]", "K3"},
        {"key_groups", "user:" + std::string(124, 'g'), errc::invalid_group, "groups[0]", "K3"},
        {"key_groups", "user:pf|user:pf", errc::invalid_group, "groups[1]", "K3"},
        {"key_groups", "user:pf|tenant-admin| tenant-viewer", errc::invalid_group, "groups[2]", "K3"},
        {"own_key", "", errc::invalid_key, "key", "K2"},
        {"own_key", std::string(15, 'k'), errc::invalid_key, "key", "K2"},
        {"own_key", std::string(257, 'k'), errc::invalid_key, "key", "K2"},
        {"own_key", "abcdefgh ijklmnop", errc::invalid_key, "key", "K2"},
        {"own_key", "abcdefgh\x7fijklmnop", errc::invalid_key, "key", "K2"},
        {"own_key", "abcdefgh\0ijklmnop"s, errc::invalid_key, "key", "K2"},
        {"own_key", "abcdefgh\xc3\xa9ijklmnop", errc::invalid_key, "key", "K2"},
        {"own_key", "abcdefghijklmnop\r\n", errc::invalid_key, "key", "K2"},
        {"own_key", ten_mb, errc::invalid_key, "key", "K2"},
        // the list request (L1): negative and zero pages, broken URLs, header injection
        {"list_page", "0", errc::out_of_range, "page", "L1"},
        {"list_page", "-1", errc::out_of_range, "page", "L1"},
        {"list_page", "-9223372036854775808", errc::out_of_range, "page", "L1"},
        {"list_size", "0", errc::out_of_range, "size", "L1"},
        {"list_size", "-100", errc::out_of_range, "size", "L1"},
        {"list_base_url", "", errc::invalid_value, "base_url", "L1"},
        {"list_base_url", "utilities.example.com", errc::invalid_value, "base_url", "L1"},
        {"list_base_url", "ftp://utilities.example.com", errc::invalid_value, "base_url", "L1"},
        {"list_base_url", "https://", errc::invalid_value, "base_url", "L1"},
        {"list_base_url", "https:///", errc::invalid_value, "base_url", "L1"},
        {"list_base_url", "https://u.example.com/\r\nX: 1", errc::invalid_value, "base_url", "L1"},
        {"list_base_url", "https://u.example.com/a b", errc::invalid_value, "base_url", "L1"},
        {"list_base_url", "https://u.example.com/?x=1", errc::invalid_value, "base_url", "L1"},
        {"list_base_url", "https://u.example.com/#x", errc::invalid_value, "base_url", "L1"},
        {"list_tenant", "", errc::invalid_value, "tenant", "L1"},
        {"list_token", "", errc::invalid_value, "token", "L1"},
        {"list_token", "t\r\nX-Injected: 1", errc::invalid_header, "token", "L1"},
        {"list_token", "t\0u"s, errc::invalid_header, "token", "L1"},
        {"list_token", "t\x7f", errc::invalid_header, "token", "L1"},
        // Retry-After (B2)
        {"retry_after", "", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "-1", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "1.5", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "+5", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "10\r\n", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "Mon, 06 Nov 1994 08:49:37 GMT", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "Sun, 31 Feb 1994 08:49:37 GMT", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "Sun, 06 Nov 1994 24:49:37 GMT", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "Sunday, 06-Nov-94 08:49:37 GMT", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "Sun Nov  6 08:49:37 1994", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", "Sun, 06 Nov 1994 08:49:37 UTC", errc::invalid_header, "Retry-After", "B2"},
        {"retry_after", ten_mb, errc::invalid_header, "Retry-After", "B2"},
        // base64 (B1 secrets)
        {"base64", "A", errc::invalid_value, "", "B1"},
        {"base64", "A===", errc::invalid_value, "", "B1"},
        {"base64", "=AAA", errc::invalid_value, "", "B1"},
        {"base64", "AA=A", errc::invalid_value, "", "B1"},
        {"base64", "QQ=", errc::invalid_value, "", "B1"},
        {"base64", "AB==", errc::invalid_value, "", "B1"},
        {"base64", "QQ\n", errc::invalid_value, "", "B1"},
        {"base64", "Q Q=", errc::invalid_value, "", "B1"},
        {"base64", "QQ-_", errc::invalid_value, "", "B1"},
        {"base64", "\xff\xfe", errc::invalid_value, "", "B1"},
        {"base64", "QUJD\0"s, errc::invalid_value, "", "B1"},
        // delivery ids (H8)
        {"delivery_id", "", errc::invalid_value, "deliveryId", "H8"},
        {"delivery_id", "msg_", errc::invalid_value, "deliveryId", "H8"},
        {"delivery_id", "msg_" + hex32 + "0", errc::invalid_value, "deliveryId", "H8"},
        {"delivery_id", "MSG_" + hex32, errc::invalid_value, "deliveryId", "H8"},
        {"delivery_id", "msg_0123456789ABCDEF0123456789abcdef", errc::invalid_value, "deliveryId", "H8"},
        {"delivery_id", "msg_0123456789abcdeg0123456789abcdef", errc::invalid_value, "deliveryId", "H8"},
        {"delivery_id", "msg_0123456789abcdef0123456789abcde\0"s, errc::invalid_value, "deliveryId", "H8"},
    };
}

std::size_t rows_defined() {
    return list_rows().size() + event_rows().size() + endpoint_rows().size() + webhook_rows().size() +
           misc_rows().size();
}

}  // namespace

TEST_CASE("hostile: list responses, records and timestamps", "[hostile][L2][S2][T1][T2][T3]") {
    hostile::check_rows(list_runners(), list_rows());
}

TEST_CASE("hostile: notification bodies and event names", "[hostile][H3][H5][H6][H7]") {
    hostile::check_rows(event_runners(), event_rows());
}

TEST_CASE("hostile: endpoints and the address check", "[hostile][H1]") {
    hostile::check_rows(endpoint_runners(), endpoint_rows());
}

TEST_CASE("hostile: webhook configuration and dispatch", "[hostile][H1][H2][H3][H4][H6][H8]") {
    hostile::check_rows(webhook_runners(), webhook_rows());
}

TEST_CASE("hostile: receiving, key creation, list requests, Retry-After, base64, delivery ids",
          "[hostile][H7][K2][K3][L1][B1][B2][H8]") {
    hostile::check_rows(misc_runners(), misc_rows());
}

TEST_CASE("hostile: the catalogue holds at least 150 cases", "[hostile]") { CHECK(rows_defined() >= 150); }
