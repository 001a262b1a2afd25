// keyhook internal: std::function, for the public headers that hold one.
// libstdc++'s <functional> also brings the standard searchers and with them
// <unordered_map> and more: about 5 % of what a compiled-mode translation unit
// of keyhook.hpp costs (docs/performance.md, "Compile time"). Its
// <bits/std_function.h> is std::function alone; any other library gets
// <functional>.
#pragma once

#include <cstddef>  // defines __GLIBCXX__ under libstdc++

#if defined(__GLIBCXX__) && defined(__has_include)
#if __has_include(<bits/std_function.h>)
#include <bits/std_function.h>
#define KEYHOOK_HAVE_STD_FUNCTION_ALONE 1
#endif
#endif
#if !defined(KEYHOOK_HAVE_STD_FUNCTION_ALONE)
#include <functional>
#endif
