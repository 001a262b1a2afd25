// The in-process baselines keyhook's hot paths are compared with, shared by
// the timed benchmarks (bench_*.cpp) and the instruction counts (icount.cpp),
// so both measure against exactly the same code.
#pragma once

#include <chrono>
#include <cstddef>
#include <sstream>
#include <string>

#include <date/date.h>
#include <nlohmann/json.hpp>

#include "keyhook/notification.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook_bench {

// The floor for any decoder built on nlohmann: tokenizes everything, keeps nothing.
class null_sax final : public nlohmann::json_sax<nlohmann::json> {
public:
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

// A null SAX pass over `text`, through the same public call keyhook's readers use.
inline bool null_sax_pass(const std::string& text) {
    null_sax sax;
    return nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &sax);
}

// What an application would write without keyhook's notification writer.
inline std::string ordered_json_body(const keyhook::notification& n) {
    nlohmann::ordered_json j;
    j["FolderName"] = n.folder_name;
    j["ServiceName"] = n.service_name;
    j["EntityId"] = n.entity_id;
    j["UserAction"] = std::string(keyhook::to_string(n.user_action));
    j["AuditType"] = n.audit_type;
    auto& data = j["Data"];
    data["ProductName"] = n.folder_name;
    data["EngineName"] = n.service_name;
    data["FileName"] = n.file_name;
    data["ProductId"] = n.entity_id;
    data["ServiceVersionId"] = n.service_version_id;
    j["Tenant"] = n.tenant;
    j["RequestTimeStamp"] = keyhook::format_timestamp_millis(n.request_time);
    j["RevisionId"] = nullptr;
    return j.dump();
}

// date::parse through a reused stream. date reads up to 9 fraction digits at
// nanosecond precision; flooring to microseconds then gives what keyhook
// gives (T3 truncates).
inline bool date_parse(std::istringstream& in, const std::string& s, keyhook::timestamp& out) {
    in.clear();
    in.str(s);
    date::sys_time<std::chrono::nanoseconds> tp;
    in >> date::parse("%FT%TZ", tp);
    if (in.fail()) return false;
    out = date::floor<std::chrono::microseconds>(tp);
    return true;
}

}  // namespace keyhook_bench
