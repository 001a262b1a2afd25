# Constant-time comparison, structural half: secrets are compared through
# constant_time_equal, and nothing in the library compares revealed secret
# text with == or !=. Run by CTest: cmake -DSOURCE_DIR=<repo> -P this file.
if(NOT SOURCE_DIR)
    message(FATAL_ERROR "SOURCE_DIR is not set")
endif()
set(_failed FALSE)
macro(_fail what)
    message(SEND_ERROR "${what}")
    set(_failed TRUE)
endmacro()

# constant_time_equal delegates to the counted loop the unit tests observe.
file(READ "${SOURCE_DIR}/include/keyhook/secret.hpp" _secret)
string(REGEX MATCH "bool constant_time_equal\\(std::string_view a, std::string_view b\\) noexcept {[ \n]*return detail::constant_time_equal_bytes\\(a, b\\);[ \n]*}" _delegates "${_secret}")
if(NOT _delegates)
    _fail("secret.hpp: constant_time_equal must be `return detail::constant_time_equal_bytes(a, b);`")
endif()

# The signing and receiving code compare signatures and keys in constant time.
file(READ "${SOURCE_DIR}/include/keyhook/crypto/impl/signing.ipp" _signing)
string(REGEX MATCH "constant_time_equal\\(value, as_view\\(data_\\[i\\]\\)\\)" _sig "${_signing}")
if(NOT _sig)
    _fail("crypto/impl/signing.ipp: the v1 signatures are not compared with constant_time_equal")
endif()
file(READ "${SOURCE_DIR}/include/keyhook/impl/receiving.ipp" _receiving)
string(REGEX MATCHALL "constant_time_equal\\(" _recv_calls "${_receiving}")
list(LENGTH _recv_calls _recv_count)
if(_recv_count LESS 3)
    _fail("receiving.hpp: expected at least 3 constant_time_equal calls (candidates, header vs query, expected key), found ${_recv_count}")
endif()

# Nowhere in the library: revealed secret text compared with == or !=, or
# memcmp/strcmp/std::equal on it.
file(GLOB_RECURSE _headers "${SOURCE_DIR}/include/keyhook/*.hpp" "${SOURCE_DIR}/include/keyhook/*.ipp")
foreach(_h IN LISTS _headers)
    file(STRINGS "${_h}" _lines)
    foreach(_line IN LISTS _lines)
        if(_line MATCHES "reveal\\(\\)[ ]*[!=]=" OR _line MATCHES "[!=]=[ ]*[A-Za-z_.>*()-]*reveal\\(\\)")
            _fail("${_h}: compares revealed secret text with == or !=: ${_line}")
        endif()
        if(_line MATCHES "reveal\\(\\)" AND _line MATCHES "(memcmp|strcmp|strncmp|std::equal)\\(")
            _fail("${_h}: compares revealed secret text with a short-circuiting function: ${_line}")
        endif()
    endforeach()
endforeach()

if(_failed)
    message(FATAL_ERROR "constant-time structure check failed")
endif()
message(STATUS "constant-time structure check passed (${_recv_count} calls in receiving.hpp)")
