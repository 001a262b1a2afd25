// keyhook: how definitions are provided. By default every header carries its
// definitions (header-only). A program that links keyhook::compiled defines
// KEYHOOK_COMPILED: the headers then only declare, and the definitions come
// from that library (src/keyhook.cpp), so a translation unit parses neither
// nlohmann/json.hpp nor date/date.h. Define it the same way in every
// translation unit of a program (the CMake target does).
#pragma once

#if defined(KEYHOOK_COMPILED_CRYPTO) && !defined(KEYHOOK_COMPILED)
#error "KEYHOOK_COMPILED_CRYPTO needs KEYHOOK_COMPILED"
#endif

// KEYHOOK_INLINE marks every declaration and definition of a function whose
// definition lives in an implementation file (keyhook/impl/*.ipp); such a file
// is included at the end of its public header when KEYHOOK_DEFINITIONS is 1.
#if defined(KEYHOOK_COMPILED)
#define KEYHOOK_INLINE
#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
#define KEYHOOK_DEFINITIONS 1
#else
#define KEYHOOK_DEFINITIONS 0
#endif
#else
#define KEYHOOK_INLINE inline
#define KEYHOOK_DEFINITIONS 1
#endif

// Deferred definitions. A function whose body instantiates nlohmann's
// templates (its parser or serializer, a member table's JSON forms) is
// declared as a template with one defaulted parameter that callers never
// name: `template <class D = void>` (callers write f(x) as for a function).
// Header-only, its body is then compiled only in the translation units that
// call it, instead of in every one that includes the header; its body names
// the JSON type through that parameter (detail::json_for<D>) so that nothing
// in it is compiled before. In compiled mode the library instantiates it
// once, for void, in the implementation file (src/keyhook.cpp,
// src/keyhook_crypto.cpp). A class whose member functions only some programs
// call is deferred the same way: a class template on such a parameter, named
// by an alias (key_index is basic_key_index<>, the key-list decoder's parts
// and detail::json_position likewise), whose members are compiled where they
// are called; compiled mode instantiates the class once. A function whose
// parameter is a type from another header takes it as
// detail::deferred_t<T, D> (detail/deferred.hpp), so that its header only
// declares T instead of including that header.

// The same for keyhook/crypto/ and KEYHOOK_COMPILED_CRYPTO, which the target
// keyhook::crypto_compiled (src/keyhook_crypto.cpp, needs OpenSSL) defines.
// Without it the crypto headers carry their definitions, also in a program
// that links keyhook::compiled.
#if defined(KEYHOOK_COMPILED_CRYPTO)
#define KEYHOOK_CRYPTO_INLINE
#if defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
#define KEYHOOK_CRYPTO_DEFINITIONS 1
#else
#define KEYHOOK_CRYPTO_DEFINITIONS 0
#endif
#else
#define KEYHOOK_CRYPTO_INLINE inline
#define KEYHOOK_CRYPTO_DEFINITIONS 1
#endif
