// The generative stage's memory probe: the suite's counting replacements of
// operator new and delete (tests/support/counting_allocator.hpp, included in
// this one translation unit of each generative executable).
#include <cstddef>
#include <optional>

#include "../support/counting_allocator.hpp"
#include "generative.hpp"

namespace {

std::optional<counting_allocator::scope> probe;

}  // namespace

namespace gen {

void memory_probe_start() { probe.emplace(); }

std::size_t memory_probe_peak() {
    const std::size_t peak = probe ? probe->stop().peak : 0;
    probe.reset();
    return peak;
}

}  // namespace gen
