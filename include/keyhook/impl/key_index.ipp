#pragma once
// keyhook: definitions of key_index.hpp.

#include <algorithm>
#include <tuple>

#include "keyhook/key_index.hpp"

namespace keyhook {

namespace detail {

// Capacity for `needed` elements, grown as push_back grows it. Reserving
// exactly size() + 1 before each addition (so that the addition cannot
// throw) reallocated on every one: n keys added one by one copied O(n^2)
// entries (20,000 keys took 11 s in a Debug build, 0.5 ms a key).
template <class Vector>
void reserve_at_least(Vector& v, std::size_t needed) {
    if (needed <= v.capacity()) return;
    const std::size_t doubled = v.capacity() <= v.max_size() / 2 ? 2 * v.capacity() : v.max_size();
    v.reserve(std::max(needed, doubled));
}

}  // namespace detail

template <class D>
KEYHOOK_INLINE basic_key_index<D>::basic_key_index(const std::array<unsigned char, 16>& hashing_key) { set_hashing_key(hashing_key); }

template <class D>
KEYHOOK_INLINE basic_key_index<D>::basic_key_index(basic_key_index&& other) noexcept : k0_(other.k0_), k1_(other.k1_) { swap(other); }

template <class D>
KEYHOOK_INLINE basic_key_index<D>& basic_key_index<D>::operator=(basic_key_index&& other) noexcept {
    if (this != &other) {
        basic_key_index taken(std::move(other));
        swap(taken);
    }
    return *this;
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::swap(basic_key_index& o) noexcept {
    using std::swap;
    swap(k0_, o.k0_);
    swap(k1_, o.k1_);
    entries_.swap(o.entries_);
    by_key_.swap(o.by_key_);
    by_id_.swap(o.by_id_);
    swap(ids_.chunks, o.ids_.chunks);
    swap(ids_.open, o.ids_.open);
    swap(ids_.used, o.ids_.used);
    swap(ids_.live, o.ids_.live);
    swap(ids_.dead, o.ids_.dead);
    tenants_.swap(o.tenants_);
    tenant_ids_.swap(o.tenant_ids_);
    tenant_uses_.swap(o.tenant_uses_);
    free_tenants_.swap(o.free_tenants_);
    permission_sets_.swap(o.permission_sets_);
    permission_ids_.swap(o.permission_ids_);
    permission_uses_.swap(o.permission_uses_);
    free_permissions_.swap(o.free_permissions_);
    family_bits_.swap(o.family_bits_);
    family_names_.swap(o.family_names_);
    swap(family_overflow_, o.family_overflow_);
    digester_.swap(o.digester_);
    scheme_uses_.swap(o.scheme_uses_);
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::add(std::string_view tenant, const api_key& record, const secret& key,
                                   const permission_policy& policy) {
    (void)try_add(tenant, record, key, policy).value();
}

template <class D>
template <class Match>
std::size_t basic_key_index<D>::find_slot(const std::vector<std::uint32_t>& table, probe at, Match is_it) const noexcept {
    const std::size_t mask = table.size() - 1;
    for (std::size_t i = at.home;; i = (i + 1) & mask) {
        const std::uint32_t slot = table[i];
        if (slot == free_slot) return npos;
        if ((slot & ~position_mask) == at.tag && is_it(entries_[slot & position_mask])) return i;
    }
}

template <class D>
KEYHOOK_INLINE std::size_t basic_key_index<D>::find_key_slot(const detail::sip_digest& d) const noexcept {
    if (by_key_.empty()) return npos;
    return find_slot(by_key_, key_probe(d),
                     [&d](const entry& e) noexcept { return detail::digest_equal(e.digest, d); });
}

template <class D>
KEYHOOK_INLINE std::size_t basic_key_index<D>::find_id_slot(std::string_view id) const noexcept {
    if (by_id_.empty()) return npos;
    return find_slot(by_id_, id_probe(id), [this, id](const entry& e) noexcept { return id_of(e) == id; });
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::place(std::vector<std::uint32_t>& table, probe at, std::uint32_t position) noexcept {
    const std::size_t mask = table.size() - 1;
    std::size_t i = at.home;
    while (table[i] != free_slot) i = (i + 1) & mask;
    table[i] = at.tag | position;
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::repoint(std::vector<std::uint32_t>& table, std::size_t home, std::uint32_t from,
                                       std::uint32_t to) noexcept {
    const std::size_t mask = table.size() - 1;
    std::size_t i = home;
    while ((table[i] & position_mask) != from) i = (i + 1) & mask;
    table[i] = (table[i] & ~position_mask) | to;
}

template <class D>
template <class Home>
void basic_key_index<D>::erase_slot(std::vector<std::uint32_t>& table, std::size_t hole, Home home_of) {
    const std::size_t mask = table.size() - 1;
    std::size_t j = hole;
    for (;;) {
        j = (j + 1) & mask;
        if (table[j] == free_slot) break;
        const std::size_t h = home_of(table[j] & position_mask);
        // Move slot j back into the hole unless its home lies cyclically in (hole, j].
        const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
        if (!stays) {
            table[hole] = table[j];
            hole = j;
        }
    }
    table[hole] = free_slot;
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::store_id(entry& e, std::string_view id) {
    std::tie(e.id_chunk_, e.id_offset_) = ids_.store(id);
}

template <class D>
KEYHOOK_INLINE std::pair<std::uint32_t, std::uint16_t> basic_key_index<D>::id_chunks::store(std::string_view id) {
    const std::size_t need = stored_size(id.size());
    std::size_t chunk = chunks.size(), offset = 0;
    if (need > max_chunk) {
        chunks.emplace_back(need);
    } else {
        if (open == npos || chunks[open].size() - used < need) {
            std::size_t size = open == npos ? first_chunk : std::min(max_chunk, 2 * chunks[open].size());
            while (size < need) size *= 2;
            chunks.emplace_back(size);
            open = chunks.size() - 1;
            used = 0;
        }
        chunk = open;
        offset = used;
        used += need;
    }
    auto* p = reinterpret_cast<unsigned char*>(chunks[chunk].data()) + offset;
    std::size_t n = id.size();
    for (; n >= 0x80; n >>= 7) *p++ = static_cast<unsigned char>(0x80 | (n & 0x7f));
    *p++ = static_cast<unsigned char>(n);
    if (!id.empty()) std::memcpy(p, id.data(), id.size());
    live += need;
    return {static_cast<std::uint32_t>(chunk), static_cast<std::uint16_t>(offset)};
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::reserve(std::size_t n) {
    entries_.reserve(n);
    if (capacity_for(n) > by_key_.size()) rehash(capacity_for(n));
}

template <class D>
KEYHOOK_INLINE result<std::size_t> basic_key_index<D>::try_add(std::string_view tenant, const api_key& record, const secret& key,
                                                      const permission_policy& policy) {
    if (key.empty()) return error{errc::invalid_key, "key", "an indexed key must not be empty"};
    return insert(tenant, record, hash(key.reveal()), 0, policy);
}

template <class D>
KEYHOOK_INLINE result<std::size_t> basic_key_index<D>::try_add_digest(std::string_view tenant, const api_key& record,
                                                             const key_fingerprint& digest, std::uint8_t scheme,
                                                             std::shared_ptr<const key_digester> digester,
                                                             const permission_policy& policy) {
    if (scheme == 0 || !digester)
        return error{errc::invalid_value, "storedKey", "a stored digest needs a digester and a scheme from 1 to 255"};
    if (digester_ && digester_ != digester)
        return error{errc::invalid_value, "storedKey",
                     "the index already digests presented keys with another pepper set"};
    const bool attached = !digester_;
    if (attached) digester_ = std::move(digester);
    auto added = insert(tenant, record, hash(digest), scheme, policy);
    if (!added && attached && entries_.empty()) digester_.reset();
    return added;
}

template <class D>
KEYHOOK_INLINE result<std::size_t> basic_key_index<D>::insert(std::string_view tenant, const api_key& record,
                                                     const detail::sip_digest& digest, std::uint8_t scheme,
                                                     const permission_policy& policy) {
    const char* key_path = scheme == 0 ? "key" : "storedKey";
    if (entries_.size() >= max_entries || ids_.chunks.size() >= std::numeric_limits<std::uint32_t>::max())
        return error{errc::limit_exceeded, key_path, "the index is full"};
    const std::string_view id = record.id.str();
    if (find_id_slot(id) != npos)
        return error{errc::invalid_value, "id", "a key with the id " + detail::quote_input(id) + " is already indexed"};
    if (find_key_slot(digest) != npos)
        return error{errc::invalid_key, key_path,
                     "the key of " + detail::quote_input(id) + " is already indexed for another record"};
    if (capacity_for(entries_.size() + 1) > by_key_.size()) rehash(capacity_for(entries_.size() + 1));
    if (scheme_uses_.size() <= scheme) scheme_uses_.resize(std::size_t{scheme} + 1, 0);
    detail::reserve_at_least(entries_, entries_.size() + 1);
    entry e;
    e.digest = digest;
    e.scheme_ = scheme;
    fill(e, tenant, record, policy, false);
    entries_.push_back(e);  // reserved: cannot throw
    try {
        store_id(entries_.back(), id);
    } catch (...) {
        release_entry(entries_.back());
        entries_.pop_back();
        throw;
    }
    ++scheme_uses_[scheme];
    const auto position = static_cast<std::uint32_t>(entries_.size() - 1);
    place(by_key_, key_probe(digest), position);
    place(by_id_, id_probe(id), position);
    return entries_.size();
}

template <class D>
KEYHOOK_INLINE const typename basic_key_index<D>::entry* basic_key_index<D>::find_digested(std::string_view plaintext) const noexcept {
    // An entry counts only for the scheme it was indexed under (the hashes
    // are domain-separated already; this keeps it so whatever they become).
    const auto found = [this](const detail::sip_digest& d, std::size_t scheme) -> const entry* {
        const auto s = find_key_slot(d);
        if (s == npos) return nullptr;
        const entry& e = entries_[by_key_[s] & position_mask];
        return e.scheme_ == scheme ? &e : nullptr;
    };
    // K16: a key of another tenant must look exactly like an unknown key,
    // time included. So the lookup never stops at the first scheme that
    // matches: every scheme in use is digested and looked up, whatever was
    // found before, and the hit (a key is indexed once, so at most one) is
    // kept without a branch on the order it came in. The work depends on
    // the schemes in use only, never on the key presented.
    const entry* hit = nullptr;
    const auto keep = [&hit](const entry* e) noexcept {
        // Selected without an early exit; a key matches under one scheme at most.
        hit = e != nullptr ? e : hit;
    };
    if (!scheme_uses_.empty() && scheme_uses_[0] != 0) keep(found(hash(plaintext), 0));
    // An index of plaintext-added keys only: no digest to compute, nor to wipe.
    std::size_t s = 1;
    while (s < scheme_uses_.size() && scheme_uses_[s] == 0) ++s;
    if (s == scheme_uses_.size()) return hit;
    key_fingerprint f{};
    for (; s < scheme_uses_.size(); ++s) {
        if (scheme_uses_[s] == 0 || !digester_->digest(static_cast<std::uint8_t>(s), plaintext, f)) continue;
        keep(found(hash(f), s));
    }
    detail::secure_wipe(f.data(), f.size());  // what a key is stored as
    return hit;
}

template <class D>
KEYHOOK_INLINE bool basic_key_index<D>::update(std::string_view tenant, const api_key& record, const permission_policy& policy) {
    const auto s = find_id_slot(record.id.str());
    if (s == npos) return false;
    fill(entries_[by_id_[s] & position_mask], tenant, record, policy, true);
    return true;
}

template <class D>
KEYHOOK_INLINE bool basic_key_index<D>::remove(const key_id& id) {
    const auto s = find_id_slot(id.str());
    if (s == npos) return false;
    const std::uint32_t position = by_id_[s] & position_mask;
    release_entry(entries_[position]);
    --scheme_uses_[entries_[position].scheme_];
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

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::rehash(std::size_t capacity) {
    std::vector<std::uint32_t> keys(capacity, free_slot), ids(capacity, free_slot);
    by_key_.swap(keys);
    by_id_.swap(ids);
    for (std::size_t p = 0; p < entries_.size(); ++p) {
        place(by_key_, key_probe(entries_[p].digest), static_cast<std::uint32_t>(p));
        place(by_id_, id_probe(id_of(entries_[p])), static_cast<std::uint32_t>(p));
    }
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::shrink() noexcept {
    try {
        if (entries_.empty()) {
            *this = basic_key_index(hashing_key());
            return;
        }
        if (by_key_.size() > 16 && by_key_.size() >= 8 * entries_.size()) rehash(capacity_for(entries_.size()));
        if (entries_.capacity() >= 4 * entries_.size()) entries_.shrink_to_fit();
        if (ids_.dead > ids_.live && ids_.dead >= max_chunk) compact_ids();
    } catch (...) {
    }
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::compact_ids() {
    id_chunks fresh;
    std::vector<std::pair<std::uint32_t, std::uint16_t>> at(entries_.size());
    for (std::size_t p = 0; p < entries_.size(); ++p) at[p] = fresh.store(id_of(entries_[p]));
    for (std::size_t p = 0; p < entries_.size(); ++p) std::tie(entries_[p].id_chunk_, entries_[p].id_offset_) = at[p];
    ids_ = std::move(fresh);
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::fill(entry& e, std::string_view tenant, const api_key& record,
                                    const permission_policy& policy, bool replacing) {
    const std::uint32_t t = intern_tenant(tenant);
    std::uint32_t p = 0;
    try {
        p = intern_permissions(merge_permissions(record.groups, policy));
    } catch (...) {
        release_tenant(t);
        throw;
    }
    if (replacing) release_entry(e);
    e.tenant = t;
    e.permissions = p;
    e.revoked = record.status == key_status::revoked;
    e.active_from = record.active_from;
    e.expire_at = record.expire_at;
}

template <class D>
KEYHOOK_INLINE std::uint32_t basic_key_index<D>::intern_tenant(std::string_view tenant) {
    const auto it = tenant_ids_.find(tenant);
    if (it != tenant_ids_.end()) {
        ++tenant_uses_[it->second];
        return it->second;
    }
    std::string name(tenant);
    detail::reserve_at_least(free_tenants_, tenants_.size() + 1);  // release_tenant then cannot throw
    const bool reuse = !free_tenants_.empty();
    const auto id = reuse ? free_tenants_.back() : static_cast<std::uint32_t>(tenants_.size());
    if (!reuse) {
        detail::reserve_at_least(tenants_, tenants_.size() + 1);
        detail::reserve_at_least(tenant_uses_, tenant_uses_.size() + 1);
    }
    tenant_ids_.emplace(name, id);  // the one step that may throw after this point
    if (reuse) {
        free_tenants_.pop_back();
        tenants_[id] = std::move(name);
        tenant_uses_[id] = 1;
    } else {
        tenants_.push_back(std::move(name));
        tenant_uses_.push_back(1);
    }
    return id;
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::release_tenant(std::uint32_t t) noexcept {
    if (--tenant_uses_[t] != 0) return;
    const auto it = tenant_ids_.find(std::string_view(tenants_[t]));
    if (it != tenant_ids_.end()) tenant_ids_.erase(it);
    std::string().swap(tenants_[t]);
    free_tenants_.push_back(t);  // reserved by intern_tenant
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::release_permissions(std::uint32_t p) noexcept {
    if (--permission_uses_[p] != 0) return;
    const auto it = permission_ids_.find(permission_sets_[p]);
    if (it != permission_ids_.end()) permission_ids_.erase(it);
    permission_sets_[p] = key_permissions();
    family_bits_[p] = 0;
    free_permissions_.push_back(p);  // reserved by intern_permissions
}

template <class D>
KEYHOOK_INLINE void basic_key_index<D>::release_entry(const entry& e) noexcept {
    release_tenant(e.tenant);
    release_permissions(e.permissions);
}

template <class D>
KEYHOOK_INLINE std::uint32_t basic_key_index<D>::intern_permissions(key_permissions p) {
    const auto it = permission_ids_.find(p);
    if (it != permission_ids_.end()) {
        ++permission_uses_[it->second];
        return it->second;
    }
    detail::reserve_at_least(free_permissions_, permission_sets_.size() + 1);
    const bool reuse = !free_permissions_.empty();
    const auto id = reuse ? free_permissions_.back() : static_cast<std::uint32_t>(permission_sets_.size());
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
    if (!reuse) {
        detail::reserve_at_least(family_bits_, permission_sets_.size() + 1);
        detail::reserve_at_least(permission_uses_, permission_sets_.size() + 1);
        detail::reserve_at_least(permission_sets_, permission_sets_.size() + 1);
    }
    const auto placed = permission_ids_.emplace(p, id).first;  // the last step that may throw
    if (reuse) {
        try {
            permission_sets_[id] = std::move(p);
        } catch (...) {
            permission_ids_.erase(placed);
            throw;
        }
        free_permissions_.pop_back();
        family_bits_[id] = bits;
        permission_uses_[id] = 1;
    } else {
        try {
            permission_sets_.push_back(std::move(p));
        } catch (...) {
            permission_ids_.erase(placed);
            throw;
        }
        family_bits_.push_back(bits);
        permission_uses_.push_back(1);
    }
    return id;
}

}  // namespace keyhook

#if defined(KEYHOOK_BUILDING_COMPILED) && !defined(KEYHOOK_BUILDING_COMPILED_CRYPTO)
// Compiled mode: the one instantiation, which programs link to.
template class keyhook::basic_key_index<void>;
#endif
