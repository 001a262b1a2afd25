// keyhook's version. CMake reads the project version from this file, so the
// two cannot disagree.
#pragma once

#define KEYHOOK_VERSION_MAJOR 0
#define KEYHOOK_VERSION_MINOR 2
#define KEYHOOK_VERSION_PATCH 0
// One number that compares: MAJOR * 10000 + MINOR * 100 + PATCH.
#define KEYHOOK_VERSION (KEYHOOK_VERSION_MAJOR * 10000 + KEYHOOK_VERSION_MINOR * 100 + KEYHOOK_VERSION_PATCH)
