// keyhook::crypto_compiled: every definition of keyhook/crypto/, compiled
// once; the core's definitions stay in keyhook::compiled.
#define KEYHOOK_BUILDING_COMPILED_CRYPTO 1
#include "keyhook/crypto/asymmetric.hpp"
#include "keyhook/crypto/key_rotation.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/signed_dispatch.hpp"
#include "keyhook/crypto/signing.hpp"
#include "keyhook/crypto/stored_key.hpp"
