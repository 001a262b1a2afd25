// keyhook: wiping key material when it is released. Every buffer that held a
// key, a decoded secret or a generated plaintext is overwritten with zeros
// before it is released. A plain memset before a free is a dead store the
// optimizer may remove; these writes cannot be removed. Core: no OpenSSL
// (keyhook::crypto uses OPENSSL_cleanse for what OpenSSL hands it).
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

#if defined(__has_include)
#if __has_include(<features.h>)
#include <features.h>  // __GLIBC__, for explicit_bzero
#endif
#endif
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 25))
#include <string.h>  // explicit_bzero (glibc 2.25+)
#define KEYHOOK_HAVE_EXPLICIT_BZERO 1
#endif

namespace keyhook::detail {

// Test hook: when installed, counts the bytes wiped (the sanitizer tests check
// what was released; this tells them the wipe ran at all).
inline std::atomic<std::size_t*> wipe_probe_hook{nullptr};

// Overwrites n bytes at p with zeros, in a way the compiler must keep.
inline void secure_wipe(void* p, std::size_t n) noexcept {
    if (p == nullptr || n == 0) return;
#if defined(KEYHOOK_HAVE_EXPLICIT_BZERO)
    explicit_bzero(p, n);
#else
    volatile unsigned char* v = static_cast<volatile unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) v[i] = 0;
#if defined(__GNUC__) || defined(__clang__)
    // The buffer "escapes" into this barrier, so the stores above are observable.
    __asm__ __volatile__("" : : "r"(p) : "memory");
#endif
#endif
    if (auto* probe = wipe_probe_hook.load(std::memory_order_relaxed)) *probe += n;
}

// Wipes everything a string's buffer may hold: up to its capacity, not only
// its size (a shortened key leaves its tail behind), then empties it. Growing
// to the capacity never reallocates.
inline void wipe_string(std::string& s) noexcept {
    s.resize(s.capacity());
    secure_wipe(s.data(), s.size());
    s.clear();
}

// A std::string for key material that is wiped when it goes out of scope.
class wiped_string {
public:
    wiped_string() = default;
    explicit wiped_string(std::string s) noexcept : value_(std::move(s)) {}
    wiped_string(const wiped_string&) = delete;
    wiped_string& operator=(const wiped_string&) = delete;
    ~wiped_string() { wipe_string(value_); }
    [[nodiscard]] std::string& get() noexcept { return value_; }
    [[nodiscard]] const std::string& get() const noexcept { return value_; }

private:
    std::string value_;
};

}  // namespace keyhook::detail
