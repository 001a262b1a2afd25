// A keyhook::secret reaches text only masked (M3): it does not convert to a
// string, a string_view or JSON text other than its masked form, and its
// plaintext member is private. Case 0 is the legal path (reveal() is the one
// way out, and easy to search for); every other case must not compile.
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "keyhook/secret.hpp"

int main() {
    const keyhook::secret s("0123456789abcdefghij");
#if KEYHOOK_COMPILE_FAIL_CASE == 0
    const std::string plain = s.reveal();
    const nlohmann::json j = s;  // the masked form
    std::ostringstream os;
    os << s;  // the masked form
    return static_cast<int>(plain.size() + j.dump().size() + os.str().size()) == 0;
#elif KEYHOOK_COMPILE_FAIL_CASE == 1
    const std::string plain = s;  // no conversion to text
    return static_cast<int>(plain.size());
#elif KEYHOOK_COMPILE_FAIL_CASE == 2
    const nlohmann::json j = std::string_view(s);  // nor to a view of it
    return static_cast<int>(j.size());
#elif KEYHOOK_COMPILE_FAIL_CASE == 3
    const nlohmann::json j = s.value_;  // the plaintext member is private
    return static_cast<int>(j.size());
#else
#error "unknown KEYHOOK_COMPILE_FAIL_CASE"
#endif
}
