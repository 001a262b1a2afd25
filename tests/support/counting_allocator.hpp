// Counting replacements of the global allocation functions, forwarding to
// malloc: allocations, bytes requested, bytes live and the peak of live bytes.
// Tests assert memory and allocation counts with them (J3, K10) and the
// authorization benchmark reports heap bytes per key.
//
// Include this header in exactly ONE translation unit per executable: it
// defines the replaceable operator new and delete (not inline, as the language
// requires), so a second inclusion fails to link with duplicate definitions.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace counting_allocator {

// What a scope saw between its start and stop().
struct usage {
    std::size_t allocations = 0;  // calls of an allocating operator new
    std::size_t requested = 0;    // bytes asked for, freed since or not
    std::size_t peak = 0;         // the most bytes live at once, beyond those live at the start
    long long held = 0;           // bytes live at stop() minus those live at the start
};

namespace detail {

// Each block carries its size in front of it, so that every form of delete
// (sized or not) knows what it gives back.
constexpr std::size_t header = 16;
static_assert(header >= alignof(std::max_align_t) && header >= sizeof(std::size_t));

inline std::atomic<unsigned long long> allocations{0};
inline std::atomic<unsigned long long> requested{0};
inline std::atomic<long long> live{0};
inline std::atomic<long long> peak{0};

inline void note_alloc(std::size_t n) noexcept {
    allocations.fetch_add(1, std::memory_order_relaxed);
    requested.fetch_add(n, std::memory_order_relaxed);
    const long long now = live.fetch_add(static_cast<long long>(n)) + static_cast<long long>(n);
    long long p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
}

inline void* alloc(std::size_t n) {
    auto* base = static_cast<unsigned char*>(std::malloc(n + header));
    if (base == nullptr) throw std::bad_alloc();
    *reinterpret_cast<std::size_t*>(base) = n;
    note_alloc(n);
    return base + header;
}

inline void release(void* p) noexcept {
    if (p == nullptr) return;
    auto* base = static_cast<unsigned char*>(p) - header;
    live.fetch_sub(static_cast<long long>(*reinterpret_cast<std::size_t*>(base)));
    std::free(base);
}

// Over-aligned blocks: the size sits just before the block, in a whole alignment unit.
inline void* aligned_alloc(std::size_t n, std::align_val_t al) {
    const auto a = std::max(static_cast<std::size_t>(al), header);
    const std::size_t size = (n + a + a - 1) / a * a;  // std::aligned_alloc wants a multiple
    auto* base = static_cast<unsigned char*>(std::aligned_alloc(a, size));
    if (base == nullptr) throw std::bad_alloc();
    auto* p = base + a;
    reinterpret_cast<std::size_t*>(p)[-1] = n;
    note_alloc(n);
    return p;
}

inline void aligned_release(void* p, std::align_val_t al) noexcept {
    if (p == nullptr) return;
    const auto a = std::max(static_cast<std::size_t>(al), header);
    live.fetch_sub(static_cast<long long>(reinterpret_cast<std::size_t*>(p)[-1]));
    std::free(static_cast<unsigned char*>(p) - a);
}

template <class F>
void* nothrow(F f) noexcept {
    try {
        return f();
    } catch (...) {
        return nullptr;
    }
}

}  // namespace detail

// Bytes allocated and not yet freed since the program started.
[[nodiscard]] inline long long live_bytes() noexcept { return detail::live.load(); }

// Counts from its construction to stop(). The peak is shared: starting a
// scope restarts it, so nested scopes report the peak of the innermost.
class scope {
public:
    scope() noexcept
        : allocations_(detail::allocations.load()), requested_(detail::requested.load()), live_(detail::live.load()) {
        detail::peak = live_;
    }

    // The counts so far; may be called more than once.
    [[nodiscard]] usage stop() const noexcept {
        usage u;
        u.allocations = static_cast<std::size_t>(detail::allocations.load() - allocations_);
        u.requested = static_cast<std::size_t>(detail::requested.load() - requested_);
        u.peak = static_cast<std::size_t>(detail::peak.load() - live_);
        u.held = detail::live.load() - live_;
        return u;
    }

private:
    unsigned long long allocations_;
    unsigned long long requested_;
    long long live_;
};

}  // namespace counting_allocator

void* operator new(std::size_t n) { return counting_allocator::detail::alloc(n); }
void* operator new[](std::size_t n) { return counting_allocator::detail::alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return counting_allocator::detail::nothrow([n] { return counting_allocator::detail::alloc(n); });
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return counting_allocator::detail::nothrow([n] { return counting_allocator::detail::alloc(n); });
}
void* operator new(std::size_t n, std::align_val_t a) { return counting_allocator::detail::aligned_alloc(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counting_allocator::detail::aligned_alloc(n, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return counting_allocator::detail::nothrow([n, a] { return counting_allocator::detail::aligned_alloc(n, a); });
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return counting_allocator::detail::nothrow([n, a] { return counting_allocator::detail::aligned_alloc(n, a); });
}
void operator delete(void* p) noexcept { counting_allocator::detail::release(p); }
void operator delete[](void* p) noexcept { counting_allocator::detail::release(p); }
void operator delete(void* p, std::size_t) noexcept { counting_allocator::detail::release(p); }
void operator delete[](void* p, std::size_t) noexcept { counting_allocator::detail::release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counting_allocator::detail::release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counting_allocator::detail::release(p); }
void operator delete(void* p, std::align_val_t a) noexcept { counting_allocator::detail::aligned_release(p, a); }
void operator delete[](void* p, std::align_val_t a) noexcept { counting_allocator::detail::aligned_release(p, a); }
void operator delete(void* p, std::size_t, std::align_val_t a) noexcept {
    counting_allocator::detail::aligned_release(p, a);
}
void operator delete[](void* p, std::size_t, std::align_val_t a) noexcept {
    counting_allocator::detail::aligned_release(p, a);
}
void operator delete(void* p, std::align_val_t a, const std::nothrow_t&) noexcept {
    counting_allocator::detail::aligned_release(p, a);
}
void operator delete[](void* p, std::align_val_t a, const std::nothrow_t&) noexcept {
    counting_allocator::detail::aligned_release(p, a);
}
