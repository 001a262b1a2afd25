#pragma once
// keyhook: definitions of key_index.hpp.

#include "keyhook/key_index.hpp"

namespace keyhook {

KEYHOOK_INLINE void key_index::reserve(std::size_t n) {
    entries_.reserve(n);
    if (capacity_for(n) > by_key_.size()) rehash(capacity_for(n));
}

KEYHOOK_INLINE result<std::size_t> key_index::try_add(std::string_view tenant, const api_key& record, const secret& key,
                                                      const permission_policy& policy) {
    if (key.empty()) return error{errc::invalid_key, "key", "an indexed key must not be empty"};
    if (entries_.size() >= max_entries || ids_.chunks.size() >= std::numeric_limits<std::uint32_t>::max())
        return error{errc::limit_exceeded, "key", "the index is full"};
    const std::string_view id = record.id.str();
    if (find_id_slot(id) != npos)
        return error{errc::invalid_value, "id", "a key with the id " + detail::quote_input(id) + " is already indexed"};
    const auto digest = hash(key.reveal());
    if (find_key_slot(digest) != npos)
        return error{errc::invalid_key, "key",
                     "the key of " + detail::quote_input(id) + " is already indexed for another record"};
    if (capacity_for(entries_.size() + 1) > by_key_.size()) rehash(capacity_for(entries_.size() + 1));
    entry e;
    e.digest = digest;
    fill(e, tenant, record, policy);
    entries_.push_back(e);
    try {
        store_id(entries_.back(), id);
    } catch (...) {
        entries_.pop_back();
        throw;
    }
    const auto position = static_cast<std::uint32_t>(entries_.size() - 1);
    place(by_key_, key_probe(digest), position);
    place(by_id_, id_probe(id), position);
    return entries_.size();
}

KEYHOOK_INLINE bool key_index::update(std::string_view tenant, const api_key& record, const permission_policy& policy) {
    const auto s = find_id_slot(record.id.str());
    if (s == npos) return false;
    fill(entries_[by_id_[s] & position_mask], tenant, record, policy);
    return true;
}

KEYHOOK_INLINE bool key_index::remove(const key_id& id) {
    const auto s = find_id_slot(id.str());
    if (s == npos) return false;
    const std::uint32_t position = by_id_[s] & position_mask;
    erase_slot(by_id_, s, [this](std::uint32_t p) { return id_probe(id_of(entries_[p])).home; });
    erase_slot(by_key_, find_key_slot(entries_[position].digest),
               [this](std::uint32_t p) { return key_probe(entries_[p].digest).home; });
    const std::size_t freed = stored_size(id.str().size());
    ids_.live -= freed;
    ids_.dead += freed;
    const auto last = static_cast<std::uint32_t>(entries_.size() - 1);
    if (position != last) {
        // Move the last entry into the hole and repoint its slots.
        repoint(by_key_, key_probe(entries_[last].digest).home, last, position);
        repoint(by_id_, id_probe(id_of(entries_[last])).home, last, position);
        entries_[position] = entries_[last];
    }
    entries_.pop_back();
    shrink();
    return true;
}

KEYHOOK_INLINE void key_index::rehash(std::size_t capacity) {
    std::vector<std::uint32_t> keys(capacity, free_slot), ids(capacity, free_slot);
    by_key_.swap(keys);
    by_id_.swap(ids);
    for (std::size_t p = 0; p < entries_.size(); ++p) {
        place(by_key_, key_probe(entries_[p].digest), static_cast<std::uint32_t>(p));
        place(by_id_, id_probe(id_of(entries_[p])), static_cast<std::uint32_t>(p));
    }
}

KEYHOOK_INLINE void key_index::shrink() noexcept {
    try {
        if (entries_.empty()) {
            *this = key_index(hashing_key());
            return;
        }
        if (by_key_.size() > 16 && by_key_.size() >= 8 * entries_.size()) rehash(capacity_for(entries_.size()));
        if (entries_.capacity() >= 4 * entries_.size()) entries_.shrink_to_fit();
        if (ids_.dead > ids_.live && ids_.dead >= max_chunk) compact_ids();
    } catch (...) {
    }
}

KEYHOOK_INLINE void key_index::compact_ids() {
    id_chunks fresh;
    std::vector<std::pair<std::uint32_t, std::uint16_t>> at(entries_.size());
    for (std::size_t p = 0; p < entries_.size(); ++p) at[p] = fresh.store(id_of(entries_[p]));
    for (std::size_t p = 0; p < entries_.size(); ++p) std::tie(entries_[p].id_chunk_, entries_[p].id_offset_) = at[p];
    ids_ = std::move(fresh);
}

KEYHOOK_INLINE void key_index::fill(entry& e, std::string_view tenant, const api_key& record,
                                    const permission_policy& policy) {
    e.tenant = intern_tenant(tenant);
    e.permissions = intern_permissions(merge_permissions(record.groups, policy));
    e.revoked = record.status == key_status::revoked;
    e.active_from = record.active_from;
    e.expire_at = record.expire_at;
}

KEYHOOK_INLINE std::uint32_t key_index::intern_tenant(std::string_view tenant) {
    const auto it = tenant_ids_.find(tenant);
    if (it != tenant_ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(tenants_.size());
    tenants_.emplace_back(tenant);
    tenant_ids_.emplace(std::string(tenant), id);
    return id;
}

KEYHOOK_INLINE std::uint32_t key_index::intern_permissions(key_permissions p) {
    const auto it = permission_ids_.find(p);
    if (it != permission_ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(permission_sets_.size());
    std::uint64_t bits = 0;
    for (const auto& family : p.families()) {
        const std::string_view name = family.name();
        std::size_t i = 0;
        while (i < family_names_.size() && family_names_[i] != name) ++i;
        if (i == family_names_.size()) {
            if (i == 64) {
                family_overflow_ = true;  // from now on allows() searches the sets
                continue;
            }
            family_names_.emplace_back(name);
        }
        bits |= std::uint64_t{1} << i;
    }
    family_bits_.reserve(permission_sets_.size() + 1);
    permission_sets_.push_back(p);
    family_bits_.push_back(bits);
    permission_ids_.emplace(std::move(p), id);
    return id;
}

}  // namespace keyhook
