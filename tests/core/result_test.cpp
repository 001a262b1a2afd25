#include "keyhook/result.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

using keyhook::errc;
using keyhook::error;
using keyhook::result;

namespace {

const error uuid_error{errc::invalid_value, "data.id", "expected a UUID"};

template <class T>
std::string printed(const result<T>& r) {
    std::ostringstream os;
    os << r;
    return os.str();
}

// Counts live instances, so that a value copied, moved, assigned over or
// dropped is seen constructed and destroyed exactly once; no default constructor.
struct counted {
    static int live;
    std::string text;
    explicit counted(std::string t) : text(std::move(t)) { ++live; }
    counted(const counted& o) : text(o.text) { ++live; }
    counted(counted&& o) noexcept : text(std::move(o.text)) { ++live; }
    counted& operator=(const counted&) = default;
    counted& operator=(counted&&) noexcept = default;
    ~counted() { --live; }
    friend bool operator==(const counted& a, const counted& b) { return a.text == b.text; }
};
int counted::live = 0;

result<int> half(int n) {
    if (n % 2 != 0) return error{errc::invalid_value, "n", "is odd"};
    return n / 2;
}

}  // namespace

TEST_CASE("result: a value or an error, as std::expected", "[result]") {
    const result<int> ok = 42;
    REQUIRE(ok.has_value());
    REQUIRE(static_cast<bool>(ok));
    REQUIRE(ok.value() == 42);
    REQUIRE(*ok == 42);

    const result<int> failed = uuid_error;
    REQUIRE_FALSE(failed.has_value());
    REQUIRE_FALSE(static_cast<bool>(failed));
    REQUIRE(failed.error() == uuid_error);

    static_assert(std::is_same_v<result<int>::value_type, int>);
    static_assert(std::is_same_v<result<int>::error_type, error>);
    static_assert(std::is_same_v<result<int>::rebind<long>, result<long>>);
}

TEST_CASE("result: copies, moves and assignments between a value and an error keep one value alive", "[result]") {
    static_assert(!std::is_default_constructible_v<counted>);
    static_assert(std::is_nothrow_move_constructible_v<result<counted>>);
    const std::string long_text(40, 'v');  // on the heap: a double free or a leak shows under ASan
    {
        result<counted> a = counted(long_text);
        result<counted> e = uuid_error;
        CHECK(counted::live == 1);

        result<counted> copy = a;  // value copied
        CHECK(counted::live == 2);
        CHECK(copy->text == long_text);
        result<counted> error_copy = e;  // error copied, no value made
        CHECK(counted::live == 2);
        CHECK(error_copy.error() == uuid_error);

        copy = e;  // value assigned over by an error: the value is destroyed
        CHECK(counted::live == 1);
        CHECK(!copy);
        CHECK(copy.error() == uuid_error);
        copy = a;  // error assigned over by a value: a value is made
        CHECK(counted::live == 2);
        CHECK(copy->text == long_text);
        copy = result<counted>(counted("other"));  // value over value
        CHECK(counted::live == 2);
        CHECK(copy->text == "other");
        const result<counted>& same = copy;
        copy = same;  // self-assignment keeps the value
        CHECK(copy->text == "other");
        error_copy = e;  // error over error
        CHECK(counted::live == 2);

        result<counted> moved = std::move(copy);  // value moved
        CHECK(moved->text == "other");
        CHECK(counted::live == 3);      // the moved-from result still holds its (emptied) value
        error_copy = std::move(moved);  // an error's place takes a value; `moved` keeps its own
        CHECK(error_copy->text == "other");
        CHECK(counted::live == 4);
    }
    CHECK(counted::live == 0);
}

TEST_CASE("result: value() on an error throws keyhook::exception carrying that error", "[result]") {
    result<std::string> failed = uuid_error;
    try {
        (void)failed.value();
        FAIL("value() did not throw");
    } catch (const keyhook::exception& e) {
        REQUIRE(e.error() == uuid_error);
        REQUIRE(std::string(e.what()) == "[keyhook.invalid_value] data.id: expected a UUID");
    }
    REQUIRE_THROWS_AS(std::move(failed).value(), keyhook::exception);
    const result<std::string>& as_const = failed;
    REQUIRE_THROWS_AS(as_const.value(), keyhook::exception);
}

TEST_CASE("result: operator-> and moving the value out", "[result]") {
    result<std::string> r = std::string("hello");
    REQUIRE(r->size() == 5);
    r->append("!");
    REQUIRE(*r == "hello!");
    std::string taken = std::move(r).value();
    REQUIRE(taken == "hello!");

    result<std::unique_ptr<int>> owner = std::make_unique<int>(7);  // move-only values work
    auto p = *std::move(owner);
    REQUIRE(*p == 7);
}

TEST_CASE("result: value_or gives the value, or the fallback on an error", "[result]") {
    REQUIRE(result<int>(3).value_or(9) == 3);
    REQUIRE(result<int>(uuid_error).value_or(9) == 9);
    result<std::string> s = std::string("kept");
    REQUIRE(std::move(s).value_or("fallback") == "kept");
    REQUIRE(result<std::string>(uuid_error).value_or("fallback") == "fallback");
}

TEST_CASE("result: and_then chains calls that can fail; the first error passes through", "[result]") {
    REQUIRE(result<int>(8).and_then(half).and_then(half).value() == 2);
    const auto odd = result<int>(6).and_then(half).and_then(half);
    REQUIRE_FALSE(odd.has_value());
    REQUIRE(odd.error().path == "n");

    int calls = 0;
    const auto skipped = result<int>(uuid_error).and_then([&](int n) {
        ++calls;
        return half(n);
    });
    REQUIRE(calls == 0);
    REQUIRE(skipped.error() == uuid_error);

    // To another value type.
    const auto text = result<int>(5).and_then([](int n) { return result<std::string>(std::to_string(n)); });
    REQUIRE(text.value() == "5");
}

TEST_CASE("result: transform maps the value, transform_error the error", "[result]") {
    const auto doubled = result<int>(21).transform([](int n) { return n * 2; });
    REQUIRE(doubled.value() == 42);
    const auto as_text = result<int>(uuid_error).transform([](int n) { return std::to_string(n); });
    static_assert(std::is_same_v<std::decay_t<decltype(as_text)>, result<std::string>>);
    REQUIRE(as_text.error() == uuid_error);

    int seen = 0;
    const result<void> nothing = result<int>(4).transform([&](int n) { seen = n; });
    REQUIRE(nothing.has_value());
    REQUIRE(seen == 4);

    const auto prefixed = result<int>(uuid_error).transform_error([](error e) {
        e.path = "outer." + e.path;
        return e;
    });
    REQUIRE(prefixed.error().path == "outer.data.id");
    REQUIRE(result<int>(1).transform_error([](error) { return uuid_error; }).value() == 1);
}

TEST_CASE("result: or_else recovers from an error; a value passes through", "[result]") {
    const auto recovered = result<int>(uuid_error).or_else([](const error& e) {
        return e.code == errc::invalid_value ? result<int>(0) : result<int>(e);
    });
    REQUIRE(recovered.value() == 0);
    int calls = 0;
    const auto kept = result<int>(5).or_else([&](const error&) {
        ++calls;
        return result<int>(0);
    });
    REQUIRE(kept.value() == 5);
    REQUIRE(calls == 0);
    const auto moved = result<std::string>(uuid_error).or_else([](error&& e) { return result<std::string>(e.path); });
    REQUIRE(moved.value() == "data.id");
}

TEST_CASE("result<void>: success by default, an error otherwise", "[result]") {
    const result<void> ok;
    REQUIRE(ok.has_value());
    REQUIRE_NOTHROW(ok.value());
    const result<void> failed = uuid_error;
    REQUIRE_FALSE(failed);
    REQUIRE(failed.error() == uuid_error);
    try {
        failed.value();
        FAIL("value() did not throw");
    } catch (const keyhook::exception& e) {
        REQUIRE(e.error() == uuid_error);
    }
    REQUIRE(ok.and_then([] { return result<int>(1); }).value() == 1);
    REQUIRE(failed.and_then([] { return result<int>(1); }).error() == uuid_error);
    REQUIRE(ok.transform([] { return 2; }).value() == 2);
    REQUIRE(failed.or_else([](const error&) { return result<void>(); }).has_value());
    REQUIRE(failed
                .transform_error([](error e) {
                    e.code = errc::out_of_range;
                    return e;
                })
                .error()
                .code == errc::out_of_range);
    REQUIRE(ok == result<void>());
    REQUIRE(failed != ok);
}

TEST_CASE("result: == compares the value or the error", "[result]") {
    REQUIRE(result<int>(1) == result<int>(1));
    REQUIRE(result<int>(1) != result<int>(2));
    REQUIRE(result<int>(uuid_error) == result<int>(uuid_error));
    REQUIRE(result<int>(uuid_error) != result<int>(1));
    REQUIRE(result<int>(uuid_error) != result<int>(error{errc::invalid_value, "data.id", "other"}));
}

TEST_CASE("result: printing shows the value or the error", "[result][P1]") {
    REQUIRE(printed(result<int>(42)) == "42");
    REQUIRE(printed(result<int>(uuid_error)) == "[keyhook.invalid_value] data.id: expected a UUID");
    REQUIRE(printed(result<void>()) == "ok");
    REQUIRE(printed(result<void>(uuid_error)) == "[keyhook.invalid_value] data.id: expected a UUID");
}

TEST_CASE("result: printed text is quoted and escaped (P1); ordinary text is unchanged", "[result][P1]") {
    // Outside the boundary: control, DEL, C1 and bidi characters are escaped, quotes and backslashes too.
    REQUIRE(printed(result<std::string>(std::string("a\nb\x1b[2J"))) == R"("a\x0ab\x1b[2J")");
    REQUIRE(printed(result<std::string>(std::string("\x7f\xc2\x9b\xe2\x80\xae"))) == R"("\x7f\u009b\u202e")");
    REQUIRE(printed(result<std::string>(std::string("say \"hi\" \\"))) == R"("say \"hi\" \\")");
    REQUIRE(printed(result<std::string>(std::string("\xff"))) == R"("\xff")");
    // Inside: printable ASCII and non-ASCII letters are copied as they are.
    REQUIRE(printed(result<std::string>(std::string("caf\xc3\xa9 ok"))) == "\"caf\xc3\xa9 ok\"");
    // A forged error line in a value cannot pass for an error: it is quoted.
    REQUIRE(printed(result<std::string>(std::string("[keyhook.unauthorized] x"))) == "\"[keyhook.unauthorized] x\"");
    // An error's path and message are escaped as well.
    REQUIRE(printed(result<int>(error{errc::invalid_value, "a\nb", "uuid_error\x1b"})) ==
            R"([keyhook.invalid_value] a\x0ab: uuid_error\x1b)");
}
