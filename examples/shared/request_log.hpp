// Request logs for the programs that serve (rule O3): one JSON line per
// request, a report of a repeated error at most once a second with its count,
// and a writer that keeps standard error from stalling the request threads.
//
//   - format_request_line: {"time", "tenant", ["tenantLength",] "keyId",
//     "method", "path", "code", "latencyMs"}. Text from the client has every
//     occurrence of a secret the caller names (the key the request presented)
//     replaced by [redacted], is cut to 256 bytes (never inside a UTF-8
//     character), and is escaped by nlohmann/json and keyhook::escape_json_text
//     (P1: controls, DEL, C1, bidirectional controls as \u escapes; bytes that
//     are not UTF-8 as \ufffd). A tenant is named only when the caller says the
//     store knows it; otherwise it is null and its length is given.
//   - repeated_error: the first occurrence reported at once, then at most one
//     report a second naming how many occurrences it stands for. The clock is
//     a parameter.
//   - line_writer: a thread of its own writes the lines, in batches (every
//     50 ms at most, or 64 KiB). A request thread only appends to a buffer
//     under a mutex; when standard error does not keep up (a pipe nobody
//     reads), request lines past `max_pending` bytes are dropped and counted,
//     and a notice says how many, at most once a second.
//
// Generic: key_gateway uses it; nothing in it knows a program.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "keyhook/escape.hpp"
#include "keyhook/http.hpp"
#include "keyhook/timestamps.hpp"

namespace examples::request_log {

// The most bytes of one client-supplied text a line holds (before escaping).
inline constexpr std::size_t text_cap = 256;

// `s` with every occurrence of each non-empty secret replaced by
// keyhook::redacted_text, then cut to text_cap bytes at a character boundary
// (a cut UTF-8 sequence would come out as \ufffd).
inline std::string client_text(std::string_view s, const std::vector<std::string_view>& secrets = {}) {
    std::string out(s);
    for (const auto secret : secrets) {
        if (secret.empty()) continue;
        for (auto at = out.find(secret); at != std::string::npos;
             at = out.find(secret, at + keyhook::redacted_text.size()))
            out.replace(at, secret.size(), keyhook::redacted_text);
    }
    if (out.size() > text_cap) {
        std::size_t end = text_cap;
        // Back to the start of the character the cut falls in (continuation bytes are 10xxxxxx).
        while (end > 0 && (static_cast<unsigned char>(out[end]) & 0xC0) == 0x80) --end;
        out.resize(end);
    }
    return out;
}

// Appends `s` as a JSON string escaped for printing (P1).
inline void append_json_string(std::string& out, std::string_view s) {
    // Printable ASCII other than '"' and '\\' stands for itself: the common case needs no serializer.
    const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u <= 0x7E && c != '"' && c != '\\';
    });
    if (plain) {
        out += '"';
        out += s;
        out += '"';
        return;
    }
    out += keyhook::escape_json_text(
        nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// Appends client text as client_text gives it, as a JSON string.
inline void append_client_text(std::string& out, std::string_view s, const std::vector<std::string_view>& secrets) {
    const bool has_secret = std::any_of(secrets.begin(), secrets.end(), [s](std::string_view secret) {
        return !secret.empty() && s.find(secret) != std::string_view::npos;
    });
    if (!has_secret && s.size() <= text_cap)
        append_json_string(out, s);
    else
        append_json_string(out, client_text(s, secrets));
}

// One request as its line names it. The views must outlive format_request_line.
struct request_line {
    keyhook::timestamp time{};
    // The tenant the request named, and whether the store knows that tenant:
    // only a known tenant is written by name (a client may put anything in
    // the header, a key included); otherwise "tenant" is null and
    // "tenantLength" gives its length in bytes. nullopt: none was named.
    std::optional<std::string_view> tenant;
    bool tenant_known = false;
    std::optional<std::string_view> key_id;  // null when no key was found (or may not be named)
    std::string_view method;
    std::string_view path;  // without the query
    std::string_view code;
    std::chrono::nanoseconds latency{};
    std::vector<std::string_view> secrets;  // replaced in every client text
};

// The line, without its newline: {"time":"2026-11-28T12:00:00.123Z",
// "tenant":"acme","keyId":"...","method":"GET","path":"/api/things",
// "code":"VALID","latencyMs":0.042}. latencyMs has three decimals
// (microseconds).
inline std::string format_request_line(const request_line& r) {
    std::string out;
    out.reserve(192 + r.path.size() + r.method.size());
    out += "{\"time\":\"";
    out += keyhook::format_timestamp_millis(r.time);
    out += "\",\"tenant\":";
    if (r.tenant && r.tenant_known) {
        append_client_text(out, *r.tenant, r.secrets);
    } else {
        out += "null";
        if (r.tenant) out += ",\"tenantLength\":" + std::to_string(r.tenant->size());
    }
    out += ",\"keyId\":";
    if (r.key_id)
        append_json_string(out, *r.key_id);  // the store's text, not the client's
    else
        out += "null";
    out += ",\"method\":";
    append_client_text(out, r.method, r.secrets);
    out += ",\"path\":";
    append_client_text(out, r.path, r.secrets);
    out += ",\"code\":";
    append_json_string(out, r.code);
    const auto us = std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(r.latency).count());
    const auto frac = std::to_string(1000 + us % 1000);
    out += ",\"latencyMs\":" + std::to_string(us / 1000) + "." + frac.substr(1) + "}";
    return out;
}

// O3: an error that repeats is reported at most once per second. The first
// occurrence is reported at once; later ones within a second of the last
// report are counted, and the next report names how many it stands for.
class repeated_error {
public:
    using clock = std::chrono::steady_clock;
    static constexpr clock::duration interval = std::chrono::seconds{1};

    // An occurrence at `now`: the number of earlier occurrences not reported
    // when this one is to be reported (0 for the first), else nullopt.
    std::optional<unsigned long> occurred(clock::time_point now) {
        if (reported_ && now - last_ < interval) {
            ++unreported_;
            return std::nullopt;
        }
        const auto repeats = unreported_;
        total_ += unreported_ + 1;
        unreported_ = 0;
        reported_ = true;
        last_ = now;
        return repeats;
    }
    // The error is over: how many occurrences there were since it began
    // (nullopt when none was reported), and the count starts again.
    std::optional<unsigned long> ended() {
        if (!reported_) return std::nullopt;
        const auto all = total_ + unreported_;
        reported_ = false;
        total_ = unreported_ = 0;
        return all;
    }

private:
    bool reported_ = false;
    clock::time_point last_{};
    unsigned long unreported_ = 0, total_ = 0;
};

// Writes lines to a file descriptor (standard error) from a thread of its
// own. write() never waits on I/O: it appends to a buffer under a mutex. A
// request line is dropped (and counted) when `max_pending` bytes already wait;
// a notice (a program's own report, rare and already limited) is kept up to
// twice that. Dropped lines are reported by a notice at most once a second.
// On a pipe or a terminal the descriptor is written 4 KiB at a time, each
// after poll() says it can take them, so close() can give up on a reader
// that never reads.
class line_writer {
public:
    enum class kind { request, notice };

    explicit line_writer(std::string program, int fd = 2, std::size_t max_pending = std::size_t{1} << 20)
        : program_(std::move(program)), fd_(fd), max_pending_(max_pending) {
        struct stat st {};
        regular_file_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
        // The thread takes no signal (it inherits the mask it starts with):
        // a program's SIGTERM goes to the threads that wait for it, and a
        // reader that went away makes write() fail with EPIPE here instead of
        // ending the process.
        sigset_t all, before;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &before);
        thread_ = std::thread([this] { run(); });
        pthread_sigmask(SIG_SETMASK, &before, nullptr);
    }
    ~line_writer() { close(std::chrono::seconds{2}); }
    line_writer(const line_writer&) = delete;
    line_writer& operator=(const line_writer&) = delete;

    // Queues `line` and a newline. Request lines are written in batches (at
    // most batch_window after the first of a batch, or once batch_bytes
    // wait), so a busy server makes a few write() calls a second, not one a
    // line; a notice is written at once.
    void write(std::string_view line, kind k = kind::request) {
        std::lock_guard<std::mutex> hold(mutex_);
        const auto limit = k == kind::request ? max_pending_ : 2 * max_pending_;
        if (closed_ || pending_.size() + line.size() + 1 > limit) {
            ++dropped_;
            return;
        }
        const auto before = pending_.size();
        pending_.append(line.data(), line.size());
        pending_ += '\n';
        if (k == kind::notice) urgent_ = true;
        if (k == kind::notice || (before == 0 && idle_wait_) ||
            (before < batch_bytes() && pending_.size() >= batch_bytes()))
            wake_.notify_one();
    }

    // Waits until every line queued so far is written, at most `patience`.
    // True when they were.
    bool flush(std::chrono::milliseconds patience) {
        std::unique_lock<std::mutex> hold(mutex_);
        urgent_ = true;
        wake_.notify_one();
        return idle_.wait_for(hold, patience, [this] { return (pending_.empty() && !writing_) || done_; }) &&
               pending_.empty() && !writing_;
    }

    // Writes what is queued (at most `patience`; then the rest is given up)
    // and stops the thread. Lines written afterwards are dropped.
    void close(std::chrono::milliseconds patience) {
        {
            std::lock_guard<std::mutex> hold(mutex_);
            if (!thread_.joinable()) return;
            closing_ = true;
        }
        wake_.notify_one();
        {
            std::unique_lock<std::mutex> hold(mutex_);
            if (!idle_.wait_for(hold, patience, [this] { return done_; })) abandon_ = true;
        }
        thread_.join();
    }

    [[nodiscard]] std::uint64_t dropped() const {
        std::lock_guard<std::mutex> hold(mutex_);
        return dropped_;
    }

private:
    using steady = std::chrono::steady_clock;
    static constexpr std::chrono::milliseconds batch_window{50};
    std::size_t batch_bytes() const { return std::min<std::size_t>(64 * 1024, max_pending_ / 2); }

    void run() {
        std::string batch;
        std::uint64_t reported = 0;
        auto last_report = steady::time_point{};
        bool failed = false;
        for (;;) {
            {
                std::unique_lock<std::mutex> hold(mutex_);
                writing_ = false;
                idle_.notify_all();
                // Dropped lines are reported once a second since the last report, at the latest.
                const auto report_due = [&] {
                    return dropped_ != reported && steady::now() - last_report >= std::chrono::seconds{1};
                };
                // Nothing waits: sleep until a line comes, or a report is due.
                if (pending_.empty() && !closing_ && !urgent_) {
                    idle_wait_ = true;
                    wake_.wait_for(hold, std::chrono::seconds{1},
                                   [&] { return !pending_.empty() || closing_ || urgent_ || report_due(); });
                    idle_wait_ = false;
                }
                // Lines wait: gather more for the batch window, unless enough wait or one is urgent.
                if (!pending_.empty() && !closing_ && !urgent_)
                    wake_.wait_for(hold, batch_window,
                                   [&] { return pending_.size() >= batch_bytes() || closing_ || urgent_; });
                urgent_ = false;
                const bool last = closing_;
                if (pending_.empty() && dropped_ == reported && last) break;
                batch.clear();
                batch.swap(pending_);
                const auto now = steady::now();
                if (dropped_ != reported && (last || now - last_report >= std::chrono::seconds{1})) {
                    batch += program_ + ": " + std::to_string(dropped_ - reported) +
                             " log lines dropped: standard error did not keep up\n";
                    reported = dropped_;
                    last_report = now;
                }
                writing_ = !batch.empty();
                if (abandon_) break;
            }
            if (!failed && !batch.empty()) failed = !write_all(batch);
        }
        std::lock_guard<std::mutex> hold(mutex_);
        done_ = true;
        closed_ = true;
        writing_ = false;
        idle_.notify_all();
    }

    bool write_all(std::string_view text) {
        while (!text.empty()) {
            if (!regular_file_) {
                pollfd p{fd_, POLLOUT, 0};
                const int ready = ::poll(&p, 1, 100);
                if (ready < 0 && errno != EINTR) return false;
                if (ready <= 0) {
                    std::lock_guard<std::mutex> hold(mutex_);
                    if (abandon_) return false;
                    continue;
                }
                if (p.revents & (POLLERR | POLLNVAL)) return false;
            }
            const auto n =
                ::write(fd_, text.data(), regular_file_ ? text.size() : std::min<std::size_t>(text.size(), 4096));
            if (n < 0) {
                if (errno == EINTR || errno == EAGAIN) continue;
                return false;
            }
            text.remove_prefix(static_cast<std::size_t>(n));
        }
        return true;
    }

    std::string program_;
    int fd_;
    std::size_t max_pending_;
    bool regular_file_ = false;
    mutable std::mutex mutex_;
    std::condition_variable wake_, idle_;
    // Under mutex_:
    std::string pending_;
    std::uint64_t dropped_ = 0;
    bool writing_ = false, closing_ = false, abandon_ = false, done_ = false, closed_ = false;
    bool urgent_ = false;     // a notice or a flush: write without waiting for the batch
    bool idle_wait_ = false;  // the thread sleeps on an empty buffer: the next line wakes it
    std::thread thread_;      // last: started once the members above exist
};

}  // namespace examples::request_log
