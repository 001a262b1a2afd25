// The list-call response (L2) through parse_key_list, strict and lenient.
// Properties:
//  - strict and lenient agree: the same envelope error; lenient without
//    rejections gives strict's page; otherwise strict fails with lenient's
//    first rejection;
//  - every rejected record names a path under "data.result["; the first 100
//    are kept and all are counted (J3);
//  - two-sided against nlohmann's own reading (J1, J2): when nlohmann refuses
//    the text (malformed), keyhook refuses it; where nlohmann stops at a number
//    no double holds, keyhook refuses the page or rejects a record for it; when a
//    name repeats in an object (an oracle on nlohmann's SAX, duplicate_members.hpp),
//    keyhook refuses it, naming one of the repeated members; when keyhook
//    accepts, nlohmann's DOM reads the same envelope, and records match
//    try_api_key_from_json on the DOM element by element (the SAX decoder
//    claims the same results and messages);
//  - parse -> write (to_json per record, envelope rebuilt) -> parse gives
//    equal records, `masked` masked again (P2);
//  - no message holds a whole string of the input longer than 64 bytes, nor
//    a long `masked` value (those are never quoted).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "duplicate_members.hpp"
#include "fuzz_common.hpp"
#include "keyhook/api_key.hpp"
#include "keyhook/key_list.hpp"

namespace {

using keyhook::error;

void check_messages(const error& e, const std::vector<std::string>& strings,
                    const std::vector<std::string>& masked_only) {
    fuzz::check_no_long_quote(e, strings);
    for (const auto& m : masked_only)
        if (e.message.find(m) != std::string::npos) fuzz::fail("an error message quotes a masked value", e.message);
}

// Long `masked` values that no other string of the input contains (another
// member may legitimately be quoted, and could hold the same text).
std::vector<std::string> masked_values(const nlohmann::json& j, const std::vector<std::string>& all) {
    std::vector<std::string> masked;
    const auto* data = j.is_object() && j.contains("data") ? &j["data"] : nullptr;
    if (!data || !data->is_object() || !data->contains("result") || !(*data)["result"].is_array()) return masked;
    for (const auto& r : (*data)["result"])
        if (r.is_object() && r.contains("masked") && r["masked"].is_string() &&
            r["masked"].get<std::string>().size() >= 16)
            masked.push_back(r["masked"].get<std::string>());
    std::vector<std::string> out;
    for (const auto& m : masked) {
        std::size_t containing = 0;
        for (const auto& s : all)
            if (s.find(m) != std::string::npos) ++containing;
        // Itself once per occurrence as a masked value.
        std::size_t as_masked = 0;
        for (const auto& n : masked)
            if (n.find(m) != std::string::npos) ++as_masked;
        if (containing == as_masked) out.push_back(m);
    }
    return out;
}

std::string write_page(const keyhook::key_list_page& p) {
    nlohmann::json result = nlohmann::json::array();
    for (const auto& r : p.records) result.push_back(r);  // to_json
    nlohmann::json envelope = {
        {"status", "success"},
        {"data", {{"count", p.count}, {"page", p.page}, {"pageSize", p.page_size}, {"result", std::move(result)}}}};
    return envelope.dump();
}

}  // namespace

KEYHOOK_FUZZ_TARGET(key_list) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    keyhook::key_list_options strict_options;
    strict_options.mode = keyhook::key_list_mode::strict;
    const auto lenient = keyhook::try_parse_key_list(text);
    const auto strict = keyhook::try_parse_key_list(text, strict_options);

    nlohmann::json dom;
    const bool have_dom = fuzz::parse_json(text, dom, 64);
    std::vector<std::string> strings, masked_only;
    if (have_dom) {
        fuzz::collect_strings(dom, strings);
        masked_only = masked_values(dom, strings);
    }
    // The repeats found before nlohmann stops, if it does (keyhook may stop
    // at one of them first).
    bool nlohmann_reads = false;
    const auto repeated = fuzz::repeated_members(text, nlohmann_reads);

    // nlohmann refuses (malformed text, or deeper than 64): so does keyhook. Where
    // nlohmann stops at a number no double holds (its error 406), J2 makes that
    // number a wrong value: it refuses the page in the envelope, and only its
    // record inside data.result.
    bool stopped_at_overflow = false;
    if (!have_dom) {
        try {
            (void)nlohmann::json::parse(text.begin(), text.end());
        } catch (const nlohmann::json::exception& e) {
            stopped_at_overflow = e.id == 406;
        }
    }
    if (!have_dom && !stopped_at_overflow) fuzz::check(!lenient, "keyhook accepts what nlohmann refuses");
    // J1: a repeated name is refused, and the error names a repeated member.
    if (!repeated.empty()) fuzz::check(!lenient, "keyhook accepts a repeated member name", repeated.front());
    if (!repeated.empty() && have_dom) {
        const auto c = lenient.error().code;
        fuzz::check(c == keyhook::errc::duplicate_member || c == keyhook::errc::limit_exceeded,
                    "a repeated member gave another kind of error", lenient.error().what());
    }
    // (nlohmann's SAX, the oracle of repeats, stops at a number no double holds; keyhook reads on.)
    if (!lenient && lenient.error().code == keyhook::errc::duplicate_member && !stopped_at_overflow)
        fuzz::check(std::find(repeated.begin(), repeated.end(), lenient.error().path) != repeated.end(),
                    "duplicate_member names no repeated member", lenient.error().path);

    if (!lenient) {
        fuzz::check(!strict, "lenient failed but strict passed");
        fuzz::check(strict.error() == lenient.error(), "strict and lenient fail differently", strict.error().what());
        check_messages(lenient.error(), strings, masked_only);
        return 0;
    }
    // J3: the first 100 rejections kept, all counted.
    fuzz::check(lenient->rejected.size() == std::min(lenient->rejected_count, keyhook::key_list_max_rejected),
                "rejected does not hold the first 100 of rejected_count");
    if (!have_dom) {
        fuzz::check(stopped_at_overflow, "keyhook accepts what nlohmann refuses");
        // Its record is rejected (another of the record's faults may be the one reported).
        fuzz::check(lenient->rejected_count > 0,
                    "a page with a number no double holds was read without rejecting a record for it");
        for (const auto& r : lenient->rejected)
            fuzz::check(fuzz::starts_with(r.path, "data.result["), "a rejected record's path is not under data.result[",
                        r.path);
        return 0;
    }
    // The envelope as nlohmann's DOM reads it.
    fuzz::check(have_dom && dom["data"]["count"] == lenient->count && dom["data"]["page"] == lenient->page &&
                    dom["data"]["pageSize"] == lenient->page_size,
                "the envelope differs from nlohmann's DOM");
    for (const auto& r : lenient->rejected) {
        fuzz::check(fuzz::starts_with(r.path, "data.result["), "a rejected record's path is not under data.result[",
                    r.path);
        check_messages(r, strings, masked_only);
    }
    if (lenient->rejected_count == 0) {
        fuzz::check(strict.has_value(), "strict failed where lenient rejected nothing");
        fuzz::check(*strict == *lenient, "strict and lenient pages differ");
    } else {
        fuzz::check(!strict, "strict passed although lenient rejected a record");
        fuzz::check(strict.error() == lenient->rejected.front(), "strict's error is not lenient's first rejection",
                    strict.error().what());
    }

    // Element by element against the DOM reader (same decisions, same messages).
    if (have_dom && size < 60000 && dom.is_object() && dom.contains("data") && dom["data"].is_object() &&
        dom["data"].contains("result") && dom["data"]["result"].is_array()) {
        const auto& arr = dom["data"]["result"];
        std::size_t good = 0, bad = 0;
        for (std::size_t i = 0; i < arr.size(); ++i) {
            const auto one = keyhook::try_api_key_from_json(arr[i], "data.result[" + std::to_string(i) + "]");
            if (one) {
                fuzz::check(good < lenient->records.size(), "the DOM reads more good records");
                fuzz::check(*one == lenient->records[good], "a record differs from the DOM reading");
                ++good;
            } else {
                fuzz::check(bad < lenient->rejected_count, "the DOM rejects more records", one.error().what());
                if (bad < lenient->rejected.size())
                    fuzz::check(one.error() == lenient->rejected[bad], "a rejection differs from the DOM reading",
                                one.error().what() + " vs " + lenient->rejected[bad].what());
                ++bad;
            }
        }
        fuzz::check(good == lenient->records.size() && bad == lenient->rejected_count, "the DOM reads fewer records");
    }

    // Round trip through the writer.
    const auto written = write_page(*lenient);
    const auto again = keyhook::try_parse_key_list(written, strict_options);
    fuzz::check(again.has_value(), "a written page does not parse", again ? "" : again.error().what());
    // P2: to_json writes `masked` masked again (a no-op on a properly masked value).
    auto expected = lenient->records;
    for (auto& r : expected)
        if (r.masked) r.masked = keyhook::mask_key(*r.masked);
    fuzz::check(again->records == expected, "parse, write, parse changed a record");
    fuzz::check(
        again->count == lenient->count && again->page == lenient->page && again->page_size == lenient->page_size,
        "parse, write, parse changed the envelope");
    fuzz::check(write_page(*again) == written, "writing is not stable");
    return 0;
}
