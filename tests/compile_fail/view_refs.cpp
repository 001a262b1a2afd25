// Functions that return pointers into their argument refuse a temporary, whose
// pointers would dangle at the end of the statement: default_view_refs and
// select_key_refs (L3), find_header, and authorize (an authorization reads its
// key's id from the index). Case 0 is the legal path (an lvalue; and
// default_view, which copies, takes a temporary); every other case must not
// compile.
#include <array>
#include <utility>
#include <vector>

#include "keyhook/authorization.hpp"
#include "keyhook/http.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/key_list_view.hpp"

int main() {
    const keyhook::timestamp now{};
    std::vector<keyhook::api_key> records(1);
    const keyhook::http_headers headers{{"x-synthetic-key", "k", true}, {"x-tenant-name", "acme", false}};
    const keyhook::key_index index{std::array<unsigned char, 16>{}};
    const auto family = keyhook::api_family::execute();
    const auto all = keyhook::resource_ref::all();
    const auto level = keyhook::access_level::read;
#if KEYHOOK_COMPILE_FAIL_CASE == 0
    const auto refs = keyhook::default_view_refs(records, now);
    const auto selected = keyhook::select_key_refs(records, keyhook::key_filter{}, now);
    const auto copies = keyhook::default_view(std::vector<keyhook::api_key>(1), now);
    const auto* h = keyhook::find_header(headers, "x-tenant-name");
    const auto a = keyhook::authorize(index, headers, family, all, level, now);
    const auto b = keyhook::authorize(index, "k", "acme", family, all, level, now);
    return static_cast<int>(refs.size() + selected.size() + copies.size()) + (h != nullptr) + a.allowed() + b.allowed();
#elif KEYHOOK_COMPILE_FAIL_CASE == 1
    return static_cast<int>(keyhook::default_view_refs(std::vector<keyhook::api_key>(1), now).size());
#elif KEYHOOK_COMPILE_FAIL_CASE == 2
    return static_cast<int>(keyhook::default_view_refs(keyhook::parse_key_list("{}").records, now).size());
#elif KEYHOOK_COMPILE_FAIL_CASE == 3
    return static_cast<int>(keyhook::select_key_refs(std::move(records), keyhook::key_filter{}, now).size());
#elif KEYHOOK_COMPILE_FAIL_CASE == 4
    return keyhook::find_header(keyhook::http_headers(headers), "x-tenant-name") != nullptr;
#elif KEYHOOK_COMPILE_FAIL_CASE == 5
    return keyhook::authorize(keyhook::key_index(std::array<unsigned char, 16>{}), headers, family, all, level, now)
        .allowed();
#elif KEYHOOK_COMPILE_FAIL_CASE == 6
    return keyhook::authorize(std::move(index), "k", "acme", family, all, level, now).allowed();
#else
#error "unknown KEYHOOK_COMPILE_FAIL_CASE"
#endif
}
