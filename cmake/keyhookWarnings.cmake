# Warning flags for keyhook's own tests, examples, benchmarks and fuzzers (never
# put on the INTERFACE targets that users link).
function(keyhook_set_warnings target)
    if(MSVC)
        target_compile_options(${target} PRIVATE /W4 /permissive-)
        if(KEYHOOK_WERROR)
            target_compile_options(${target} PRIVATE /WX)
        endif()
    else()
        target_compile_options(${target} PRIVATE
            -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor
            -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)
        if(KEYHOOK_WERROR)
            target_compile_options(${target} PRIVATE -Werror)
        endif()
    endif()
endfunction()
