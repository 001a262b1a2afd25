// Member-table completeness: the completeness check reaches the forms this round's
// records use (the delivery state's list of attempts, the notices' groups,
// the endpoint state's parts). Each struct mirrors the shape of one of them;
// case 0 is the legal path, every other case leaves a member out and must
// not compile.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/detail/members.hpp"
#include "keyhook/timestamps.hpp"

namespace kd = keyhook::detail;

// As a delivery state's attempts: a list of nested records.
struct attempt {
    keyhook::timestamp sent_at{};
#if KEYHOOK_COMPILE_FAIL_CASE == 1
    int status = 0;  // added to the nested record, not to its table
#endif
};
struct delivery {
    std::string id;
    std::vector<attempt> attempts;
};

// As a notice: members of the struct written in a JSON object of their own.
struct notice {
    std::string type;
    std::string endpoint;
    std::optional<int> last_status;
};

// As an endpoint state: a struct's members spread beside the record's own.
struct throttle {
    std::optional<keyhook::timestamp> tat;
#if KEYHOOK_COMPILE_FAIL_CASE == 3
    int tokens = 0;  // added to the part, not to its rows
#endif
};
struct endpoint {
    bool disabled = false;
    throttle rate;
};

template <>
struct kd::members_of<attempt> {
    static constexpr auto rows = std::make_tuple(row<time_form>("sentAt", &attempt::sent_at, presence::required));
};
template <>
struct kd::members_of<delivery> {
    static constexpr auto rows =
        std::make_tuple(row<text_form>("id", &delivery::id, presence::required),
                        row<list_form<record_form<attempt>>>("attempts", &delivery::attempts, presence::required));
};
template <>
struct kd::members_of<notice> {
    static constexpr auto rows =
        std::make_tuple(row<text_form>("type", &notice::type, presence::required),
                        group<notice>("data", row<text_form>("endpointId", &notice::endpoint, presence::required)
#if KEYHOOK_COMPILE_FAIL_CASE != 2
                                                  ,
                                      row<whole_form<int, 100, 599>>("status", &notice::last_status, presence::optional)
#endif
                                          ));
};
template <>
struct kd::members_of<endpoint> {
    static constexpr auto rows =
        std::make_tuple(row<bool_form>("disabled", &endpoint::disabled, presence::optional),
                        part(&endpoint::rate, row<time_form>("throttleTat", &throttle::tat, presence::optional)));
};

int main() {
    const nlohmann::json j = nlohmann::json::object();
    delivery d;
    notice n;
    endpoint e;
    // Reading a delivery reads its attempts by their own table (case 1).
    const bool failed = kd::read_members(j, "", d).has_value() && kd::read_members(j, "", n).has_value() &&
                        !kd::read_members(j, "", e).has_value();
    return failed ? 0 : 1;
}
