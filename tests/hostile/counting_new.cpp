// The generative stage's memory probe: replaces the global allocation
// functions of its executable with ones that track the peak of live bytes
// (malloc_usable_size measures a block on both sides, so frees balance).
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "generative.hpp"

namespace {

std::atomic<bool> probing{false};
std::atomic<long long> live{0};
std::atomic<long long> peak{0};
std::atomic<long long> start_live{0};

void note_alloc(void* p) {
    const auto n = static_cast<long long>(malloc_usable_size(p));
    const long long now = live.fetch_add(n, std::memory_order_relaxed) + n;
    if (!probing.load(std::memory_order_relaxed)) return;
    long long old = peak.load(std::memory_order_relaxed);
    while (now > old && !peak.compare_exchange_weak(old, now, std::memory_order_relaxed)) {
    }
}

void* counted(std::size_t n) {
    void* p = std::malloc(n == 0 ? 1 : n);
    if (!p) throw std::bad_alloc();
    note_alloc(p);
    return p;
}

void* counted_aligned(std::size_t n, std::align_val_t al) {
    const auto a = static_cast<std::size_t>(al);
    const std::size_t size = (n + a - 1) / a * a;
    void* p = std::aligned_alloc(a, size == 0 ? a : size);
    if (!p) throw std::bad_alloc();
    note_alloc(p);
    return p;
}

void release(void* p) noexcept {
    if (!p) return;
    live.fetch_sub(static_cast<long long>(malloc_usable_size(p)), std::memory_order_relaxed);
    std::free(p);
}

}  // namespace

namespace gen {

void memory_probe_start() {
    start_live = live.load();
    peak = start_live.load();
    probing = true;
}

std::size_t memory_probe_peak() {
    probing = false;
    const long long p = peak.load() - start_live.load();
    return p < 0 ? 0 : static_cast<std::size_t>(p);
}

}  // namespace gen

void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new(std::size_t n, std::align_val_t a) { return counted_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_aligned(n, a); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
