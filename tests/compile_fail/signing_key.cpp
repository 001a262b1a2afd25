// B1, B3: a signing key exists only after its bytes were checked. signing_secret,
// asymmetric_signing_key and public_key have no public constructor and no
// from_json: they come from try_parse_* / try_generate_* (which check the
// written form, the size and, for whsk_, the public half). Case 0 is the
// legal path; every other case must not compile.
#include <string>

#include <nlohmann/json.hpp>

#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/signing.hpp"

using namespace keyhook::crypto;

int main() {
    const std::string bytes(32, 'k');
#if KEYHOOK_COMPILE_FAIL_CASE == 0
    const auto s = try_parse_signing_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", signing_key_use::sign);
    const auto k = try_parse_asymmetric_signing_key("whsk_" + std::string(88, 'A'));
    const auto p = try_parse_public_key("whpk_" + std::string(44, 'A'));
    return s.has_value() + k.has_value() + p.has_value() + static_cast<int>(bytes.size());
#elif KEYHOOK_COMPILE_FAIL_CASE == 1
    const signing_secret s(bytes);  // unchecked bytes
    return static_cast<int>(s.key_size());
#elif KEYHOOK_COMPILE_FAIL_CASE == 2
    const signing_secret s;
    return static_cast<int>(s.key_size());
#elif KEYHOOK_COMPILE_FAIL_CASE == 3
    const asymmetric_signing_key k;
    return k.native_handle() != nullptr;
#elif KEYHOOK_COMPILE_FAIL_CASE == 4
    const auto s = nlohmann::json("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").get<signing_secret>();
    return static_cast<int>(s.key_size());
#elif KEYHOOK_COMPILE_FAIL_CASE == 5
    const public_key p;
    return p.native_handle() != nullptr;
#else
#error "unknown KEYHOOK_COMPILE_FAIL_CASE"
#endif
}
