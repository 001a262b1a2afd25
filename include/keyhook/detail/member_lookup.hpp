// keyhook internal: a record's row by member name for SAX readers, where
// every member name of every record is looked up. The names of a table are
// short; each is kept as two machine words, so a lookup compares the names
// of the key's length word by word, without a call to memcmp. Names over 16
// bytes fall back to member_index<Record>::find. Needs no JSON library.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "keyhook/detail/members.hpp"

namespace keyhook::detail {

template <class Record>
class member_lookup {
public:
    using fields = member_index<Record>;

    // The row named k, or fields::none.
    static std::size_t find(std::string_view k) noexcept {
        const std::size_t n = k.size();
        if (n == 0 || n > short_name) return n == 0 ? fields::none : fields::find(k);
        const words w = load_words(k.data(), n);
        for (std::size_t at = starts[n]; at < starts[n + 1]; ++at) {
            const std::size_t i = order[at];
            if (table[i].head == w.head && table[i].tail == w.tail) return i;
        }
        return fields::none;
    }

    // Is k the name of row i (i < fields::count)?
    static bool is(std::size_t i, std::string_view k) noexcept {
        const std::size_t n = k.size();
        if (n != fields::names[i].size() || n == 0) return false;
        if (n > short_name) return k == fields::names[i];
        const words w = load_words(k.data(), n);
        return table[i].head == w.head && table[i].tail == w.tail;
    }

private:
    static constexpr std::size_t short_name = 16;

    // The bytes of a name of 1 to 16 bytes as two words: its first and last
    // 8 (4, for under 8 bytes; all of them under 4) in little-endian order,
    // so that two names of one length have equal words only when they are
    // equal.
    struct words {
        std::uint64_t head = 0, tail = 0;
    };
    template <std::size_t N>
    static constexpr std::uint64_t bytes(const char* p) noexcept {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < N; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
        return v;
    }
    static constexpr words words_of(const char* p, std::size_t n) noexcept {
        if (n >= 8) return {bytes<8>(p), bytes<8>(p + n - 8)};
        if (n >= 4) return {bytes<4>(p), bytes<4>(p + n - 4)};
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
        return {v, 0};
    }
    // The same at run time, each word in one load where the machine is little-endian.
    template <std::size_t N>
    static std::uint64_t load(const char* p) noexcept {
#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || defined(_M_X64) || defined(_M_ARM64)
        std::conditional_t<N == 8, std::uint64_t, std::uint32_t> v;
        std::memcpy(&v, p, N);
        return v;
#else
        return bytes<N>(p);
#endif
    }
    static words load_words(const char* p, std::size_t n) noexcept {
        if (n >= 8) return {load<8>(p), load<8>(p + n - 8)};
        if (n >= 4) return {load<4>(p), load<4>(p + n - 4)};
        return words_of(p, n);
    }

    static constexpr std::array<words, fields::count> make_table() noexcept {
        std::array<words, fields::count> t{};
        for (std::size_t i = 0; i < fields::count; ++i) {
            const std::string_view name = fields::names[i];
            if (!name.empty() && name.size() <= short_name) t[i] = words_of(name.data(), name.size());
        }
        return t;
    }
    // The rows by name length (1 to 16), and where each length begins.
    static constexpr std::array<std::size_t, fields::count> make_order() noexcept {
        std::array<std::size_t, fields::count> o{};
        std::size_t n = 0;
        for (std::size_t len = 1; len <= short_name; ++len)
            for (std::size_t i = 0; i < fields::count; ++i)
                if (fields::names[i].size() == len) o[n++] = i;
        return o;
    }
    static constexpr std::array<std::size_t, short_name + 2> make_starts() noexcept {
        std::array<std::size_t, short_name + 2> s{};
        std::size_t n = 0;
        for (std::size_t len = 1; len <= short_name + 1; ++len) {
            s[len] = n;
            for (std::size_t i = 0; i < fields::count; ++i)
                if (fields::names[i].size() == len) ++n;
        }
        return s;
    }

    static constexpr std::array<words, fields::count> table = make_table();
    static constexpr std::array<std::size_t, fields::count> order = make_order();
    static constexpr std::array<std::size_t, short_name + 2> starts = make_starts();
};

}  // namespace keyhook::detail
