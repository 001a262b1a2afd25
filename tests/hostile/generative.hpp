// The generative hostile-input stage: hostile inputs derived mechanically from
// one valid sample per public parser, so that fields no one listed are
// attacked too. For a JSON sample every value is replaced, one at a time, by
// each attack of each class (deep nesting, long strings, ill-formed and
// control characters, out-of-range numbers, wrong types, a repeated or hostile
// member name); the compact sample is cut at every byte and given a BOM and
// trailing bytes. A text sample (a timestamp, a URL, a key) gets each hostile
// string at sampled positions, every truncation and long inputs.
//
// Each outcome must hold whatever the input: no exception; an error has a
// reason and a path that exists in the input (or one of the surface's
// fields); a message quotes at most 64 bytes of input, holds no raw control
// character and no secret of the input; a value that is printed is escaped
// and masked likewise; the peak of live heap bytes stays within J3's
// 4 x input + 1 MiB; a lenient key list keeps every record the attack did
// not touch.
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/error.hpp"

namespace gen {

// Defined in counting_new.cpp: the peak of live heap bytes between the calls.
void memory_probe_start();
std::size_t memory_probe_peak();

// The peak of the last call() (printing the result is not the parser's memory).
inline std::size_t& last_peak() {
    static std::size_t p = 0;
    return p;
}

// Runs the library call f under the memory probe.
template <class F>
auto call(F&& f) {
    memory_probe_start();
    auto r = f();
    last_peak() = memory_probe_peak();
    return r;
}

struct outcome {
    std::optional<keyhook::error> err;
    std::string printed;            // the value printed with operator<< (or to_json's dump), checked too
    std::vector<std::string> kept;  // key list: ids of the records kept
};

struct surface {
    std::string name;
    std::string sample;  // valid input
    bool json = true;
    std::function<outcome(const std::string&)> run;
    // Member names whose string values are secrets (JSON), or the sample's
    // secrets (text): none may appear in an error or in what is printed.
    std::set<std::string> secret_members;
    std::vector<std::string> secrets;
    // Text surfaces: the paths an error may name ("" is always allowed).
    std::set<std::string> fields;
    // Key list: the array whose elements are kept one by one, and their ids.
    std::string records_path;
    // J3's allowance beyond 4 x input (crypto and examples keep fixed state).
    std::size_t memory_allowance = std::size_t{1} << 20;
};

struct attack {
    std::string cls;                   // the class of attack, for the report
    std::string input;                 // the hostile input
    std::string where;                 // the keyhook path the attack replaced ("" for the whole text)
    bool value_level = false;          // a well-formed document with one value changed
    std::vector<std::string> secrets;  // secrets the input holds
};

struct stats {
    std::size_t inputs = 0, errors = 0, accepted = 0, bytes = 0;
};

// A text surface: `fields` are the paths its errors may name.
inline surface text_surface(std::string name, std::string sample, std::set<std::string> fields,
                            std::function<outcome(const std::string&)> run, std::vector<std::string> secrets = {}) {
    surface s;
    s.name = std::move(name);
    s.sample = std::move(sample);
    s.json = false;
    s.fields = std::move(fields);
    s.secrets = std::move(secrets);
    s.run = std::move(run);
    return s;
}

// --- hostile material ---------------------------------------------------------

inline std::string repeat(const std::string& s, std::size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

// Bytes placed inside a JSON string literal (so an escape is JSON's) or, for a
// text surface, as they are. Each ends with a would-be forged log line.
inline const std::vector<std::string>& hostile_strings() {
    static const std::vector<std::string> v = {
        "\xff",                 // not UTF-8
        "\xc0\xaf",             // overlong
        "\xed\xa0\x80",         // a surrogate
        "\xf4\x90\x80\x80",     // past U+10FFFF
        "\xe2\x80",             // cut short
        "\x1b[31m",             // ESC, raw (JSON refuses it)
        "\r\nFORGED line",      // CR LF, raw
        std::string("\0x", 2),  // NUL, raw
        "\x7f",                 // DEL
        "\xc2\x9b"
        "31m",                // CSI (C1)
        "\xc2\x85",           // NEL (C1)
        "\xe2\x80\xae",       // RLO (bidi)
        "\xe2\x81\xa6",       // LRI (bidi)
        "\xd8\x9c",           // ALM (bidi)
        "\xe2\x80\xa8",       // LINE SEPARATOR
        "\\u001b[31m",        // ESC, escaped in JSON
        "\\r\\nFORGED line",  // CR LF, escaped in JSON
        "\\u0000",            // NUL, escaped in JSON
        "\\u009b",            // CSI, escaped in JSON
        "\\u202e",            // RLO, escaped in JSON
        "\\ud800",            // a lone surrogate escape
        "\\",                 // a lone backslash
        "\"",                 // a quote that ends the string early
        "\xef\xbb\xbf",       // a BOM inside
    };
    return v;
}

inline const std::vector<std::string>& hostile_numbers() {
    static const std::vector<std::string> v = {"1e400",
                                               "-1e400",
                                               "-0",
                                               "9223372036854775807",
                                               "9223372036854775808",
                                               "18446744073709551616",
                                               "-9223372036854775809",
                                               "1.5",
                                               "\"1\"",
                                               "1e999999999999",
                                               "-1",
                                               "0",
                                               "0.0",
                                               "1E2",
                                               "-0.0e-0"};
    return v;
}

inline const std::vector<std::string>& wrong_types() {
    static const std::vector<std::string> v = {"null", "true", "{}", "[]", "\"\"", "0", "[\"a\"]", "{\"a\":1}"};
    return v;
}

// 10^5 levels of arrays, of objects, and of both.
inline const std::vector<std::string>& deep_values() {
    static const std::vector<std::string> v = {
        repeat("[", 100000) + repeat("]", 100000), repeat("{\"a\":", 100000) + "1" + repeat("}", 100000),
        repeat("[{\"a\":", 50000) + "1" + repeat("}]", 50000), repeat("[", 100000)};
    return v;
}

inline const std::string& long_string(std::size_t bytes) {
    static std::string one = repeat("x", std::size_t{1} << 20);
    static std::string ten = repeat("x", std::size_t{10} << 20);
    return bytes > one.size() ? ten : one;
}

// --- JSON samples: every value, by keyhook path and JSON pointer ---------------

struct position {
    std::string path;  // keyhook's form: data.result[0].name, ["a b"]
    nlohmann::json::json_pointer pointer;
    bool is_string = false, is_object = false;
};

inline void member_step(std::string& path, const std::string& name) {
    bool plain = !name.empty();
    for (char c : name)
        plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                          c == '-' || c == '$' || c == '@');
    if (plain) {
        if (!path.empty()) path += '.';
        path += name;
    } else {
        path += "[" + keyhook::detail::quote_input(name) + "]";
    }
}

inline void collect_positions(const nlohmann::ordered_json& j, const std::string& path,
                              const nlohmann::json::json_pointer& ptr, std::vector<position>& out) {
    out.push_back({path, ptr, j.is_string(), j.is_object()});
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            std::string p = path;
            member_step(p, k);
            collect_positions(v, p, ptr / k, out);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            collect_positions(j[i], path + "[" + std::to_string(i) + "]", ptr / i, out);
    }
}

// The compact sample with the value at `ptr` replaced by raw text.
inline std::string splice(const nlohmann::ordered_json& doc, const nlohmann::json::json_pointer& ptr,
                          const std::string& raw) {
    static const std::string hole = "@@generative-hole@@";
    auto copy = doc;
    copy[ptr] = hole;
    auto text = copy.dump();
    const auto at = text.find("\"" + hole + "\"");
    return text.substr(0, at) + raw + text.substr(at + hole.size() + 2);
}

// Strings of members named in `names`, in objects at most 16 levels deep,
// found by one SAX pass (no document is built: the attacks include 10 MB
// strings and 10^5 levels, and a parsed copy of each made this the suite's
// slowest step). A repeated member gives every string value it has. Text
// that is not JSON gives none (its secrets are the surface's own).
class secret_collector : public nlohmann::json_sax<nlohmann::json> {
public:
    secret_collector(const std::set<std::string>& names, std::vector<std::string>& out) : names_(names), out_(out) {}
    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool binary(binary_t&) override { return value(); }
    bool string(string_t& s) override {
        // A masked value (it has '*') or a short one is not a secret to find.
        if (named_ && s.size() >= 8 && s.find('*') == std::string::npos) out_.push_back(s);
        return value();
    }
    bool start_object(std::size_t) override { return open(true); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        named_ = open_.size() <= 17 && open_.back() && names_.count(k) > 0;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

private:
    bool value() {
        named_ = false;
        return true;
    }
    bool open(bool object) {
        named_ = false;
        open_.push_back(object);
        return true;
    }
    bool close() {
        open_.pop_back();
        return value();
    }
    const std::set<std::string>& names_;
    std::vector<std::string>& out_;
    std::vector<bool> open_;  // the open containers, innermost last: true for an object
    bool named_ = false;      // the next value is a named member's
};

inline std::vector<std::string> secrets_of(const surface& s, const std::string& text) {
    std::vector<std::string> out = s.secrets;
    if (s.json && !s.secret_members.empty()) {
        std::vector<std::string> found;
        secret_collector sax(s.secret_members, found);
        if (nlohmann::json::sax_parse(text, &sax)) out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

// Deterministic sampling: a fixed-seed xorshift, so a failure replays.
struct sampler {
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    std::size_t next(std::size_t n) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return n == 0 ? 0 : static_cast<std::size_t>(state % n);
    }
};

inline std::vector<attack> json_attacks(const surface& s) {
    std::vector<attack> out;
    const auto doc = nlohmann::ordered_json::parse(s.sample);
    const std::string compact = doc.dump();
    std::vector<position> positions;
    collect_positions(doc, "", nlohmann::json::json_pointer{}, positions);
    sampler pick;
    const std::size_t ten_mb_at = 1 + pick.next(positions.size() - 1);
    for (std::size_t i = 0; i < positions.size(); ++i) {
        const auto& p = positions[i];
        const auto add = [&](const std::string& cls, const std::string& raw, bool value_level) {
            out.push_back({cls, splice(doc, p.pointer, raw), p.path, value_level, {}});
        };
        for (const auto& w : wrong_types()) add("wrong type", w, true);
        // Value-level, also a number no double holds: the lenient key list
        // rejects only its record (J2: one bad record is rejected alone).
        for (const auto& n : hostile_numbers()) add("number", n, true);
        // Every value gets 10^5 levels, of one of the shapes in turn; a 1 MB
        // string goes to a fixed-seed sample of the values (time: ~90 s in all).
        add("deep nesting", deep_values()[i % deep_values().size()], false);
        if (i == 0 || pick.next(positions.size()) < 12) add("long string", "\"" + long_string(1) + "\"", true);
        if (i == ten_mb_at) add("10 MB string", "\"" + long_string(10u << 20) + "\"", true);
        const std::string original = doc.at(p.pointer).dump();
        if (p.is_string) {
            const auto inner = original.substr(1, original.size() - 2);
            for (const auto& h : hostile_strings()) {
                // A string nlohmann would read (escapes only) keeps the document well-formed.
                const bool well_formed = h[0] == '\\' && h != "\\" && h != "\\ud800";
                add("string", "\"" + inner + h + "\"", well_formed);
            }
            add("string at 64 bytes", "\"" + repeat("\\u001b", 70) + "\"", true);
        }
        // A repeated member, and a hostile name given twice, in the object holding this value.
        if (!p.pointer.empty() && doc[p.pointer.parent_pointer()].is_object()) {
            const auto name = nlohmann::json(p.pointer.back()).dump();
            add("repeated member", original + "," + name + ":" + original, false);
            add("repeated member, other value", original + "," + name + ":null", false);
        }
        if (p.is_object) {
            for (const auto& h : hostile_strings()) {
                const auto body = original.substr(1);
                const std::string member = "\"n" + h + "\"";
                out.push_back(
                    {"hostile member name",
                     splice(doc, p.pointer, "{" + member + ":1," + member + ":2" + (body == "}" ? "" : ",") + body),
                     p.path,
                     false,
                     {}});
            }
            const std::string many = repeat("\"x\":0,", 1) + repeat("\"y\":[],", 1000);
            out.push_back({"many members", splice(doc, p.pointer, "{" + many + "\"z\":0}"), p.path, false, {}});
        }
    }
    // The whole text: every cut, a BOM, trailing bytes, nothing.
    for (std::size_t n = 0; n < compact.size(); ++n) out.push_back({"truncated", compact.substr(0, n), "", false, {}});
    for (const auto& t : {std::string("\xef\xbb\xbf") + compact, compact + " x", compact + "{}", compact + "]",
                          compact + std::string(1, '\0'), compact + "\n\x1b[2J", std::string(1, '\0') + compact,
                          std::string("\xff\xfe") + compact, repeat(" ", 1 << 20) + compact})
        out.push_back({"bom or trailing bytes", t, "", false, {}});
    for (auto& a : out) a.secrets = secrets_of(s, a.input);
    return out;
}

inline std::vector<attack> text_attacks(const surface& s) {
    std::vector<attack> out;
    const auto& t = s.sample;
    sampler pick;
    std::vector<std::size_t> at = {0, 1, t.size() / 2, t.size() - 1, t.size()};
    for (int i = 0; i < 3; ++i) at.push_back(pick.next(t.size() + 1));
    for (std::size_t pos : at) {
        for (const auto& h : hostile_strings())
            out.push_back({"inserted", t.substr(0, pos) + h + t.substr(pos), "", false, {}});
        out.push_back(
            {"replaced byte", t.substr(0, pos) + "\x1b" + (pos < t.size() ? t.substr(pos + 1) : ""), "", false, {}});
    }
    for (const auto& h : hostile_strings()) out.push_back({"whole", h, "", false, {}});
    for (std::size_t n = 0; n < t.size(); ++n) out.push_back({"truncated", t.substr(0, n), "", false, {}});
    out.push_back({"long", t + long_string(1), "", false, {}});
    out.push_back({"long", long_string(1) + t, "", false, {}});
    out.push_back({"10 MB", t + long_string(10u << 20), "", false, {}});
    out.push_back({"repeated", repeat(t + " ", 20000), "", false, {}});
    out.push_back({"digits", repeat("9", 100000), "", false, {}});
    for (const auto& n : hostile_numbers()) out.push_back({"number", n, "", false, {}});
    for (auto& a : out) a.secrets = s.secrets;
    return out;
}

// Every 8-byte window of a secret: not even part of it may be quoted (B1, M3).
inline std::vector<std::string> windows(const std::string& secret) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i + 8 <= secret.size(); ++i) out.push_back(secret.substr(i, 8));
    return out;
}

// --- properties -----------------------------------------------------------------

// A raw C0 control (but LF), DEL, C1, bidi control or U+2028/9 at byte i.
inline bool raw_control_at(const std::string& s, std::size_t i) {
    const auto b = [&](std::size_t k) -> unsigned { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
    const unsigned c = b(i);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && b(i + 1) >= 0x80 && b(i + 1) <= 0x9f) return true;
    if (c == 0xd8 && b(i + 1) == 0x9c) return true;
    if (c == 0xe2 && b(i + 1) == 0x80 &&
        (b(i + 2) == 0x8e || b(i + 2) == 0x8f || (b(i + 2) >= 0xa8 && b(i + 2) <= 0xae)))
        return true;
    return c == 0xe2 && b(i + 1) == 0x81 && b(i + 2) >= 0xa6 && b(i + 2) <= 0xa9;
}

inline std::string first_raw_control(const std::string& s, bool allow_lf) {
    for (std::size_t i = 0; i < s.size(); ++i)
        if (raw_control_at(s, i) || (!allow_lf && s[i] == '\n')) return "byte " + std::to_string(i);
    return {};
}

// Does `path` name the attacked value or a place of the sample? Checked
// structurally: each step of the path must be a step of a known path.
inline bool path_known(const std::string& path, const std::set<std::string>& known, const std::string& where) {
    if (path.empty() || known.count(path)) return true;
    if (path.compare(0, where.size(), where) == 0) {
        if (path.size() == where.size()) return true;
        const char c = path[where.size()];
        if (where.empty() || c == '.' || c == '[') return true;
    }
    return false;
}

// "keys[12]" as "keys[]": a field that names an element of a list.
inline std::string any_index(const std::string& path) {
    std::string out;
    for (std::size_t i = 0; i < path.size(); ++i) {
        out += path[i];
        if (path[i] != '[') continue;
        std::size_t j = i + 1;
        while (j < path.size() && path[j] >= '0' && path[j] <= '9') ++j;
        if (j > i + 1 && j < path.size() && path[j] == ']') i = j - 1;
    }
    return out;
}

inline std::set<std::string> known_paths(const surface& s) {
    std::set<std::string> known = s.fields;
    if (s.json) {
        std::vector<position> ps;
        collect_positions(nlohmann::ordered_json::parse(s.sample), "", nlohmann::json::json_pointer{}, ps);
        for (const auto& p : ps) known.insert(p.path);
    }
    return known;
}

// Ids of the sample's records (key list), by index.
inline std::vector<std::string> sample_ids(const surface& s) {
    std::vector<std::string> ids;
    if (s.records_path.empty()) return ids;
    const auto doc = nlohmann::json::parse(s.sample);
    for (const auto& r : doc["data"]["result"]) ids.push_back(r.value("id", std::string()));
    return ids;
}

inline void check_text(const std::string& what, const std::string& text, const std::vector<std::string>& secrets,
                       bool printed_value) {
    const bool allow_lf = printed_value;
    INFO(what << ": " << keyhook::detail::quote_input(text, 400));
    CHECK(first_raw_control(text, allow_lf).empty());
    CHECK(text.find("\nFORGED") == std::string::npos);
    for (const auto& secret : secrets) {
        INFO("secret " << keyhook::detail::quote_input(secret, 80));
        CHECK(text.find(secret) == std::string::npos);
    }
    // A message quotes at most 64 bytes of a long input (its filler is 'x' or '9');
    // a printed value may show its own data whole.
    if (printed_value) return;
    CHECK(text.find(repeat("x", 65)) == std::string::npos);
    CHECK(text.find(repeat("9", 65)) == std::string::npos);
}

inline stats run_surface(const surface& s) {
    const auto attacks = s.json ? json_attacks(s) : text_attacks(s);
    const auto known = known_paths(s);
    const auto ids = sample_ids(s);
    stats st;
    for (const auto& a : attacks) {
        ++st.inputs;
        st.bytes += a.input.size();
        outcome o;
        std::string thrown;
        last_peak() = 0;
        try {
            o = s.run(a.input);
        } catch (const std::exception& e) {
            thrown = e.what();
        } catch (...) {
            thrown = "an exception of unknown type";
        }
        const std::size_t peak = last_peak();
        INFO("surface " << s.name << ", attack \"" << a.cls << "\" at " << keyhook::detail::quote_input(a.where)
                        << ", input (" << a.input.size() << " bytes) " << keyhook::detail::quote_input(a.input, 300));
        if (!thrown.empty()) FAIL_CHECK("an exception escaped: " << thrown);
        {
            INFO("peak heap " << peak << " bytes");
            CHECK(peak <= 4 * a.input.size() + s.memory_allowance);
        }
        if (o.err) {
            ++st.errors;
            const auto& e = *o.err;
            INFO("error " << e);
            CHECK(!e.message.empty());
            CHECK(e.message.size() < 600);
            // A whole-text attack (a cut, a BOM, a text surface) adds no place:
            // its path is one of the sample or a field of the surface.
            const bool whole = !s.json || a.cls == "truncated" || a.cls == "bom or trailing bytes";
            CHECK((whole ? e.path.empty() || known.count(e.path) > 0 || known.count(any_index(e.path)) > 0
                         : path_known(e.path, known, a.where)));
            check_text("message", e.message, a.secrets, false);
            check_text("what()", e.what(), a.secrets, false);
            std::ostringstream os;
            os << e;
            check_text("operator<<(error)", os.str(), a.secrets, false);
            // A value replaced inside one record leaves the rest of a lenient list readable.
            if (!s.records_path.empty() && a.value_level &&
                a.where.compare(0, s.records_path.size() + 1, s.records_path + "[") == 0)
                FAIL_CHECK("the whole list was refused for one record's value");
        } else {
            ++st.accepted;
            check_text("printed value", o.printed, a.secrets, true);
        }
        // The key list keeps every record the attack did not touch.
        if (!s.records_path.empty() && !o.err && a.value_level) {
            for (std::size_t i = 0; i < ids.size(); ++i) {
                const auto rec = s.records_path + "[" + std::to_string(i) + "]";
                if (a.where.compare(0, rec.size(), rec) == 0 || rec.compare(0, a.where.size(), a.where) == 0) continue;
                INFO("record " << rec << " (" << ids[i] << ")");
                CHECK(std::find(o.kept.begin(), o.kept.end(), ids[i]) != o.kept.end());
            }
        }
    }
    return st;
}

}  // namespace gen
