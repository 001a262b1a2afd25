// K5: the plaintext of a new key is taken once. one_time_secret and the
// results that carry it (created_key, rotated_key) move but never copy, a
// const view cannot take, and a take() whose value is dropped is an error
// under -Werror ([[nodiscard]]). Case 0 is the legal path; every other case
// must not compile.
#include <optional>
#include <utility>

#include "keyhook/creation.hpp"
#if KEYHOOK_COMPILE_FAIL_CASE == 0 || KEYHOOK_COMPILE_FAIL_CASE == 5
#include "keyhook/lifecycle.hpp"
#endif

int main() {
    keyhook::one_time_secret once(keyhook::secret("0123456789abcdefghij"));
#if KEYHOOK_COMPILE_FAIL_CASE == 0
    keyhook::one_time_secret moved = std::move(once);
    const std::optional<keyhook::secret> first = moved.take();
    keyhook::created_key created;
    keyhook::created_key created_moved = std::move(created);
    keyhook::rotated_key rotated;
    keyhook::rotated_key rotated_moved = std::move(rotated);
    return first.has_value() && created_moved.key.available() && rotated_moved.key.available();
#elif KEYHOOK_COMPILE_FAIL_CASE == 1
    keyhook::one_time_secret copy = once;  // a copy would be a second chance
    return copy.available();
#elif KEYHOOK_COMPILE_FAIL_CASE == 2
    keyhook::one_time_secret other;
    other = once;
    return other.available();
#elif KEYHOOK_COMPILE_FAIL_CASE == 3
    const keyhook::one_time_secret& view = once;
    return view.take().has_value();  // a const view cannot take
#elif KEYHOOK_COMPILE_FAIL_CASE == 4
    keyhook::created_key created;
    keyhook::created_key copy = created;
    return copy.key.available();
#elif KEYHOOK_COMPILE_FAIL_CASE == 5
    keyhook::rotated_key rotated;
    keyhook::rotated_key copy = rotated;
    return copy.key.available();
#elif KEYHOOK_COMPILE_FAIL_CASE == 6
    once.take();  // the only plaintext, dropped
    return 0;
#else
#error "unknown KEYHOOK_COMPILE_FAIL_CASE"
#endif
}
