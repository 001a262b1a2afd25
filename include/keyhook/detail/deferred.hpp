// keyhook internal: a type named through a deferred parameter (config.hpp).
// deferred_t<T, D> is T, but as a dependent type: a function template whose
// parameter is `const deferred_t<T, D>&` may be declared while T is only
// declared, its body is checked where it is called (T is complete there,
// since the caller holds a T), and D is never deduced from the argument.
#pragma once

namespace keyhook::detail {

template <class T, class D>
struct deferred {
    using type = T;
};
template <class T, class D>
using deferred_t = typename deferred<T, D>::type;

}  // namespace keyhook::detail
