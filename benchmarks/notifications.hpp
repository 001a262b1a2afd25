// Notifications shared by the body and dispatch benchmarks.
#pragma once

#include <string>
#include <vector>

#include "generator.hpp"
#include "keyhook/notification.hpp"

namespace keyhook_bench {

// A handful of realistic events (one with non-ASCII names, one with characters
// that need escaping), used in turn so that no single one is all that is measured.
inline std::vector<keyhook::notification> make_notifications() {
    rng r(default_seed);
    const auto uuid = [&r] {
        std::string s;
        append_uuid(s, r);
        return s;
    };
    const auto at = [&r] {
        std::string s;
        append_timestamp(s, r);
        return keyhook::parse_timestamp(s);
    };
    std::vector<keyhook::notification> v;
    v.push_back({"Pricing Models 2024", "Rate Calculator", uuid(), keyhook::event_type::PublishEngine,
                 std::string(keyhook::audit_type_product_engine), "rate-calculator-v12.xlsx", uuid(), "acme-insurance",
                 at()});
    v.push_back({"Underwriting", "", uuid(), keyhook::event_type::AddProduct, std::string(keyhook::audit_type_product),
                 "", "", "acme-insurance", at()});
    v.push_back({"Tarifs \xC3\xA9t\xC3\xA9 M\xC3\xBCnchen", "Pr\xC3\xA4mienrechner", uuid(),
                 keyhook::event_type::UpdateEngine, std::string(keyhook::audit_type_product_engine), "praemien_v3.xlsx",
                 uuid(), "versicherung-sued", at()});
    v.push_back({"Claims \"Q3\" review", "Loss\\Ratio\tModel", uuid(), keyhook::event_type::DownloadEngine,
                 std::string(keyhook::audit_type_product_engine), "loss ratio (final).xlsx", uuid(), "northwind-re",
                 at()});
    return v;
}

inline const std::vector<keyhook::notification>& notifications() {
    static const auto v = make_notifications();
    return v;
}

}  // namespace keyhook_bench
