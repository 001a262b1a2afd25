// keyhook internal: where a SAX reader of JSON text is (the path of the value
// being read) and the J1 check for repeated member names, with the wordings
// of the faults every such reader reports. Needs no JSON library.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "keyhook/error.hpp"

namespace keyhook::detail {

// A member name as a path step: ".name" for plain names of at most 64 bytes,
// else ["quoted"] (quote_input escapes control characters and cuts the name
// at 64 bytes), so that an error never carries a long name whole.
inline void append_member_step(std::string& path, std::string_view name) {
    constexpr std::size_t longest_plain = 64;
    const bool plain =
        !name.empty() && name.size() <= longest_plain && std::all_of(name.begin(), name.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                   c == '$' || c == '@';
        });
    if (plain) {
        if (!path.empty()) path += '.';
        path.append(name);
    } else {
        path += '[';
        path += quote_input(name);
        path += ']';
    }
}

// Where a SAX handler is, for error paths, and the J1 check. Each open object
// keeps its member names back to back in one arena, each after its length
// (LEB128, one byte below 128); when the object closes, its names are sorted
// once (n log n) and a repeated one is reported, then dropped. Memory: the
// names of the open objects plus 5 bytes a member (a 4-byte offset and the
// length byte), so that the smallest member, `"":0,` in 5 bytes of input, stays
// within J3's 4 bytes a byte even while both buffers are being regrown.
// A template only so that its member functions are compiled where they are
// used (a deferred definition, config.hpp), not in every translation unit that
// includes the JSON readers.
template <class D = void>
class basic_json_position {
public:
    // Opens a container; false when that would nest deeper than max_depth.
    bool open(bool object, std::size_t max_depth) {
        if (frames_.size() >= max_depth) return false;
        frames_.push_back(frame{object, 0, names_.size(), refs_.size()});
        return true;
    }

    // The member name just read in the innermost object. False when the
    // names of the open objects would pass 4 GiB (offsets are 32-bit), or when
    // growing the bookkeeping would take more than limit_growth allows
    // (growth_refused() says which).
    bool key(std::string_view name) {
        const std::size_t at = names_.size();
        if (name.size() > std::numeric_limits<std::uint32_t>::max() - 5 ||
            at > std::numeric_limits<std::uint32_t>::max() - 5 - name.size())
            return false;
        if (at + 5 + name.size() > names_.capacity() || refs_.size() == refs_.capacity()) {
            if (!grow(at + 5 + name.size())) return false;
        }
        // The length (LEB128) and the name, in one append for the usual short name.
        char head[16];
        std::size_t h = 0;
        for (std::size_t n = name.size();; n >>= 7) {
            if (n < 0x80) {
                head[h++] = static_cast<char>(n);
                break;
            }
            head[h++] = static_cast<char>(0x80 | (n & 0x7F));
        }
        if (name.size() <= sizeof head - h) {
            std::memcpy(head + h, name.data(), name.size());
            names_.append(head, h + name.size());
        } else {
            names_.append(head, h);
            names_.append(name);
        }
        refs_.push_back(name_ref{static_cast<std::uint32_t>(at)});
        return true;
    }

    // After a value inside the innermost container (arrays count elements).
    void value_done() noexcept {
        if (!frames_.empty()) ++frames_.back().count;
    }

    // Closes the innermost container. For an object with check_repeats, the
    // path of its first repeated member (the earliest second occurrence).
    std::optional<std::string> close(bool check_repeats) {
        std::optional<std::string> repeated;
        const frame f = frames_.back();
        const std::size_t members = refs_.size() - f.refs_begin;
        if (f.object && check_repeats && members > 1 && members <= small_object) {
            if (const name_ref* found = first_repeat_small(f.refs_begin)) {
                std::string p = path_of(frames_.size() - 1);
                append_member_step(p, name(*found));
                repeated = std::move(p);
            }
        } else if (f.object && check_repeats && members > 1) {
            const auto first = refs_.begin() + static_cast<std::ptrdiff_t>(f.refs_begin);
            // Sorted by name, then by position: equal names are adjacent, in order.
            std::sort(first, refs_.end(), [this](const name_ref& a, const name_ref& b) {
                const int c = name(a).compare(name(b));
                return c != 0 ? c < 0 : a.offset < b.offset;
            });
            const name_ref* found = nullptr;
            for (auto it = first + 1; it != refs_.end(); ++it)
                if (name(*it) == name(*(it - 1)) && (found == nullptr || it->offset < found->offset)) found = &*it;
            if (found != nullptr) {
                std::string p = path_of(frames_.size() - 1);
                append_member_step(p, name(*found));
                repeated = std::move(p);
            }
        }
        names_.resize(f.names_begin);
        refs_.resize(f.refs_begin);
        frames_.pop_back();
        value_done();
        return repeated;
    }

    [[nodiscard]] std::size_t depth() const noexcept { return frames_.size(); }

    // The path of the value being read: "data.result[3].expireAt"; empty at the root.
    [[nodiscard]] std::string path() const { return path_of(frames_.size()); }

    // The path of the innermost open container itself.
    [[nodiscard]] std::string container_path() const {
        return frames_.empty() ? std::string() : path_of(frames_.size() - 1);
    }

    // The last member name read in the innermost object.
    [[nodiscard]] std::string_view last_key() const noexcept {
        return refs_.empty() ? std::string_view() : name(refs_.back());
    }

    // J3: key() grows the names of the open objects by at most `bytes` of new
    // storage (a reader sets it from its budget before each name); unlimited
    // unless set.
    void limit_growth(std::size_t bytes) noexcept { growth_limit_ = bytes; }
    [[nodiscard]] bool growth_refused() const noexcept { return growth_refused_; }

    // Heap bytes this bookkeeping holds (for J3 accounting).
    [[nodiscard]] std::size_t capacity_bytes() const noexcept {
        return names_.capacity() + refs_.capacity() * sizeof(name_ref) + frames_.capacity() * sizeof(frame);
    }

private:
    struct frame {
        bool object;
        std::size_t count;  // elements done (arrays) or members read (objects)
        std::size_t names_begin;
        std::size_t refs_begin;
    };
    struct name_ref {
        std::uint32_t offset;  // of the name's length in names_
    };

    // J3: a buffer that grows holds its old and its new storage at once, so
    // growth is done here, where it can be weighed: to twice the capacity, or
    // what the name needs. False (growth_refused) past limit_growth.
    bool grow(std::size_t names_needed) {
        const bool names_grow = names_needed > names_.capacity();
        const std::size_t names_to = names_grow ? std::max(names_needed, 2 * names_.capacity()) : 0;
        const bool refs_grow = refs_.size() == refs_.capacity();
        const std::size_t refs_to = refs_grow ? std::max<std::size_t>(8, 2 * refs_.capacity()) : 0;
        if (names_to + refs_to * sizeof(name_ref) > growth_limit_) {
            growth_refused_ = true;
            return false;
        }
        if (names_grow) names_.reserve(names_to);
        if (refs_grow) refs_.reserve(refs_to);
        return true;
    }

    // Objects of up to this many members (records, envelopes: nearly all)
    // are checked without sorting: every pair, names compared only where a
    // cheap signature (length, first, middle and last byte) agrees. At most
    // 32 x 31 / 2 signature comparisons, so no input makes it slow.
    static constexpr std::size_t small_object = 32;

    static std::uint32_t signature(std::string_view n) noexcept {
        if (n.empty()) return 0;
        const auto byte = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(n[i])); };
        return (static_cast<std::uint32_t>(n.size()) << 24) ^ (byte(0) << 16) ^ (byte(n.size() / 2) << 8) ^
               byte(n.size() - 1);
    }

    // The earliest second occurrence of a name among the refs from `begin`
    // (at most small_object of them), or null.
    const name_ref* first_repeat_small(std::size_t begin) const noexcept {
        std::uint32_t signatures[small_object];
        const std::size_t n = refs_.size() - begin;
        for (std::size_t j = 0; j < n; ++j) {
            const std::string_view nj = name(refs_[begin + j]);
            const std::uint32_t sj = signature(nj);
            signatures[j] = sj;
            for (std::size_t i = 0; i < j; ++i)
                if (signatures[i] == sj && name(refs_[begin + i]) == nj) return &refs_[begin + j];
        }
        return nullptr;
    }

    std::string_view name(const name_ref& r) const noexcept {
        std::size_t at = r.offset, size = 0;
        for (unsigned shift = 0;; shift += 7) {
            const auto byte = static_cast<unsigned char>(names_[at++]);
            size |= static_cast<std::size_t>(byte & 0x7F) << shift;
            if (byte < 0x80) break;
        }
        return std::string_view(names_.data() + at, size);
    }

    // The steps of the first `levels` frames: each one's member or element
    // being read. All frames: the value being read; one fewer: its container.
    std::string path_of(std::size_t levels) const {
        std::string p;
        for (std::size_t i = 0; i < levels; ++i) {
            const frame& f = frames_[i];
            if (f.object) {
                // The member being read is the last name recorded in this frame.
                const std::size_t end = i + 1 < frames_.size() ? frames_[i + 1].refs_begin : refs_.size();
                if (end > f.refs_begin) append_member_step(p, name(refs_[end - 1]));
            } else {
                p += '[';
                p += std::to_string(f.count);
                p += ']';
            }
        }
        return p;
    }

    std::vector<frame> frames_;
    std::string names_;
    std::vector<name_ref> refs_;
    std::size_t growth_limit_ = static_cast<std::size_t>(-1);
    bool growth_refused_ = false;
};
using json_position = basic_json_position<>;

// nlohmann's message reads "[json.exception.parse_error.101] parse error at
// line 1, column 2: syntax error while parsing value - <reason>; last read:
// '<input>'": keep the reason only, never the input.
inline std::string_view json_error_reason(std::string_view what) {
    std::string_view reason;
    if (const auto dash = what.find(" - "); dash != std::string_view::npos) {
        reason = what.substr(dash + 3);
        if (const auto cut = reason.find("; last read"); cut != std::string_view::npos) reason = reason.substr(0, cut);
        if (reason.size() > 120) reason = reason.substr(0, 120);
    }
    return reason;
}

// A parser's report of malformed text (nlohmann's exception text `what`, the
// byte count `position` it gives): the 0-based offset and the reason, never the
// input; errc::invalid_utf8 when the text is not UTF-8.
inline error json_syntax_error(std::size_t position, std::string_view what) {
    std::string message = "syntax error at byte " + std::to_string(position > 0 ? position - 1 : 0);
    if (const auto reason = json_error_reason(what); !reason.empty()) {
        message += ": ";
        message += reason;
    }
    const bool utf8 = what.find("UTF-8") != std::string_view::npos;
    return error{utf8 ? errc::invalid_utf8 : errc::syntax_error, {}, std::move(message)};
}

// A raw NUL byte at `offset` (0-based). JSON text never holds one, and
// nlohmann's lexer would take it for the end of the input.
inline error nul_byte_error(std::size_t offset) {
    return error{errc::syntax_error, {}, "syntax error at byte " + std::to_string(offset) + ": a NUL byte"};
}

// J2: a number nlohmann cannot hold (out_of_range 406, "1e400"), at `path`.
inline error number_overflow_error(std::string path, std::string_view token) {
    return error{errc::out_of_range, std::move(path),
                 "number " + quote_input(token) + " is outside the range of a double"};
}

}  // namespace keyhook::detail
