// keyhook: creating an API key (spec 3.3; rules K1 to K5). The request and its
// validation, advisory warnings, UUID v4 generation from the host's random
// source, and the one-time hand-out of the new plaintext.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/api_key.hpp"
#include "keyhook/detail/ascii.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/status.hpp"
#include "keyhook/timestamps.hpp"

namespace keyhook {

// A random source is any callable `void(unsigned char* out, std::size_t n)` that
// fills n bytes from a cryptographically secure generator (for instance
// keyhook::crypto::openssl_random). keyhook never reads a device itself.
template <class R>
inline constexpr bool is_random_source_v = std::is_invocable_v<R&, unsigned char*, std::size_t>;

// K3 limits, counted in Unicode code points.
inline constexpr std::size_t max_name_length = 128;
inline constexpr std::size_t max_description_length = 1024;
inline constexpr std::size_t max_group_name_length = 128;
// K2 limits, counted in characters (all ASCII).
inline constexpr std::size_t min_own_key_length = 16;
inline constexpr std::size_t max_own_key_length = 256;

// The groups every tenant has (K3); any other group must begin with this prefix.
inline constexpr std::array<std::string_view, 5> default_groups = {"user:pf", "supervisor:pf", "tenant-admin",
                                                                   "tenant-moderator", "tenant-viewer"};
inline constexpr std::string_view custom_group_prefix = "user:";

namespace detail::keys {

KEYHOOK_INLINE std::string_view trim(std::string_view s) noexcept;

// K3 for a name or description: trimmed, valid UTF-8, no control character,
// between min and max code points. Appends an error for `field` if not.
KEYHOOK_INLINE void check_text(std::string_view field, std::string_view text, std::size_t min, std::size_t max,
                               errc code, std::vector<error>& errors);

KEYHOOK_INLINE void check_period(timestamp active_from, timestamp expire_at, std::vector<error>& errors);

KEYHOOK_INLINE void check_groups(const std::vector<std::string>& groups, std::vector<error>& errors);

}  // namespace detail::keys

[[nodiscard]] constexpr bool is_default_group(std::string_view g) noexcept {
    for (auto d : default_groups)
        if (d == g) return true;
    return false;
}

// K3: a default group, or `user:` followed by at least one character, at most
// 128 characters in all, valid UTF-8 without spaces or control characters.
// Names are case-sensitive ("User:pf" is not a group).
[[nodiscard]] KEYHOOK_INLINE bool is_valid_group_name(std::string_view g);

// K2: 16 to 256 characters, each printable ASCII other than space (0x21 to
// 0x7E). Every problem (path "key"): the length, the first character outside
// that range; none quotes the key. Empty when the key is valid.
[[nodiscard]] KEYHOOK_INLINE std::vector<error> own_key_problems(const secret& key);

// --- UUID v4 (K1) ----------------------------------------------------------

// A random UUID version 4 (RFC 9562), lowercase, 36 characters, from 16 bytes
// of the host's source.
template <class RandomSource>
[[nodiscard]] std::string generate_uuid_v4(RandomSource&& random) {
    static_assert(is_random_source_v<std::remove_reference_t<RandomSource>>,
                  "a random source is callable as void(unsigned char*, std::size_t)");
    std::array<unsigned char, 16> b{};
    random(b.data(), b.size());
    b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);  // version 4
    b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // variant 10xx
    std::string out;
    out.reserve(36);
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
        out += detail::hex_lower[b[i] >> 4];
        out += detail::hex_lower[b[i] & 0x0F];
    }
    // Wipe the drawn bytes: they are the key.
    volatile unsigned char* p = b.data();
    for (std::size_t i = 0; i < b.size(); ++i) p[i] = 0;
    return out;
}

// True for a lowercase UUID of version 4 and the RFC variant, as generated above.
[[nodiscard]] constexpr bool is_uuid_v4(std::string_view s) noexcept {
    if (s.size() != 36) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-') return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return s[14] == '4' && (s[19] == '8' || s[19] == '9' || s[19] == 'a' || s[19] == 'b');
}

// --- Shown once (K5) --------------------------------------------------------

// The plaintext of a new key, which can be taken exactly once. Move-only: a
// copy would be a second chance to see it. After take(), and in a moved-from
// object, it is empty. Printing shows only whether it is still there.
class one_time_secret {
public:
    one_time_secret() = default;
    explicit one_time_secret(secret s) noexcept : value_(std::move(s)) {}

    one_time_secret(const one_time_secret&) = delete;
    one_time_secret& operator=(const one_time_secret&) = delete;
    one_time_secret(one_time_secret&& other) noexcept : value_(std::exchange(other.value_, std::nullopt)) {}
    one_time_secret& operator=(one_time_secret&& other) noexcept {
        if (this != &other) value_ = std::exchange(other.value_, std::nullopt);
        return *this;
    }
    ~one_time_secret() = default;

    // The plaintext the first time; nullopt on every later call.
    [[nodiscard]] std::optional<secret> take() noexcept { return std::exchange(value_, std::nullopt); }
    [[nodiscard]] bool available() const noexcept { return value_.has_value(); }

    friend std::ostream& operator<<(std::ostream& os, const one_time_secret& x) { return print_to(os, x); }

private:
    std::optional<secret> value_;

    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const one_time_secret& x);
};

// --- The request -------------------------------------------------------------

// Shared: users reach all folders and services; restricted: the spec's
// "private tenant", where users have restricted access.
enum class tenant_kind { shared, restricted };

template <>
struct detail::enum_names<tenant_kind> {
    static constexpr std::string_view values[] = {"shared", "private"};
};

// Generation methods (spec 3.3 rule 2): the library generates a key (K1), or
// the user supplies their own (K2).
struct generate_key {
    friend constexpr bool operator==(generate_key, generate_key) noexcept { return true; }
    friend constexpr bool operator!=(generate_key, generate_key) noexcept { return false; }
};
struct own_key {
    secret key;
    friend bool operator==(const own_key& a, const own_key& b) noexcept { return a.key == b.key; }
    friend bool operator!=(const own_key& a, const own_key& b) noexcept { return !(a == b); }
    // Masked: without it GoogleTest would print the object's bytes, a short key's plaintext among them.
    friend std::ostream& operator<<(std::ostream& os, const own_key& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const own_key& x);
};
using generation_method = std::variant<generate_key, own_key>;

// What the creation form supplies.
struct key_request {
    std::string name;
    std::string description;  // optional: empty (after trimming) means none
    timestamp active_from{};
    timestamp expire_at{};  // the form's "Active until"
    std::vector<std::string> groups;
    generation_method method = generate_key{};

    friend bool operator==(const key_request& a, const key_request& b) { return is_equal(a, b); }
    friend bool operator!=(const key_request& a, const key_request& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_request& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const key_request& a, const key_request& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const key_request& x);
};

// Who creates the key; copied into the record's userId and createdBy.
struct key_author {
    std::optional<std::string> user_id;
    std::optional<std::string> created_by;
};

// K3 (and K2 for an own key): every problem of the request, in field order
// name, description, activeFrom, expireAt, groups, key; empty when valid.
// Each error names its field (a JSON member name such as "expireAt" or
// "groups[2]"); none contains the key.
[[nodiscard]] KEYHOOK_INLINE std::vector<error> key_request_problems(const key_request& r);

// --- Advisory warnings (K4) ----------------------------------------------------

enum class key_warning_kind {
    not_recommended_group,  // supervisor:pf or tenant-admin on a key
    shared_tenant_group,    // a shared tenant needs only user:pf
};

template <>
struct detail::enum_names<key_warning_kind> {
    static constexpr std::string_view values[] = {"not_recommended_group", "shared_tenant_group"};
};

// Advice the form shows beside a valid request; never an error.
struct key_warning {
    key_warning_kind kind = key_warning_kind::not_recommended_group;
    std::string path;  // "groups[i]"
    std::string message;

    friend bool operator==(const key_warning& a, const key_warning& b) { return is_equal(a, b); }
    friend bool operator!=(const key_warning& a, const key_warning& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const key_warning& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE bool is_equal(const key_warning& a, const key_warning& b);
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const key_warning& x);
};

// K4: one warning per group supervisor:pf or tenant-admin, and on a shared
// tenant one per group other than user:pf. A group may earn both.
[[nodiscard]] KEYHOOK_INLINE std::vector<key_warning> advise_groups(const std::vector<std::string>& groups,
                                                                    tenant_kind tenant);

// --- Creating ----------------------------------------------------------------

namespace detail::keys {

// A reference to the host's random source with one plain type, so that
// creation and rotation are compiled once (in the .ipp), not in every caller.
class random_ref {
public:
    // A view of the source; a temporary source lives to the end of the call it is passed to.
    template <class R, std::enable_if_t<!std::is_same_v<std::decay_t<R>, random_ref>, int> = 0>
    random_ref(R&& source) noexcept  // NOLINT: a view, like std::string_view
        : source_(const_cast<void*>(static_cast<const void*>(&source))), fill_(&fill<std::remove_reference_t<R>>) {}

    void operator()(unsigned char* out, std::size_t n) const { fill_(source_, out, n); }

private:
    template <class R>
    static void fill(void* source, unsigned char* out, std::size_t n) {
        (*static_cast<R*>(source))(out, n);
    }

    void* source_;  // R's object, possibly const
    void (*fill_)(void*, unsigned char*, std::size_t);
};

// The host's source as a callable whose type depends on the source's, so that
// a call taking it is compiled where the template is used (and once, in the
// .ipp, for the work).
template <class RandomSource>
auto draw_from(RandomSource& random) {
    static_assert(is_random_source_v<RandomSource>, "a random source is callable as void(unsigned char*, std::size_t)");
    return [&random](unsigned char* out, std::size_t n) { random(out, n); };
}

}  // namespace detail::keys

// The outcome of a creation: the record to store, the plaintext to show once,
// and K4's advice. Move-only, like the plaintext it carries.
struct created_key {
    api_key record;
    one_time_secret key;
    std::vector<key_warning> warnings;

    friend std::ostream& operator<<(std::ostream& os, const created_key& x) { return print_to(os, x); }

private:
    static KEYHOOK_INLINE std::ostream& print_to(std::ostream& os, const created_key& x);
};

namespace detail::keys {

// A new record for `plaintext` with the given fields (already validated).
KEYHOOK_INLINE api_key new_record(std::string id, const secret& plaintext, std::string_view name,
                                  std::string_view description, const std::vector<std::string>& groups,
                                  timestamp active_from, timestamp expire_at, const key_author& author, timestamp now);

// Draws a new key (unless `own` is given, K2) and then its record's id from
// `random`; an exception of the source, or an id equal to the key, is the error.
[[nodiscard]] KEYHOOK_INLINE std::optional<error> draw_key_and_id(random_ref random, const secret* own,
                                                                  secret& plaintext, std::string& id);

// try_create_key's work.
[[nodiscard]] KEYHOOK_INLINE result<created_key> create(const key_request& request, tenant_kind tenant,
                                                        random_ref random, timestamp now, const key_author& author);

}  // namespace detail::keys

// K1 to K5: validates the request (the first error of key_request_problems is
// returned; call that function to show them all), then builds the record: a
// generated key is a UUID v4 drawn first from `random`, the record's id a
// second UUID v4 drawn after it; masked form, status by the clock at `now`,
// type Synthetic, createdAt = updatedAt = now. The plaintext is in `key`, once.
// Never throws (the try_ contract): an exception from `random` becomes the
// error (detail::current_host_error), and no plaintext is kept.
template <class RandomSource>
[[nodiscard]] result<created_key> try_create_key(const key_request& request, tenant_kind tenant, RandomSource&& random,
                                                 timestamp now, const key_author& author = {}) {
    const auto draw = detail::keys::draw_from(random);
    return detail::keys::create(request, tenant, draw, now, author);
}

template <class RandomSource>
[[nodiscard]] created_key create_key(const key_request& request, tenant_kind tenant, RandomSource&& random,
                                     timestamp now, const key_author& author = {}) {
    return try_create_key(request, tenant, std::forward<RandomSource>(random), now, author).value();
}

}  // namespace keyhook

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/creation.ipp"
#endif
