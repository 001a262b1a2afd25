// key_gateway: forward authentication (K16) for nginx's auth_request and
// Traefik's ForwardAuth, over the key store key_admin writes.
//
//   key_gateway --listen HOST:PORT --store FILE --routes FILE --proxy nginx|traefik
//               --trusted-proxy CIDR [--trusted-proxy CIDR]...
//
// --trusted-proxy is required (K16): without it every call would come from
// an untrusted address, and nginx's auth_request subrequest
// (GET /.key_gateway, from nginx's address) would be judged instead of the
// call it asks about. The gateway never starts in that state.
//
// Peppers from KEYHOOK_PEPPERS, as key_admin. The decisions are in
// forward_auth.hpp; this file adds the HTTP server (H13), the store and the
// signals. Rate states live in memory; credits and lastUsedAt go back to the
// store at most once a second and on shutdown, merged under the store's lock
// (key_store::apply_write_backs), and so does a key's digest under the
// current pepper after it matched under a legacy form or an older pepper.
// The store is read again when it changes (checked four times a second) and
// on SIGHUP; SIGINT and SIGTERM stop the server, write back, and exit 0.
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "forward_auth.hpp"
#include "keyhook/crypto/random.hpp"
#include "keyhook/crypto/stored_key.hpp"
#include "shared/http_server.hpp"
#include "shared/key_store.hpp"

namespace {

constexpr const char* usage_text =
    "usage: key_gateway --listen HOST:PORT --store FILE --routes FILE --proxy nginx|traefik "
    "--trusted-proxy CIDR [--trusted-proxy CIDR]...\n"
    "environment: KEYHOOK_PEPPERS=\"id:base64 ...\" (the first is current)\n";

struct settings {
    std::string host;
    unsigned short port = 0;
    std::string store, routes;
    gateway::proxy_kind proxy = gateway::proxy_kind::nginx;
    std::vector<keyhook::address_range> trusted;
};

struct usage_error {
    std::string why;
};

settings parse_arguments(int argc, char** argv) {
    settings s;
    bool have_proxy = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) throw usage_error{"unknown option or missing value: \"" + arg + "\""};
        const std::string value = argv[++i];
        if (arg == "--listen") {
            const auto colon = value.rfind(':');
            if (colon == std::string::npos || colon + 1 == value.size() ||
                value.find_first_not_of("0123456789", colon + 1) != std::string::npos || value.size() - colon > 6)
                throw usage_error{"--listen: expected HOST:PORT"};
            const auto port = std::stoul(value.substr(colon + 1));
            if (port > 65535) throw usage_error{"--listen: the port is at most 65535"};
            s.host = value.substr(0, colon);
            s.port = static_cast<unsigned short>(port);
        } else if (arg == "--store") {
            s.store = value;
        } else if (arg == "--routes") {
            s.routes = value;
        } else if (arg == "--proxy") {
            if (value != "nginx" && value != "traefik") throw usage_error{"--proxy: expected nginx or traefik"};
            s.proxy = value == "nginx" ? gateway::proxy_kind::nginx : gateway::proxy_kind::traefik;
            have_proxy = true;
        } else if (arg == "--trusted-proxy") {
            auto r = keyhook::try_parse_address_range(value);
            if (!r) throw usage_error{"--trusted-proxy: " + r.error().message};
            s.trusted.push_back(*r);
        } else {
            throw usage_error{"unknown option \"" + arg + "\""};
        }
    }
    if (s.host.empty() || s.store.empty() || s.routes.empty() || !have_proxy)
        throw usage_error{"--listen, --store, --routes and --proxy are required"};
    // K16: fail closed. Without a trusted proxy no forwarded header is read,
    // so every call would be judged as the proxy's own subrequest.
    if (s.trusted.empty())
        throw usage_error{
            "--proxy needs --trusted-proxy CIDR (the proxy's address): without it the gateway would "
            "judge the proxy's own subrequest instead of the call it asks about"};
    return s;
}

keyhook::timestamp now() { return keyhook::to_timestamp(std::chrono::system_clock::now()); }

void log(const std::string& line) { std::cerr << "key_gateway: " << line << std::endl; }

// What the gateway holds of one stored key.
struct live_key {
    std::string tenant;
    keyhook::key_limits limits;  // policy, and usage as of the last allowed call
    keyhook::credit_state base;  // the credits as the store has them
    std::optional<keyhook::timestamp> written_last_used;
    std::string stored_key;
    std::optional<std::string> rehash_to;  // the digest under the current pepper, not yet written
};

class gateway_state {
public:
    gateway_state(settings s, keyhook::crypto::pepper_set peppers, std::vector<gateway::route> routes,
                  keyhook::permission_policy permissions)
        : settings_(std::move(s)),
          peppers_(std::move(peppers)),
          routes_(std::move(routes)),
          permissions_(std::move(permissions)),
          store_(settings_.store),
          index_(std::make_unique<keyhook::key_index>(keyhook::crypto::openssl_random{})) {}

    examples::http_server::response handle(const examples::http_server::request& req) {
        namespace hs = examples::http_server;
        const auto peer = keyhook::try_parse_ip_address(req.peer_address);
        if (!peer) return hs::json_answer(500, "the connection's peer address is unknown");
        keyhook::http_headers headers;
        headers.reserve(req.headers.size());
        for (const auto& f : req.headers)
            headers.push_back({f.name, f.value, keyhook::header_name_equal(f.name, keyhook::synthetic_key_header)});
        const auto original =
            gateway::read_original(settings_.proxy, headers, req.method, req.target, *peer, settings_.trusted);
        if (!original) return hs::json_answer(400, original.error().path + ": " + original.error().message);
        const auto* route = gateway::match_route(routes_, original->method, original->uri);
        const auto& family = route ? route->family : gateway::no_route_family();
        const keyhook::resource_ref resource = route ? route->resource.ref() : keyhook::resource_ref::all();
        const auto access = route ? route->access : keyhook::access_level::read;

        std::lock_guard<std::mutex> hold(mutex_);
        const auto at = now();
        const auto find = [this](std::string_view id) -> const keyhook::key_limits* {
            const auto it = keys_.find(id);
            return it == keys_.end() ? nullptr : &it->second.limits;
        };
        const auto a = keyhook::authorize(*index_, headers, family, resource, access, at,
                                          keyhook::call_context{original->caller, 1}, find);
        if (a.allowed()) {
            const auto it = keys_.find(a.key()->str());
            if (it != keys_.end()) {
                if (a.usage()) it->second.limits.usage = *a.usage();
                dirty_ = true;
                if (a.digest_outdated()) {
                    std::string_view presented;
                    for (const auto& h : headers)
                        if (keyhook::header_name_equal(h.name, keyhook::synthetic_key_header)) presented = h.value;
                    const auto rehash = keyhook::crypto::try_rehash_answer(peppers_, a, presented);
                    if (rehash && *rehash) {
                        if (auto text = (*rehash)->try_store_form()) it->second.rehash_to = std::move(*text);
                    }
                }
            }
        }
        const auto answer = gateway::answer_for(a, at);
        hs::response out;
        out.status = answer.status;
        for (const auto& h : answer.headers) out.headers.push_back({h.name, h.value});
        out.headers.push_back({"Content-Type", "text/plain; charset=utf-8"});
        out.body = answer.body;
        return out;
    }

    // Writes back what changed (when `write_back`), and reads the store again
    // when it changed on disk, or always when `reload`. Usage not yet written
    // is carried over a reload (so writes stay at most one a second). False
    // when the store could not be read or written (the state is kept).
    bool sync(bool write_back, bool reload) {
        std::lock_guard<std::mutex> hold(mutex_);
        const bool changed_on_disk = key_store::stamp_of(settings_.store) != seen_;
        if (!changed_on_disk && !reload && !(write_back && dirty_)) return true;
        std::vector<key_store::write_back> changes;
        if (write_back) {
            for (const auto& [id, k] : keys_) {
                if (!unsaved(k)) continue;
                key_store::write_back w;
                w.id = keyhook::key_id(id);
                w.base = k.base;
                w.credits = k.limits.usage.credits;
                w.last_used_at = k.limits.usage.last_used_at;
                if (k.rehash_to) {
                    w.rehash_from = k.stored_key;
                    w.rehash_to = k.rehash_to;
                }
                changes.push_back(std::move(w));
            }
        }
        std::vector<key_store::entry> merged;
        bool external = false;
        const auto r = store_.update([&](std::vector<key_store::entry>& entries, const key_store::file_stamp& before) {
            external = before != seen_;
            const bool changed = key_store::apply_write_backs(entries, changes);
            merged = entries;
            return changed;
        });
        if (!r) {
            log("the store was not read or written: " + r.error().what());
            return false;
        }
        seen_ = *r;
        bool rehashed = false;
        for (const auto& c : changes) rehashed = rehashed || c.rehash_to;
        if (external || reload || rehashed || !loaded_) {
            rebuild(merged);
        } else {
            // Nothing else changed the file: what was sent is what it holds.
            for (const auto& c : changes) {
                auto& k = keys_.find(c.id.str())->second;
                k.base = c.credits;
                k.written_last_used = c.last_used_at;
            }
        }
        dirty_ = false;
        for (const auto& [id, k] : keys_) dirty_ = dirty_ || unsaved(k);
        return true;
    }

private:
    static bool unsaved(const live_key& k) {
        return k.limits.usage.credits != k.base || k.limits.usage.last_used_at != k.written_last_used ||
               k.rehash_to.has_value();
    }

    // A new index and key table from the store's entries. Rate states carry
    // over by id, and so does usage not yet written, unless the store's
    // credits changed meanwhile (key_admin's value wins).
    void rebuild(const std::vector<key_store::entry>& entries) {
        auto index = std::make_unique<keyhook::key_index>(keyhook::crypto::openssl_random{});
        std::map<std::string, live_key, std::less<>> keys;
        for (const auto& e : entries) {
            const auto digest = keyhook::crypto::try_parse_stored_digest(e.stored_key);
            if (!digest) continue;  // the store's reader checked it already
            const auto added =
                keyhook::crypto::try_add_stored(*index, peppers_, e.tenant, e.record, *digest, permissions_);
            if (!added) {
                log("key " + e.record.id.str() + " left out: " + added.error().what());
                continue;
            }
            live_key k;
            k.tenant = e.tenant;
            k.limits = keyhook::key_limits{e.policy, e.usage};
            k.base = e.usage.credits;
            k.written_last_used = e.usage.last_used_at;
            k.stored_key = e.stored_key;
            if (const auto old = keys_.find(e.record.id.str()); old != keys_.end()) {
                const auto& was = old->second;
                k.limits.usage.rate = was.limits.usage.rate;
                if (was.limits.usage.credits != was.base && e.usage.credits == was.base) {
                    k.limits.usage.credits = was.limits.usage.credits;
                    k.base = was.base;
                }
                if (was.limits.usage.last_used_at &&
                    (!e.usage.last_used_at || *e.usage.last_used_at < *was.limits.usage.last_used_at))
                    k.limits.usage.last_used_at = was.limits.usage.last_used_at;
                if (was.rehash_to && was.stored_key == e.stored_key) k.rehash_to = was.rehash_to;
            }
            keys.emplace(e.record.id.str(), std::move(k));
        }
        index_ = std::move(index);
        keys_ = std::move(keys);
        loaded_ = true;
        log("store read: " + std::to_string(keys_.size()) + " keys");
    }

    settings settings_;
    keyhook::crypto::pepper_set peppers_;
    std::vector<gateway::route> routes_;
    keyhook::permission_policy permissions_;
    key_store::store_file store_;
    std::mutex mutex_;
    std::unique_ptr<keyhook::key_index> index_;
    std::map<std::string, live_key, std::less<>> keys_;
    key_store::file_stamp seen_;
    bool dirty_ = false;
    bool loaded_ = false;
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw keyhook::error{keyhook::errc::invalid_value, path, "cannot open"};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

int main(int argc, char** argv) {
    try {
        auto s = parse_arguments(argc, argv);
        const char* pepper_text = std::getenv("KEYHOOK_PEPPERS");
        auto peppers = key_store::parse_peppers(pepper_text ? pepper_text : "");
        if (!peppers) throw peppers.error();
        const auto routes_text = read_file(s.routes);
        auto routes = gateway::parse_routes(routes_text);
        if (!routes)
            throw keyhook::error{routes.error().code, s.routes + ": " + routes.error().path, routes.error().message};
        auto groups = gateway::parse_groups(routes_text);
        if (!groups)
            throw keyhook::error{groups.error().code, s.routes + ": " + groups.error().path, groups.error().message};

        // The signals are taken by this thread alone (sigtimedwait below);
        // the server's threads inherit the mask.
        sigset_t signals;
        sigemptyset(&signals);
        sigaddset(&signals, SIGINT);
        sigaddset(&signals, SIGTERM);
        sigaddset(&signals, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &signals, nullptr);

        gateway_state state(s, std::move(*peppers), std::move(*routes), std::move(*groups));
        if (!state.sync(false, true)) return 1;  // a store that does not read is not served

        examples::http_server::options o;
        o.threads = 2;
        o.max_body_bytes = 4096;  // an authorization request has no body to speak of
        examples::http_server::server server(o,
                                             [&state](examples::http_server::request&& r) { return state.handle(r); });
        std::string error;
        const auto port = server.listen(s.host, s.port, error);
        if (!port) {
            log("cannot listen: " + error);
            return 1;
        }
        std::cout << "key_gateway: listening on " << s.host << ":" << *port << std::endl;
        std::thread serving([&server] { server.run(); });

        auto last_write = std::chrono::steady_clock::now();
        for (;;) {
            const timespec quarter{0, 250 * 1000 * 1000};
            const int sig = sigtimedwait(&signals, nullptr, &quarter);
            if (sig == SIGINT || sig == SIGTERM) break;
            const auto t = std::chrono::steady_clock::now();
            const bool write_back = t - last_write >= std::chrono::seconds{1};
            if (write_back) last_write = t;
            state.sync(write_back, sig == SIGHUP);
        }
        server.stop();
        serving.join();
        const bool written = state.sync(true, false);
        log(written ? "stopped; usage written back" : "stopped; the usage could not be written back");
        return written ? 0 : 1;
    } catch (const usage_error& e) {
        std::cerr << "key_gateway: " << e.why << '\n' << usage_text;
        return 2;
    } catch (const keyhook::error& e) {
        std::cerr << "key_gateway: " << e << '\n';
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "key_gateway: " << e.what() << '\n';
        return 1;
    }
}
