#pragma once
// keyhook: definitions of lifecycle.hpp.

#include <ostream>

#include "keyhook/lifecycle.hpp"

namespace keyhook {

KEYHOOK_INLINE bool key_update::is_equal(const key_update& a, const key_update& b) {
    return a.name == b.name && a.description == b.description && a.active_from == b.active_from &&
           a.expire_at == b.expire_at && a.groups == b.groups;
}

KEYHOOK_INLINE std::ostream& rotated_key::print_to(std::ostream& os, const rotated_key& r) {
    return os << "rotated_key{old=" << r.old_record << ", new=" << r.record << ", " << r.key << '}';
}

KEYHOOK_INLINE std::ostream& deletion_receipt::print_to(std::ostream& os, const deletion_receipt& r) {
    return os << "deleted{id=" << r.id << ", name=" << detail::quote_input(r.name, 128) << '}';
}

namespace detail::keys {
// K8's refusal of an unconfirmed deletion.
inline error not_confirmed(const key_id& id) {
    return error{
        errc::not_confirmed, "confirmation",
        "deleting key " + quote_input(id.str()) + " cannot be undone and needs deletion_confirmation::confirmed"};
}
}  // namespace detail::keys

KEYHOOK_INLINE api_key deactivate_key(const api_key& key, timestamp now) {
    if (key.status == key_status::revoked) return key;
    api_key out = key;
    out.status = key_status::revoked;
    out.updated_at = now;
    return out;
}

KEYHOOK_INLINE std::vector<error> key_update_problems(const api_key& key, const key_update& change) {
    std::vector<error> errors;
    detail::keys::check_text(member::name, change.name ? *change.name : key.name, 1, max_name_length,
                             errc::invalid_name, errors);
    const std::string_view description =
        change.description ? std::string_view(*change.description)
                           : (key.description ? std::string_view(*key.description) : std::string_view());
    detail::keys::check_text(member::description, description, 0, max_description_length, errc::invalid_name, errors);
    detail::keys::check_period(change.active_from.value_or(key.active_from), change.expire_at.value_or(key.expire_at),
                               errors);
    detail::keys::check_groups(change.groups ? *change.groups : key.groups, errors);
    return errors;
}

KEYHOOK_INLINE result<api_key> try_update_key(const api_key& key, const key_update& change, timestamp now) {
    auto errors = key_update_problems(key, change);
    if (!errors.empty()) return std::move(errors.front());
    api_key out = key;
    if (change.name) out.name = std::string(detail::keys::trim(*change.name));
    if (change.description) {
        const auto d = detail::keys::trim(*change.description);
        if (d.empty())
            out.description.reset();
        else
            out.description = std::string(d);
    }
    if (change.active_from) out.active_from = *change.active_from;
    if (change.expire_at) out.expire_at = *change.expire_at;
    if (change.groups) out.groups = *change.groups;
    const auto by_clock = clock_status(out.active_from, out.expire_at, now);
    if (key.status != key_status::revoked || by_clock == key_status::active) out.status = by_clock;
    out.updated_at = now;
    return out;
}

KEYHOOK_INLINE api_key update_key(const api_key& key, const key_update& change, timestamp now) {
    return try_update_key(key, change, now).value();
}

KEYHOOK_INLINE result<key_update_report> try_update_key_reported(const api_key& key, const key_update& change,
                                                                 timestamp now) {
    auto updated = try_update_key(key, change, now);
    if (!updated) return updated.error();
    key_update_report out;
    out.before = status_at(key, now);
    out.after = status_at(*updated, now);
    out.record = std::move(*updated);
    return out;
}

KEYHOOK_INLINE result<deletion_receipt> try_delete_key(const api_key& key, deletion_confirmation confirmation) {
    if (confirmation != deletion_confirmation::confirmed) return detail::keys::not_confirmed(key.id);
    return deletion_receipt{key.id, key.name};
}

KEYHOOK_INLINE deletion_receipt delete_key(const api_key& key, deletion_confirmation confirmation) {
    return try_delete_key(key, confirmation).value();
}

KEYHOOK_INLINE result<std::vector<api_key>> try_delete_key(const std::vector<api_key>& keys, const key_id& id,
                                                           deletion_confirmation confirmation) {
    if (confirmation != deletion_confirmation::confirmed) return detail::keys::not_confirmed(id);
    std::vector<api_key> out;
    out.reserve(keys.size());
    bool found = false;
    for (const auto& k : keys) {
        if (k.id == id && !found)
            found = true;
        else
            out.push_back(k);
    }
    if (!found) return error{errc::invalid_value, "id", "no key has the id " + detail::quote_input(id.str())};
    return out;
}

KEYHOOK_INLINE std::vector<api_key> delete_key(const std::vector<api_key>& keys, const key_id& id,
                                               deletion_confirmation confirmation) {
    return try_delete_key(keys, id, confirmation).value();
}

KEYHOOK_INLINE api_key record_use(const api_key& key, timestamp now) {
    api_key out = key;
    if (!out.last_used_at || *out.last_used_at < now) out.last_used_at = now;
    return out;
}

}  // namespace keyhook

namespace keyhook::detail::keys {

KEYHOOK_INLINE result<rotated_key> rotate(const api_key& key, rotation_policy policy, random_ref random, timestamp now,
                                          const key_author& author) {
    const auto length = difference_saturating(key.expire_at, key.active_from);  // no overflow at the ends
    if (length <= microseconds::zero())
        return error{errc::invalid_period, std::string(member::expire_at),
                     "cannot rotate a key whose period is empty or inverted (activeFrom " +
                         format_timestamp(key.active_from) + ", expireAt " + format_timestamp(key.expire_at) + ")"};
    const timestamp start = policy == rotation_policy::from_now ? now : key.expire_at;
    if (start < min_timestamp)
        return error{errc::invalid_period, std::string(member::active_from),
                     "the rotated period would start before the year 0001"};
    if (start > max_timestamp || max_timestamp - start < length)
        return error{errc::invalid_period, std::string(member::expire_at),
                     "the rotated period would end after the year 9999"};
    secret plaintext;
    std::string id;
    if (auto e = draw_key_and_id(random, nullptr, plaintext, id)) return std::move(*e);
    key_author who{key.user_id, author.created_by};
    if (author.user_id) who.user_id = author.user_id;
    auto record = new_record(std::move(id), plaintext, key.name, key.description.value_or(std::string()), key.groups,
                             start, add_saturating(start, length), who, now);
    return rotated_key{key, std::move(record), one_time_secret(std::move(plaintext))};
}

}  // namespace keyhook::detail::keys
