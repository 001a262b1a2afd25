// keyhook::crypto: keys at rest (rule K11). A key is stored only as its
// stored digest
//   kh1.<pepper id>.<base64url, no padding, of HMAC-SHA-256(pepper, key)>
// where the pepper is a 32- to 64-byte secret the host holds apart from its
// database. The legacy form sha256.<digest> (plain SHA-256 of the key, in 64
// lowercase hex digits or in padded standard base64 as Unkey stores it) is
// read and verified, never written: a key that matches under it, or under an
// older pepper, comes back with its digest under the current pepper.
//
// Nothing here prints a pepper or a digest: printing and JSON show masks; the
// one function that writes a digest is stored_digest::try_store_form.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keyhook/config.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/detail/deferred.hpp"
#include "keyhook/detail/wipe.hpp"
#include "keyhook/error.hpp"
#include "keyhook/key_digester.hpp"
#include "keyhook/result.hpp"
#include "keyhook/secret.hpp"

// What the index functions below take, from key_index.hpp, authorization.hpp,
// api_key.hpp and permissions.hpp: declared only, so that a program that
// keeps digests without an index does not compile the index.
namespace keyhook {
template <class D>
class basic_key_index;
class authorization;
struct api_key;
struct permission_policy;
}  // namespace keyhook

namespace keyhook::crypto {

inline constexpr std::string_view stored_digest_prefix = "kh1.";
inline constexpr std::string_view legacy_digest_prefix = "sha256.";
inline constexpr std::size_t min_pepper_bytes = 32;
inline constexpr std::size_t max_pepper_bytes = 64;
inline constexpr std::size_t max_pepper_id_length = 32;
// Schemes 2 to 255 of an index (key_digester): one per pepper.
inline constexpr std::size_t max_peppers = 254;

// How a stored digest is written.
enum class digest_form : unsigned char {
    kh1,            // kh1.<pepper id>.<43 base64url characters>
    sha256_hex,     // legacy: sha256.<64 lowercase hex digits>
    sha256_base64,  // legacy: sha256.<44 characters of padded standard base64>
};

class pepper_set;
struct stored_digest_access;

// A parsed stored digest. Compared in constant time; printed and converted to
// JSON only as a mask ("kh1.<pepper id>." and a '*' per character).
class stored_digest {
public:
    [[nodiscard]] digest_form form() const noexcept { return form_; }
    [[nodiscard]] bool legacy() const noexcept { return form_ != digest_form::kh1; }
    // The pepper's id for kh1, empty for the legacy forms.
    [[nodiscard]] const std::string& pepper_id() const noexcept { return pepper_id_; }
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE std::string masked() const;
    // The written form, for the host's store only. A legacy digest is never
    // written (K11): invalid_value, path "storedKey".
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE result<std::string> try_store_form() const;
    // The 32 digest bytes (for an index: key_index::try_add_digest).
    [[nodiscard]] const key_fingerprint& bytes() const noexcept { return bytes_; }

    stored_digest(const stored_digest&) = default;
    stored_digest& operator=(const stored_digest&) = default;
    // A move copies: the digest bytes are an array, and the source keeps its value.
    ~stored_digest() { keyhook::detail::secure_wipe(bytes_.data(), bytes_.size()); }

    friend bool operator==(const stored_digest& a, const stored_digest& b) noexcept { return is_equal(a, b); }
    friend bool operator!=(const stored_digest& a, const stored_digest& b) noexcept { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const stored_digest& x) { return print_to(os, x); }
    template <class Json>
    friend void to_json(Json& j, const stored_digest& d) {
        j = d.masked();
    }

private:
    friend struct stored_digest_access;
    stored_digest(digest_form form, std::string pepper_id, const key_fingerprint& bytes)
        : bytes_(bytes), pepper_id_(std::move(pepper_id)), form_(form) {}
    key_fingerprint bytes_{};
    std::string pepper_id_;
    digest_form form_ = digest_form::kh1;

    static KEYHOOK_CRYPTO_INLINE bool is_equal(const stored_digest& a, const stored_digest& b) noexcept;
    static KEYHOOK_CRYPTO_INLINE std::ostream& print_to(std::ostream& os, const stored_digest& x);
};

// Reads a stored digest. Refused (errc::invalid_value, path `where`, the text
// never quoted): anything but the kh1 form with a valid pepper id and exactly
// 43 canonical base64url characters, or the legacy form with 64 lowercase hex
// digits or 44 characters of padded standard base64.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<stored_digest> try_parse_stored_digest(std::string_view text,
                                                                                  std::string_view where = "storedKey");

namespace detail {
struct pepper;
// The peppers of a set, never changed once an index shares them. As an index's
// key_digester: scheme 1 is the legacy SHA-256, scheme 2 + i the i-th pepper
// (the current one first).
class pepper_ring final : public key_digester {
public:
    // Both out of line: their members' destructors need the complete pepper,
    // which only the implementation file has (compiled mode).
    KEYHOOK_CRYPTO_INLINE pepper_ring();
    KEYHOOK_CRYPTO_INLINE ~pepper_ring() override;
    KEYHOOK_CRYPTO_INLINE bool digest(std::uint8_t scheme, std::string_view key,
                                      key_fingerprint& out) const noexcept override;
    [[nodiscard]] bool outdated(std::uint8_t scheme) const noexcept override { return scheme != 2; }

    std::vector<std::unique_ptr<pepper>> peppers;  // [0]: the current one
};
}  // namespace detail

// The peppers a host holds: one current, any number of older ones, by id (1
// to 32 characters of A-Z a-z 0-9 _ -). Their bytes are wiped when the last
// set (or index) holding them is released. Copies share the peppers; adding
// to a copy an index shares first copies them, so the index never changes.
class pepper_set {
public:
    pepper_set() noexcept = default;

    // Adds a pepper of 32 to 64 bytes; the first one added is the current one.
    // Refused (errc::invalid_value, path "peppers"; the bytes never appear):
    // an id outside the alphabet or length, an id already held, another size,
    // more than max_peppers.
    KEYHOOK_CRYPTO_INLINE result<void> try_add(std::string_view id, const secret& bytes);
    void add(std::string_view id, const secret& bytes) { try_add(id, bytes).value(); }
    // Makes the pepper `id` the current one (rotation); the others stay for reading.
    KEYHOOK_CRYPTO_INLINE result<void> try_make_current(std::string_view id);

    // The current pepper's id; empty when the set is empty.
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE std::string_view current_id() const noexcept;
    [[nodiscard]] KEYHOOK_CRYPTO_INLINE bool contains(std::string_view id) const noexcept;
    [[nodiscard]] std::size_t size() const noexcept { return ring_ ? ring_->peppers.size() : 0; }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }

    // "pepper_set(current \"<id>\", <n> peppers)": ids, never bytes.
    friend std::ostream& operator<<(std::ostream& os, const pepper_set& x) { return print_to(os, x); }

private:
    friend struct stored_digest_access;
    // The ring to change: copied first when an index (or a copy) shares it.
    KEYHOOK_CRYPTO_INLINE detail::pepper_ring& own();
    std::shared_ptr<detail::pepper_ring> ring_;

    static KEYHOOK_CRYPTO_INLINE std::ostream& print_to(std::ostream& os, const pepper_set& x);
};

// K11: the stored digest of `key` under the current pepper, at creation or
// rotation (when the plaintext is at hand once). Refused: an empty set (path
// "peppers"), an empty key (path "key"), an OpenSSL failure.
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<stored_digest> try_compute_stored_digest(const pepper_set& peppers,
                                                                                    const secret& key);

// What verifying a presented key against one stored digest found.
struct stored_key_match {
    bool matched = false;
    // When it matched under the legacy form or an older pepper: its digest
    // under the current pepper, for the host to store in place of the old one.
    std::optional<stored_digest> rehash;

    explicit operator bool() const noexcept { return matched; }
    // "matched", "matched; store again under the current pepper" or "no match".
    friend std::ostream& operator<<(std::ostream& os, const stored_key_match& x) { return print_to(os, x); }

private:
    static KEYHOOK_CRYPTO_INLINE std::ostream& print_to(std::ostream& os, const stored_key_match& x);
};

// K11: whether `presented` is the key `stored` was computed from, compared in
// constant time. Refused (errc::invalid_value, path "storedKey"): a kh1
// digest naming a pepper the set does not hold (the message names the id).
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<stored_key_match> try_verify_stored_key(const pepper_set& peppers,
                                                                                   std::string_view presented,
                                                                                   const stored_digest& stored);

// K11: adds `record` of `tenant` to `index` by its stored digest alone. The
// index then digests each presented key once per pepper in use (and with
// SHA-256 when it holds legacy digests) and authorizes exactly as one built
// from the keys (K10). An index reads with one pepper set: refused (path
// "storedKey") another set, or a copy of it changed since; also refused: an
// empty set (path "peppers"), a pepper the set does not hold, and what
// key_index::try_add refuses. A deferred definition (config.hpp), like
// try_rehash_answer: their bodies compile where they are called.
template <class D>
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<std::size_t> try_add_stored(
    basic_key_index<D>& index, const pepper_set& peppers, std::string_view tenant,
    const keyhook::detail::deferred_t<api_key, D>& record, const stored_digest& stored,
    const keyhook::detail::deferred_t<permission_policy, D>& policy);

// K11 after an allowed call on such an index: when the key matched under the
// legacy form or an older pepper, its digest under the current one (the
// presented key is the plaintext, at hand only now); nullopt otherwise.
template <class D = void>
[[nodiscard]] KEYHOOK_CRYPTO_INLINE result<std::optional<stored_digest>> try_rehash_answer(
    const pepper_set& peppers, const keyhook::detail::deferred_t<authorization, D>& a, std::string_view presented);

}  // namespace keyhook::crypto

#if KEYHOOK_CRYPTO_DEFINITIONS
#include "keyhook/crypto/impl/stored_key.ipp"
#endif
