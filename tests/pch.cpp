// Empty: compiled with the precompiled header, so that the header is built
// and every suite can reuse it (main.cpp must skip it, see CMakeLists.txt).
