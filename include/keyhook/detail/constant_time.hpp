// keyhook: the loop behind constant_time_equal (M3, K10, H7, B1), and a probe
// that lets tests prove two things an early-exit `a == b` would break: every
// byte position is read whatever the contents, and the receiving and signing
// code go through this loop at all (constant-time comparison, proved).
#pragma once

#include <atomic>
#include <cstddef>

namespace keyhook::detail {

// Test hook. When a probe is installed, each comparison adds one call and the
// number of byte positions it read. Production code never installs one; the
// cost is one relaxed load per comparison, not per byte.
struct constant_time_probe {
    std::size_t calls = 0;
    std::size_t positions = 0;
};
inline std::atomic<constant_time_probe*> constant_time_probe_hook{nullptr};

// Installs a probe for the lifetime of this object (tests only; not thread-safe
// against comparisons running on other threads).
class scoped_constant_time_probe {
public:
    scoped_constant_time_probe() noexcept : previous_(constant_time_probe_hook.exchange(&probe_)) {}
    ~scoped_constant_time_probe() { constant_time_probe_hook.store(previous_); }
    scoped_constant_time_probe(const scoped_constant_time_probe&) = delete;
    scoped_constant_time_probe& operator=(const scoped_constant_time_probe&) = delete;
    [[nodiscard]] const constant_time_probe& counts() const noexcept { return probe_; }

private:
    constant_time_probe probe_;
    constant_time_probe* previous_;
};

// Equality of two byte sequences (anything with size() and operator[] giving a
// char) whose running time depends on the lengths only: every position up to
// the longer length is read, differences are OR-ed, nothing returns early.
// A template so that tests can count the reads through an instrumented type.
template <class A, class B>
[[nodiscard]] bool constant_time_equal_bytes(const A& a, const B& b) noexcept {
    const std::size_t na = a.size(), nb = b.size();
    const std::size_t n = na > nb ? na : nb;
    unsigned char diff = na == nb ? 0 : 1;
    for (std::size_t i = 0; i < n; ++i) {
        const auto x = i < na ? static_cast<unsigned char>(a[i]) : static_cast<unsigned char>(0);
        const auto y = i < nb ? static_cast<unsigned char>(b[i]) : static_cast<unsigned char>(0);
        diff |= static_cast<unsigned char>(x ^ y);
    }
    if (auto* probe = constant_time_probe_hook.load(std::memory_order_relaxed)) {
        ++probe->calls;
        probe->positions += n;
    }
    // Keep the compiler from short-circuiting the loop on the first difference.
    volatile unsigned char sink = diff;
    return sink == 0;
}

}  // namespace keyhook::detail
