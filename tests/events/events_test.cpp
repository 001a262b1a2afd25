#include "keyhook/events.hpp"
#include "keyhook/notification.hpp"

#include "keyhook/detail/ascii.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <set>
#include <sstream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

using keyhook::errc;
using keyhook::event_type;
using keyhook::parse_event_type;
using keyhook::try_parse_event_type;

namespace {
// Spec 6.1, row by row (name, meaning), in the spec's order.
const std::vector<std::pair<std::string, std::string>>& spec_rows() {
    static const std::vector<std::pair<std::string, std::string>> rows{
        {"PlatformLogin", "Login recorded"},
        {"CALogin", "Assistant login recorded"},
        {"NotificationPlatformReleaseDismissed", "Notification of new release dismissed"},
        {"AddProduct", "Folder created"},
        {"UploadProduct", "Folder uploaded"},
        {"EditProduct", "Folder edited"},
        {"CloneProduct", "Folder cloned"},
        {"DownloadProduct", "Folder downloaded"},
        {"DeleteProduct", "Folder deleted"},
        {"AddPermission", "Permissions applied to folder"},
        {"RemovePermission", "Permissions removed from folder"},
        {"ModifyPermission", "Permissions modified for folder"},
        {"AddSection", "Document section added"},
        {"DeleteSection", "Document section deleted"},
        {"AddProductDocument", "Document added"},
        {"DownloadProductDocument", "Document downloaded"},
        {"EditProductDocument", "Document edited"},
        {"DeleteProductDocument", "Document deleted"},
        {"PublishEngine", "Service published"},
        {"CancelPublish", "Service publishing canceled"},
        {"UpdateEngine", "Service updated"},
        {"EditEngine", "Service edited"},
        {"EditEngineVersion", "Service version edited"},
        {"ServiceActivated", "Service activated"},
        {"ServiceDeactivated", "Service deactivated"},
        {"CompareEngine", "Service versions compared"},
        {"RestoreEngine", "Service version restored"},
        {"DownloadEngine", "Service downloaded"},
        {"DeploymentRequest", "Deployment request made for a service version"},
        {"DeleteEngine", "Service deleted"},
        {"DeleteEngineVersion", "Service version deleted"},
        {"RecompileNeuron", "Service version recompiled"},
        {"ShellSubmission", "Shell submission made"},
        {"AddTransform", "Transform added"},
        {"UpdateTransform", "Transform updated"},
        {"DownloadTransform", "Transform downloaded"},
        {"DeleteTransform", "Transform deleted"},
        {"DownloadVersionOverview", "Version overview downloaded"},
        {"DownloadAPICallHistory", "API call history downloaded"},
        {"DownloadEventViewer", "Event viewer downloaded"},
        {"DownloadServiceLibrary", "Service library downloaded"},
        {"UploadTestbed", "Testbed uploaded"},
        {"GenerateTestCase", "Test cases generated"},
        {"AddTestCase", "Test cases added to a testbed"},
        {"AddTestResult", "Test result uploaded"},
        {"TestRunStarted", "Testbed run started"},
        {"TestCasesExecuted", "Test cases executed"},
        {"TestResultCompare", "Test results compared"},
        {"TestResultAggregate", "Test results aggregated"},
        {"APICallHistoryDataRetentionSuccess", "API call history retention job succeeded"},
        {"APICallHistoryDataRetentionFailed", "API call history retention job failed"},
        {"EventsDataRetentionSucccess", "Event data retention job succeeded"},
        {"EventsDataRetentionFailed", "Event data retention job failed"},
    };
    return rows;
}

std::string suggestion_for(const std::string& name) {
    const auto r = try_parse_event_type(name);
    REQUIRE_FALSE(r.has_value());
    return r.error().message;
}
}  // namespace

TEST_CASE("H5: 53 event types, names and meanings exactly as spec 6.1, in its order", "[H5][events]") {
    const auto& all = keyhook::all_event_types();
    REQUIRE(all.size() == 53);
    REQUIRE(spec_rows().size() == 53);
    for (std::size_t i = 0; i < all.size(); ++i) {
        INFO(i);
        CHECK(static_cast<std::size_t>(all[i]) == i);
        CHECK(keyhook::to_string(all[i]) == spec_rows()[i].first);
        CHECK(keyhook::meaning(all[i]) == spec_rows()[i].second);
    }
}

TEST_CASE("H5: enumerators carry the wire names", "[H5][events]") {
    CHECK(keyhook::to_string(event_type::PlatformLogin) == "PlatformLogin");
    CHECK(keyhook::to_string(event_type::AddProduct) == "AddProduct");
    CHECK(keyhook::meaning(event_type::AddProduct) == "Folder created");
    CHECK(keyhook::to_string(event_type::EventsDataRetentionSucccess) == "EventsDataRetentionSucccess");
    CHECK(keyhook::to_string(event_type::EventsDataRetentionFailed) == "EventsDataRetentionFailed");
    static_assert(keyhook::to_string(event_type::CALogin) == "CALogin");
    static_assert(keyhook::all_event_types()[3] == event_type::AddProduct);
}

TEST_CASE("H5: every name parses back to its type, and only exactly", "[H5][events]") {
    for (const auto& row : spec_rows()) {
        INFO(row.first);
        const auto e = parse_event_type(row.first);
        CHECK(keyhook::to_string(e) == row.first);
        CHECK(keyhook::find_event_type(row.first) == e);
        // One byte off on either end, or a different case, is not the name.
        CHECK_FALSE(keyhook::find_event_type(row.first + " "));
        CHECK_FALSE(keyhook::find_event_type(" " + row.first));
        CHECK_FALSE(keyhook::find_event_type(row.first.substr(0, row.first.size() - 1)));
        std::string lower = row.first;
        for (auto& c : lower) c = keyhook::detail::ascii_lower(c);
        CHECK_FALSE(keyhook::find_event_type(lower));
        CHECK_FALSE(try_parse_event_type(lower).has_value());
    }
    CHECK_FALSE(keyhook::find_event_type(""));
    // Below the shortest name (CALogin, 7 bytes) nothing is found.
    for (std::size_t n = 0; n < 7; ++n) CHECK_FALSE(keyhook::find_event_type(std::string("CALogin").substr(0, n)));
    CHECK(keyhook::detail::min_event_name_length == 7);
    // Same length, same first and middle bytes as a name, other bytes changed:
    // the full comparison still rejects it.
    for (const auto& row : spec_rows()) {
        std::string changed = row.first;
        changed.back() = changed.back() == 'x' ? 'y' : 'x';
        CHECK_FALSE(keyhook::find_event_type(changed));
    }
    std::string with_nul("AddProduct\0", 11);
    CHECK_FALSE(keyhook::find_event_type(with_nul));
}

TEST_CASE("H5: the three-c spelling is the only one", "[H5][events]") {
    CHECK(parse_event_type("EventsDataRetentionSucccess") == event_type::EventsDataRetentionSucccess);
    CHECK_FALSE(keyhook::find_event_type("EventsDataRetentionSuccess"));
    CHECK(suggestion_for("EventsDataRetentionSuccess") ==
          "unknown event type \"EventsDataRetentionSuccess\"; did you mean \"EventsDataRetentionSucccess\"?");
    // The API call history job keeps the usual spelling.
    CHECK(parse_event_type("APICallHistoryDataRetentionSuccess") == event_type::APICallHistoryDataRetentionSuccess);
    CHECK_FALSE(keyhook::find_event_type("APICallHistoryDataRetentionSucccess"));
}

TEST_CASE("H5: names are distinct and the longest fits the lookup bound", "[H5][events]") {
    std::set<std::string> names;
    std::size_t longest = 0;
    for (auto e : keyhook::all_event_types()) {
        names.insert(std::string(keyhook::to_string(e)));
        longest = std::max(longest, keyhook::to_string(e).size());
    }
    CHECK(names.size() == 53);
    CHECK(longest == keyhook::detail::max_event_name_length);
    CHECK(longest == std::string("NotificationPlatformReleaseDismissed").size());
}

TEST_CASE("H3: an unknown name suggests the closest known one", "[H3][H5][events]") {
    CHECK(suggestion_for("addproduct") == "unknown event type \"addproduct\"; did you mean \"AddProduct\"?");
    CHECK(suggestion_for("AddProdcut") == "unknown event type \"AddProdcut\"; did you mean \"AddProduct\"?");
    CHECK(suggestion_for("PlatformLogn") == "unknown event type \"PlatformLogn\"; did you mean \"PlatformLogin\"?");
    CHECK(suggestion_for("calogin") == "unknown event type \"calogin\"; did you mean \"CALogin\"?");
    CHECK(suggestion_for("DeleteEngineVersions") ==
          "unknown event type \"DeleteEngineVersions\"; did you mean \"DeleteEngineVersion\"?");
    CHECK(suggestion_for("") == "unknown event type \"\"; did you mean \"CALogin\"?");

    const auto r = try_parse_event_type("AddProducts");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == keyhook::errc::unknown_event);
    CHECK(r.error().path.empty());
    try {
        (void)parse_event_type("AddProducts");
        FAIL("expected an exception");
    } catch (const keyhook::exception& e) {
        CHECK(e.code() == keyhook::errc::unknown_event);
        CHECK(std::string(e.what()) ==
              "[keyhook.unknown_event] unknown event type \"AddProducts\"; did you mean \"AddProduct\"?");
    }
}

TEST_CASE("H3: a case-insensitive match wins over any edit distance with case", "[H3][events]") {
    // "EDITENGINE" differs from EditEngine in 8 letters with case, but only in
    // case; no other name is as close once case is ignored.
    CHECK(keyhook::closest_event_type("EDITENGINE") == event_type::EditEngine);
    CHECK(keyhook::closest_event_type("testrunstarted") == event_type::TestRunStarted);
    // Otherwise the smallest edit distance, ignoring case.
    CHECK(keyhook::closest_event_type("deleteengine") == event_type::DeleteEngine);
    CHECK(keyhook::closest_event_type("DeleteEngin") == event_type::DeleteEngine);
}

TEST_CASE("H3: huge unknown names cost bounded work and are quoted shortened", "[H3][events]") {
    std::string huge(1 << 20, 'x');
    huge.replace(0, 10, "AddProduct");
    const auto message = suggestion_for(huge);
    // The quote stops after 64 bytes; the suggestion comes from the first 64.
    CHECK(message.size() < 200);
    CHECK(message.find("\"...") != std::string::npos);
    CHECK(message.find("did you mean \"") != std::string::npos);
    CHECK(keyhook::closest_event_type(huge) == keyhook::closest_event_type(huge.substr(0, 64)));

    // One byte over the longest name is rejected without a table lookup.
    std::string longer = "NotificationPlatformReleaseDismissed";
    CHECK(keyhook::find_event_type(longer) == event_type::NotificationPlatformReleaseDismissed);
    CHECK_FALSE(keyhook::find_event_type(longer + "d"));
    CHECK(suggestion_for(longer + "d") ==
          "unknown event type \"NotificationPlatformReleaseDismissedd\"; did you mean "
          "\"NotificationPlatformReleaseDismissed\"?");
}

TEST_CASE("H3: control characters in an unknown name are escaped in the message", "[H3][events]") {
    CHECK(suggestion_for("Add\nProduct\"") ==
          "unknown event type \"Add\\x0aProduct\\\"\"; did you mean \"AddProduct\"?");
}

TEST_CASE("H5: event_type is printable, hashable and converts to JSON", "[H5][events]") {
    std::ostringstream os;
    os << event_type::CloneProduct << ' ' << event_type::EventsDataRetentionSucccess;
    CHECK(os.str() == "CloneProduct EventsDataRetentionSucccess");

    std::unordered_set<event_type> seen(keyhook::all_event_types().begin(), keyhook::all_event_types().end());
    CHECK(seen.size() == 53);
    CHECK(seen.count(event_type::AddTestCase) == 1);

    nlohmann::json j = event_type::DownloadAPICallHistory;
    CHECK(j == "DownloadAPICallHistory");
    nlohmann::ordered_json oj = event_type::UploadTestbed;
    CHECK(oj.dump() == "\"UploadTestbed\"");
}

TEST_CASE("H5: an event type reads back from its JSON form, case-sensitively", "[H5][H3][events]") {
    CHECK(nlohmann::json("AddProduct").get<event_type>() == event_type::AddProduct);
    CHECK(nlohmann::ordered_json(event_type::UploadTestbed).get<event_type>() == event_type::UploadTestbed);
    const auto code_of = [](const nlohmann::json& j) {
        try {
            (void)j.get<event_type>();
        } catch (const keyhook::exception& e) {
            return e.code();
        }
        return keyhook::errc::invalid_value;
    };
    CHECK(code_of(nlohmann::json("addproduct")) == keyhook::errc::unknown_event);
    CHECK(code_of(nlohmann::json(3)) == keyhook::errc::wrong_type);
}

// Regression test: an event type outside the 53 (H5) must not be written.
TEST_CASE("H5, H6: no JSON writer gives an event type outside the 53 a name", "[H3][H5][H6][events]") {
    // to_string says "unknown" for such a value (printing, P1), but a JSON
    // document with "unknown" in it would not read back: writing refuses it.
    for (const int v : {53, 64, 255}) {
        INFO(v);
        const auto bad = static_cast<keyhook::event_type>(v);
        nlohmann::json j;
        try {
            j = bad;
            FAIL("an event type value outside the 53 was written");
        } catch (const keyhook::exception& e) {
            CHECK(e.code() == errc::unknown_event);
            CHECK(std::string(e.what()).find(std::to_string(v)) != std::string::npos);
        }
        // A filter holding one, as a host might write it out itself.
        const std::set<keyhook::event_type> filter{keyhook::event_type::AddProduct, bad};
        CHECK_THROWS_AS(nlohmann::json(filter), keyhook::exception);
        keyhook::notification n;
        n.user_action = bad;
        try {
            nlohmann::ordered_json body = n;
            FAIL("a notification with an event type value outside the 53 was written");
        } catch (const keyhook::exception& e) {
            CHECK(e.code() == errc::unknown_event);
            CHECK(e.path() == "UserAction");
        }
    }
    // The other side: the first and the last of the 53 are written by name.
    CHECK(nlohmann::json(keyhook::event_type::PlatformLogin) == "PlatformLogin");
    CHECK(nlohmann::json(keyhook::event_type::EventsDataRetentionFailed) == "EventsDataRetentionFailed");
    keyhook::notification n;
    n.user_action = keyhook::event_type::EventsDataRetentionFailed;
    CHECK(nlohmann::ordered_json(n)["UserAction"] == "EventsDataRetentionFailed");
}
