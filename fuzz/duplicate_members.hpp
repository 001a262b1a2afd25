// An oracle for J1 that shares no code with keyhook's reader: nlohmann's own
// SAX parser with a std::set of names per open object. It lists the path of
// every member whose name repeats one read before in the same object.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/detail/json_position.hpp"
#include "keyhook/json_input.hpp"

namespace fuzz {

class duplicate_finder {
public:
    using json = nlohmann::json;

    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(json::number_integer_t) { return value(); }
    bool number_unsigned(json::number_unsigned_t) { return value(); }
    bool number_float(json::number_float_t, const json::string_t&) { return value(); }
    bool string(json::string_t&) { return value(); }
    bool binary(json::binary_t&) { return value(); }
    bool start_object(std::size_t) { return open(true); }
    bool start_array(std::size_t) { return open(false); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(json::string_t& k) {
        auto& f = frames_.back();
        f.step.clear();
        keyhook::detail::append_member_step(f.step, k);  // the path's spelling only
        if (!f.names.insert(k).second) repeated.push_back(path());
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const json::exception&) {
        malformed = true;
        return false;
    }

    std::vector<std::string> repeated;  // paths, in the order found
    bool malformed = false;

private:
    struct frame {
        bool object;
        std::size_t index = 0;
        std::string step;  // the member being read: "name" or "[\"quoted\"]"
        std::set<std::string> names;
    };

    std::string path() const {
        std::string p;
        for (const auto& f : frames_) {
            if (f.object) {
                if (!p.empty() && f.step[0] != '[') p += '.';
                p += f.step;
            } else {
                p += "[" + std::to_string(f.index) + "]";
            }
        }
        return p;
    }

    bool value() {
        if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
        return true;
    }
    bool open(bool object) {
        if (frames_.size() >= 128) return false;  // the caller limits depth first
        frames_.push_back(frame{object, 0, {}, {}});
        return true;
    }
    bool close() {
        frames_.pop_back();
        return value();
    }

    std::vector<frame> frames_;
};

// The repeated members of `text`; `ok` is false when nlohmann refuses the text.
inline std::vector<std::string> repeated_members(std::string_view text, bool& ok) {
    duplicate_finder finder;
    bool parsed = false;
    try {
        parsed = nlohmann::json::sax_parse(text.begin(), text.end(), &finder);
    } catch (const nlohmann::json::exception&) {
        parsed = false;
    }
    ok = parsed && !finder.malformed;
    return finder.repeated;
}

}  // namespace fuzz
