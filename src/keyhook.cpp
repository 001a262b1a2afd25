// keyhook::compiled: every definition of keyhook's core, compiled once. The
// headers include their implementation files here because
// KEYHOOK_BUILDING_COMPILED is set; programs that link this library see
// declarations only.
#define KEYHOOK_BUILDING_COMPILED 1
#include "keyhook/keyhook.hpp"
