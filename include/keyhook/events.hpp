// keyhook: the 53 event types of spec 6.1 (rule H5), their names and meanings,
// and parsing a name with a suggestion when it is unknown (rule H3).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "keyhook/config.hpp"
#include "keyhook/detail/enum_names.hpp"
#include "keyhook/error.hpp"
#include "keyhook/result.hpp"

namespace keyhook {

// One value per row of spec 6.1, in the spec's order. The enumerators carry the
// wire names exactly (H5), including the three c's of EventsDataRetentionSucccess,
// so that code reads like the notifications it handles.
enum class event_type : std::uint8_t {
    PlatformLogin,
    CALogin,
    NotificationPlatformReleaseDismissed,
    AddProduct,
    UploadProduct,
    EditProduct,
    CloneProduct,
    DownloadProduct,
    DeleteProduct,
    AddPermission,
    RemovePermission,
    ModifyPermission,
    AddSection,
    DeleteSection,
    AddProductDocument,
    DownloadProductDocument,
    EditProductDocument,
    DeleteProductDocument,
    PublishEngine,
    CancelPublish,
    UpdateEngine,
    EditEngine,
    EditEngineVersion,
    ServiceActivated,
    ServiceDeactivated,
    CompareEngine,
    RestoreEngine,
    DownloadEngine,
    DeploymentRequest,
    DeleteEngine,
    DeleteEngineVersion,
    RecompileNeuron,
    ShellSubmission,
    AddTransform,
    UpdateTransform,
    DownloadTransform,
    DeleteTransform,
    DownloadVersionOverview,
    DownloadAPICallHistory,
    DownloadEventViewer,
    DownloadServiceLibrary,
    UploadTestbed,
    GenerateTestCase,
    AddTestCase,
    AddTestResult,
    TestRunStarted,
    TestCasesExecuted,
    TestResultCompare,
    TestResultAggregate,
    APICallHistoryDataRetentionSuccess,
    APICallHistoryDataRetentionFailed,
    EventsDataRetentionSucccess,
    EventsDataRetentionFailed,
};

inline constexpr std::size_t event_type_count = 53;

namespace detail {

// The one table of the 53 types (spec 6.1): enumerator, wire name (exactly as
// spec 6.1 spells it, H5), meaning. to_string, printing, the lookups below,
// meaning() and scripts/event-hash-search.py all read it. A 54th event is its
// enumerator above and its row here (then the command of event_slot_multiplier).
struct event_row {
    event_type value;
    std::string_view name;
    std::string_view meaning;
};

inline constexpr event_row event_rows[] = {
    {event_type::PlatformLogin, "PlatformLogin", "Login recorded"},
    {event_type::CALogin, "CALogin", "Assistant login recorded"},
    {event_type::NotificationPlatformReleaseDismissed, "NotificationPlatformReleaseDismissed",
     "Notification of new release dismissed"},
    {event_type::AddProduct, "AddProduct", "Folder created"},
    {event_type::UploadProduct, "UploadProduct", "Folder uploaded"},
    {event_type::EditProduct, "EditProduct", "Folder edited"},
    {event_type::CloneProduct, "CloneProduct", "Folder cloned"},
    {event_type::DownloadProduct, "DownloadProduct", "Folder downloaded"},
    {event_type::DeleteProduct, "DeleteProduct", "Folder deleted"},
    {event_type::AddPermission, "AddPermission", "Permissions applied to folder"},
    {event_type::RemovePermission, "RemovePermission", "Permissions removed from folder"},
    {event_type::ModifyPermission, "ModifyPermission", "Permissions modified for folder"},
    {event_type::AddSection, "AddSection", "Document section added"},
    {event_type::DeleteSection, "DeleteSection", "Document section deleted"},
    {event_type::AddProductDocument, "AddProductDocument", "Document added"},
    {event_type::DownloadProductDocument, "DownloadProductDocument", "Document downloaded"},
    {event_type::EditProductDocument, "EditProductDocument", "Document edited"},
    {event_type::DeleteProductDocument, "DeleteProductDocument", "Document deleted"},
    {event_type::PublishEngine, "PublishEngine", "Service published"},
    {event_type::CancelPublish, "CancelPublish", "Service publishing canceled"},
    {event_type::UpdateEngine, "UpdateEngine", "Service updated"},
    {event_type::EditEngine, "EditEngine", "Service edited"},
    {event_type::EditEngineVersion, "EditEngineVersion", "Service version edited"},
    {event_type::ServiceActivated, "ServiceActivated", "Service activated"},
    {event_type::ServiceDeactivated, "ServiceDeactivated", "Service deactivated"},
    {event_type::CompareEngine, "CompareEngine", "Service versions compared"},
    {event_type::RestoreEngine, "RestoreEngine", "Service version restored"},
    {event_type::DownloadEngine, "DownloadEngine", "Service downloaded"},
    {event_type::DeploymentRequest, "DeploymentRequest", "Deployment request made for a service version"},
    {event_type::DeleteEngine, "DeleteEngine", "Service deleted"},
    {event_type::DeleteEngineVersion, "DeleteEngineVersion", "Service version deleted"},
    {event_type::RecompileNeuron, "RecompileNeuron", "Service version recompiled"},
    {event_type::ShellSubmission, "ShellSubmission", "Shell submission made"},
    {event_type::AddTransform, "AddTransform", "Transform added"},
    {event_type::UpdateTransform, "UpdateTransform", "Transform updated"},
    {event_type::DownloadTransform, "DownloadTransform", "Transform downloaded"},
    {event_type::DeleteTransform, "DeleteTransform", "Transform deleted"},
    {event_type::DownloadVersionOverview, "DownloadVersionOverview", "Version overview downloaded"},
    {event_type::DownloadAPICallHistory, "DownloadAPICallHistory", "API call history downloaded"},
    {event_type::DownloadEventViewer, "DownloadEventViewer", "Event viewer downloaded"},
    {event_type::DownloadServiceLibrary, "DownloadServiceLibrary", "Service library downloaded"},
    {event_type::UploadTestbed, "UploadTestbed", "Testbed uploaded"},
    {event_type::GenerateTestCase, "GenerateTestCase", "Test cases generated"},
    {event_type::AddTestCase, "AddTestCase", "Test cases added to a testbed"},
    {event_type::AddTestResult, "AddTestResult", "Test result uploaded"},
    {event_type::TestRunStarted, "TestRunStarted", "Testbed run started"},
    {event_type::TestCasesExecuted, "TestCasesExecuted", "Test cases executed"},
    {event_type::TestResultCompare, "TestResultCompare", "Test results compared"},
    {event_type::TestResultAggregate, "TestResultAggregate", "Test results aggregated"},
    {event_type::APICallHistoryDataRetentionSuccess, "APICallHistoryDataRetentionSuccess",
     "API call history retention job succeeded"},
    {event_type::APICallHistoryDataRetentionFailed, "APICallHistoryDataRetentionFailed",
     "API call history retention job failed"},
    {event_type::EventsDataRetentionSucccess, "EventsDataRetentionSucccess", "Event data retention job succeeded"},
    {event_type::EventsDataRetentionFailed, "EventsDataRetentionFailed", "Event data retention job failed"},
};

inline constexpr std::size_t event_row_count = std::extent_v<decltype(event_rows)>;

constexpr bool event_rows_in_order() noexcept {
    for (std::size_t i = 0; i < event_row_count; ++i)
        if (static_cast<std::size_t>(event_rows[i].value) != i) return false;
    return true;
}
static_assert(event_row_count == event_type_count && event_rows_in_order(),
              "event_rows: one row per event_type, in enumerator order");

template <std::string_view event_row::*Column>
constexpr std::array<std::string_view, event_type_count> event_column() noexcept {
    std::array<std::string_view, event_type_count> out{};
    for (std::size_t i = 0; i < event_type_count; ++i) out[i] = event_rows[i].*Column;
    return out;
}

template <>
struct enum_names<event_type> {
    static constexpr std::array<std::string_view, event_type_count> values = event_column<&event_row::name>();
};

// The meaning column, indexed by the enumerator's value.
inline constexpr std::array<std::string_view, event_type_count> event_meanings = event_column<&event_row::meaning>();

// The names as an array, for the lookups below.
inline constexpr const std::array<std::string_view, event_type_count>& event_names = enum_names<event_type>::values;

static_assert(static_cast<std::size_t>(event_type::EventsDataRetentionFailed) + 1 == event_type_count,
              "event_rows and event_type must list the same 53 types");

constexpr std::size_t compute_max_event_name_length() noexcept {
    std::size_t n = 0;
    for (const auto name : event_names) n = name.size() > n ? name.size() : n;
    return n;
}

// Input outside [min, max] length cannot be a known name: rejected before hashing.
inline constexpr std::size_t max_event_name_length = compute_max_event_name_length();

constexpr std::size_t compute_min_event_name_length() noexcept {
    std::size_t n = event_names[0].size();
    for (const auto name : event_names) n = name.size() < n ? name.size() : n;
    return n;
}

inline constexpr std::size_t min_event_name_length = compute_min_event_name_length();

// Name -> enum through a perfect hash: length, first byte and middle byte
// together tell the 53 names apart, and event_slot_multiplier sends them to 53
// distinct slots of 128 (the top event_slot_bits bits of a 32-bit product).
// One multiply, one comparison, no allocation. Precondition:
// min_event_name_length <= s.size().
//
// The multiplier comes from scripts/event-hash-search.py, which reads the
// names from the table above and tries odd multipliers until one leaves no
// collision (the static_assert below refuses one that does). A 54th event is
// one table row (with its enumerator and meaning) plus one command, which
// keeps these constants when they still fit and rewrites them when not:
//     python3 scripts/event-hash-search.py --write
// (add --bits 8 for 256 slots should 128 ever be too few to search quickly).
inline constexpr unsigned event_slot_bits = 7;
inline constexpr std::uint32_t event_slot_multiplier = 0xC28B78B3u;
inline constexpr std::size_t event_slot_count = std::size_t{1} << event_slot_bits;

constexpr std::size_t event_slot(std::string_view s) noexcept {
    const auto key = static_cast<std::uint32_t>(s.size()) << 16 |
                     static_cast<std::uint32_t>(static_cast<unsigned char>(s[0])) << 8 |
                     static_cast<std::uint32_t>(static_cast<unsigned char>(s[s.size() / 2]));
    return static_cast<std::size_t>(static_cast<std::uint32_t>(key * event_slot_multiplier) >> (32 - event_slot_bits));
}

struct event_slot_table {
    std::array<std::uint8_t, event_slot_count> slots{};  // 1 + the enumerator's value, 0 when empty
    bool perfect = true;
};

constexpr event_slot_table build_event_slots() noexcept {
    event_slot_table t;
    for (std::size_t i = 0; i < event_type_count; ++i) {
        const std::size_t s = event_slot(event_names[i]);
        if (t.slots[s] != 0) t.perfect = false;
        t.slots[s] = static_cast<std::uint8_t>(i + 1);
    }
    return t;
}

inline constexpr event_slot_table event_slots = build_event_slots();
static_assert(event_slots.perfect,
              "the event name hash must be collision-free: run python3 scripts/event-hash-search.py --write");

// Only this many leading bytes of an unknown name are compared when looking
// for a suggestion, so a huge input costs no more than a long name.
inline constexpr std::size_t suggestion_input_limit = 64;

}  // namespace detail

// The meaning column of spec 6.1, e.g. "Folder created" for AddProduct.
[[nodiscard]] constexpr std::string_view meaning(event_type e) noexcept {
    const auto i = static_cast<std::size_t>(e);
    return i < event_type_count ? detail::event_meanings[i] : std::string_view{};
}

namespace detail {
constexpr std::array<event_type, event_type_count> build_all_event_types() noexcept {
    std::array<event_type, event_type_count> all{};
    for (std::size_t i = 0; i < event_type_count; ++i) all[i] = static_cast<event_type>(i);
    return all;
}
inline constexpr std::array<event_type, event_type_count> all_event_types_value = build_all_event_types();
}  // namespace detail

// All 53 types in the order of spec 6.1.
[[nodiscard]] constexpr const std::array<event_type, event_type_count>& all_event_types() noexcept {
    return detail::all_event_types_value;
}

// The type named exactly (case-sensitively) `name`, or nullopt. No allocation.
[[nodiscard]] constexpr std::optional<event_type> find_event_type(std::string_view name) noexcept {
    if (name.size() > detail::max_event_name_length || name.size() < detail::min_event_name_length) return std::nullopt;
    const std::uint8_t slot = detail::event_slots.slots[detail::event_slot(name)];
    if (slot == 0) return std::nullopt;
    const auto index = static_cast<std::size_t>(slot - 1);
    if (detail::event_names[index] != name) return std::nullopt;
    return static_cast<event_type>(index);
}

// H3: the known type closest to `name`: a case-insensitive match first, else the
// smallest edit distance ignoring case, ties broken by the distance with case,
// then by the spec's order. Only the first 64 bytes of `name` are considered.
[[nodiscard]] KEYHOOK_INLINE event_type closest_event_type(std::string_view name) noexcept;

// H5, H3: case-sensitive. An unknown name gives errc::unknown_event (empty path:
// callers know where the name came from) with the closest known name suggested:
//   unknown event type "addproduct"; did you mean "AddProduct"?
[[nodiscard]] KEYHOOK_INLINE result<event_type> try_parse_event_type(std::string_view name);

[[nodiscard]] KEYHOOK_INLINE event_type parse_event_type(std::string_view name);

namespace detail {
// H3: an event_type cast from an integer outside the 53 (errc::unknown_event
// at `path`, the value named), or nothing for one of the 53. Every writer and
// validator that takes an event_type from a host asks this.
[[nodiscard]] KEYHOOK_INLINE std::optional<error> event_value_error(event_type e, std::string path);
}  // namespace detail

// JSON form: the wire name. Templates on the JSON type (found by ADL), as
// nlohmann's serializer expects. Reading refuses a non-string (errc::wrong_type)
// and an unknown name (errc::unknown_event) with keyhook::exception; writing
// refuses a value outside the 53 the same way (it has no wire name).
template <class Json>
void to_json(Json& j, event_type e) {
    if (auto bad = detail::event_value_error(e, {})) throw exception(std::move(*bad));
    j = std::string(to_string(e));
}
template <class Json>
void from_json(const Json& j, event_type& e) {
    if (!j.is_string()) throw exception(detail::wrong_type({}, "a string", j));
    e = parse_event_type(j.template get_ref<const typename Json::string_t&>());
}

}  // namespace keyhook

// std::hash<keyhook::event_type> is the standard library's hash for enumerations.

#if KEYHOOK_DEFINITIONS
#include "keyhook/impl/events.ipp"
#endif
