#!/usr/bin/env python3
"""keyhook's benchmark report (the targets of docs/performance.md).

  report.py compile BUILD_DIR OUT.json [--runs N] [--header-runs M]
      Times the compilation of a TU including keyhook/keyhook.hpp (and, once
      keyhook has it, the same with KEYHOOK_COMPILED) N times, and of a TU per
      public header M times (0: none), against one including only
      nlohmann/json.hpp and date/date.h, with the compiler and flags of the
      Release build (from BUILD_DIR/compile_commands.json).
  report.py summary OUT.json [MORE.json ...]
      Reads Google Benchmark JSON files (aggregates) and the compile timings,
      prints every target as a ratio of medians from the same run, PASS/FAIL.
      Exits 1 when a measured target fails.

Every figure is a ratio against a baseline measured in the same run: the
machine is shared, so absolute times say little.
"""

import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile

# --------------------------------------------------------------- compile time

BASELINE_TU = "#include <nlohmann/json.hpp>\n#include <date/date.h>\nint main() { return 0; }\n"
KEYHOOK_TU = "#include <keyhook/keyhook.hpp>\nint main() { return 0; }\n"
# try_parse_notification / null SAX pass (row 4b): calibrated in docs/performance.md.
RECEIVE_BOUND = 1.0


def release_command(build_dir):
    """The compile command of one benchmark source, as a list of arguments."""
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    for e in entries:
        if e["file"].endswith("bench_list.cpp"):
            args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
            return args, e["directory"]
    sys.exit("report.py: bench_list.cpp not in compile_commands.json (configure with the benchmarks on)")


def tu_command(args, source):
    """Same compiler and flags, another source, no object file or depfile kept."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c", "-MT", "-MF", "-MQ"):
            skip = True
            continue
        if a in ("-MD", "-MMD") or a.endswith(".cpp"):
            continue
        out.append(a)
    return out + ["-o", os.devnull, "-c", source]


def child_cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def public_headers():
    """Every public header a user includes on its own (detail/ and the testing helpers excluded)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include")
    found = []
    for sub in ("keyhook", os.path.join("keyhook", "crypto")):
        d = os.path.join(root, sub)
        for name in sorted(os.listdir(d)):
            if name.endswith(".hpp") and name != "keyhook.hpp" and not name.startswith("testing"):
                found.append(sub.replace(os.sep, "/") + "/" + name)
    return found


def compiled_mode_available():
    """True when keyhook has the compiled mode (include/keyhook/config.hpp, KEYHOOK_COMPILED)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include", "keyhook")
    path = os.path.join(root, "config.hpp")
    if not os.path.exists(path):
        return False
    with open(path) as f:
        return "KEYHOOK_COMPILED" in f.read()


def compile_times(build_dir, out_path, runs, header_runs):
    args, directory = release_command(build_dir)
    with tempfile.TemporaryDirectory() as tmp:
        units = {"baseline": (BASELINE_TU, []), "keyhook": (KEYHOOK_TU, [])}
        if compiled_mode_available():
            units["keyhook_compiled"] = (KEYHOOK_TU, ["-DKEYHOOK_COMPILED"])
        singles = ["header:" + h for h in public_headers()] if header_runs > 0 else []
        for h in singles:
            units[h] = ("#include <%s>\nint main() { return 0; }\n" % h[len("header:"):], [])
        sources = {}
        for i, (name, (text, _)) in enumerate(units.items()):
            path = os.path.join(tmp, "tu%d.cpp" % i)
            with open(path, "w") as f:
                f.write(text)
            sources[name] = path
        times = {name: [] for name in units}
        # Interleave the units so that a burst of load from elsewhere hits all of them.
        for run in range(max(runs, header_runs)):
            for name, (_, extra) in units.items():
                if run >= (header_runs if name.startswith("header:") else runs):
                    continue
                cmd = tu_command(args, sources[name])
                cmd = cmd[:-4] + extra + cmd[-4:]  # before "-o OUT -c SRC"
                before = child_cpu_seconds()
                subprocess.run(cmd, cwd=directory, check=True)
                times[name].append(child_cpu_seconds() - before)
    result = {
        "command": " ".join(shlex.quote(a) for a in tu_command(args, "TU.cpp")),
        "runs": runs,
        "header_runs": header_runs,
        "seconds": times,
        "median_seconds": {k: statistics.median(v) for k, v in times.items()},
    }
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2)
    return result


# -------------------------------------------------------------------- summary

def load_medians(paths):
    """Median aggregate of every benchmark: name -> (cpu time in ns, counters)."""
    medians, context, compile_result = {}, None, None
    factor = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    for p in paths:
        if os.path.getsize(p) == 0:  # an executable none of whose benchmarks matched --filter
            continue
        with open(p) as f:
            data = json.load(f)
        if "median_seconds" in data:
            compile_result = data
            continue
        context = context or data.get("context")
        for b in data.get("benchmarks", []):
            if b.get("aggregate_name") != "median" or b.get("error_occurred"):
                continue
            name = b["run_name"]
            cpu = b["cpu_time"] * factor[b.get("time_unit", "ns")]
            medians[name] = (cpu, b)
    return medians, context, compile_result


class Row:
    def __init__(self, target, ratio, op, limit, detail):
        self.target, self.ratio, self.op, self.limit, self.detail = target, ratio, op, limit, detail

    def verdict(self):
        if self.ratio is None:
            return "n/a"
        if self.op == "info":
            return "info"
        ok = {"<=": self.ratio <= self.limit, ">=": self.ratio >= self.limit, "<": self.ratio < self.limit,
              "==": self.ratio == self.limit}[self.op]
        return "PASS" if ok else "FAIL"


def ratio(medians, num, den):
    if num in medians and den in medians and medians[den][0] > 0:
        return medians[num][0] / medians[den][0]
    return None


def fmt_ns(ns):
    if ns >= 1e6:
        return "%.1f ms" % (ns / 1e6)
    if ns >= 1e3:
        return "%.2f us" % (ns / 1e3)
    return "%.1f ns" % ns


def per(medians, name, n=1):
    return fmt_ns(medians[name][0] / n) if name in medians else "-"


def rows_for(medians, compile_result):
    rows = []
    # 1. The list call.
    for n in (1000, 10000, 100000):
        dec, dom, sax = ("BM_list_%s/%d" % (k, n) for k in ("keyhook_decode", "json_dom", "json_null_sax"))
        detail = "per record: decode %s, DOM %s, null SAX %s" % (per(medians, dec, n), per(medians, dom, n),
                                                                 per(medians, sax, n))
        # The bounds: c08e674's ratios, which the decoder must never fall
        # behind again (regression guards); the targets of docs/performance.md (0.40 of
        # the DOM, 1.15 of a null SAX pass) are shown as information. At 1,000
        # records the DOM stays in cache and the ratio says little: information.
        r_dom, r_sax = ratio(medians, dec, dom), ratio(medians, dec, sax)
        if n != 1000:
            rows.append(Row("decode / DOM parse, %d records" % n, r_dom, "<=", 0.55, detail))
        else:
            rows.append(Row("decode / DOM parse, %d records (in cache)" % n, r_dom, "info", 0.55, detail))
        rows.append(Row("decode / null SAX pass, %d records" % n, r_sax, "<=", 1.5, detail))
        rows.append(Row("  target: decode / null SAX pass <= 1.15, %d records" % n, r_sax, "info", 1.15, ""))
    # 2. Timestamps: how many times faster than date::parse.
    for form in ("try_parse", "parse"):
        k = "BM_timestamp_keyhook_%s" % form
        r = ratio(medians, "BM_timestamp_date_parse", k)
        rows.append(Row("date::parse / keyhook %s_timestamp (speed-up)" % form, r, ">=", 20.0,
                        "per timestamp: keyhook %s, date::parse %s" % (per(medians, k),
                                                                       per(medians, "BM_timestamp_date_parse"))))
    # 3. Default view against decoding the same records. The default view is
    # L3's filter and sort (default_view_refs); the copying forms are shown for
    # information, as they also copy (or move) the ~70,000 selected records.
    dec100k = "BM_list_keyhook_decode/100000"
    rows.append(Row("default view (default_view_refs) / decode, 100000 records",
                    ratio(medians, "BM_view_default_view_refs/100000", dec100k), "<=", 0.05,
                    "view %s, decode %s" % (per(medians, "BM_view_default_view_refs/100000"),
                                            per(medians, dec100k))))
    for form, name in (("default_view (incl. copying ~70,000 records)", "BM_view_default_view/100000"),
                       ("default_view(records&&) (incl. moving them)", "BM_view_default_view_move/100000")):
        rows.append(Row("%s / decode, 100000 records" % form, ratio(medians, name, dec100k), "info", 0.05,
                        "view %s" % per(medians, name)))
    # 4. Notification body: how many times faster than ordered_json + dump.
    rows.append(Row("ordered_json build+dump / keyhook writer (speed-up)",
                    ratio(medians, "BM_notification_ordered_json", "BM_notification_keyhook"), ">=", 3.0,
                    "keyhook %s, ordered_json %s" % (per(medians, "BM_notification_keyhook"),
                                                     per(medians, "BM_notification_ordered_json"))))
    # 4b. Reading a received body (H7) against a SAX pass that keeps nothing:
    #     the platform's own shape is read in one pass without the parser (3
    #     of the 4 bodies); past the bound, that path is lost.
    rows.append(Row("try_parse_notification / null SAX pass, received bodies",
                    ratio(medians, "BM_receive_keyhook", "BM_receive_null_sax"), "<=", RECEIVE_BOUND,
                    "keyhook %s, null SAX %s" % (per(medians, "BM_receive_keyhook"),
                                                 per(medians, "BM_receive_null_sax"))))
    # 5. Dispatch to 100 webhooks against one body serialization.
    rows.append(Row("dispatch to 100 webhooks / one body serialization",
                    ratio(medians, "BM_dispatch_100_webhooks", "BM_notification_keyhook"), "<", 10.0,
                    "dispatch %s" % per(medians, "BM_dispatch_100_webhooks")))
    # 6. Authorization against one unordered_map lookup, and allocations.
    for probes, what in ((65536, "keys spread over the index"), (1024, "1,024 hot keys")):
        auth = "BM_authorize_1M_keys/%d" % probes
        base = "BM_authorize_baseline_unordered_map_find/%d" % probes
        rows.append(Row("authorize / unordered_map::find, 1M keys, %s" % what, ratio(medians, auth, base), "<=",
                        2.0, "authorize %s, find %s" % (per(medians, auth), per(medians, base))))
    for name in ("BM_authorize_1M_keys/65536", "BM_authorize_1M_keys_from_headers/65536"):
        allocs = medians[name][1].get("allocs_per_check") if name in medians else None
        form = "from headers" if "headers" in name else "from key and tenant"
        rows.append(Row("heap allocations per authorization check, %s" % form, allocs, "==", 0.0, ""))
    # Key index memory (K10): the heap key_index holds per key against the map's (the
    # map built on its own); counted bytes, so exact rather than a median of times.
    index_bytes, map_bytes = (medians[n][1].get("heap_bytes_per_key") if n in medians else None
                              for n in ("BM_authorize_1M_keys/65536", "BM_authorize_baseline_unordered_map_find/65536"))
    rows.append(Row("key_index heap bytes per key / unordered_map's, 1M keys",
                    index_bytes / map_bytes if index_bytes and map_bytes else None, "<=", 1.0,
                    "index %.1f B, map %.1f B" % (index_bytes, map_bytes) if index_bytes and map_bytes else ""))
    # K11 (keys at rest): authorization from stored digests against one
    #    HMAC-SHA-256 with a prepared context plus unordered_map::find on the
    #    digest, the same run; allocations; heap against a map from the digest
    #    to the same entry (id, tenant, permissions, period, status).
    for probes, what in ((65536, "keys spread over the index"), (1024, "1,024 hot keys")):
        auth = "BM_authorize_stored_1M_keys/%d" % probes
        base = "BM_stored_floor_hmac_map_find/%d" % probes
        rows.append(Row("authorize from stored digests / HMAC + map find, 1M keys, %s" % what,
                        ratio(medians, auth, base), "<=", 1.2,
                        "authorize %s, floor %s" % (per(medians, auth), per(medians, base))))
    name = "BM_authorize_stored_1M_keys/65536"
    rows.append(Row("heap allocations per check, index from stored digests",
                    medians[name][1].get("allocs_per_check") if name in medians else None, "==", 0.0, ""))
    index_bytes, map_bytes = (medians[n][1].get("heap_bytes_per_key") if n in medians else None
                              for n in (name, "BM_stored_floor_hmac_map_find/65536"))
    rows.append(Row("stored-digest index heap bytes per key / digest map's, 1M keys",
                    index_bytes / map_bytes if index_bytes and map_bytes else None, "<=", 1.0,
                    "index %.1f B, map %.1f B" % (index_bytes, map_bytes) if index_bytes and map_bytes else ""))
    # 8. Signing at the floor: v1 against a bare HMAC-SHA256 with
    #    a reused OpenSSL context plus base64, v1a (B3) against a bare OpenSSL
    #    Ed25519 call with a prepared key plus base64.
    for size in (200, 2048, 65536):
        for what, num, den in (("v1 sign", "BM_v1_sign", "BM_hmac_floor"),
                               ("v1 verify", "BM_v1_verify", "BM_hmac_floor"),
                               ("v1a sign", "BM_v1a_sign", "BM_ed25519_sign_floor"),
                               ("v1a verify", "BM_v1a_verify", "BM_ed25519_verify_floor")):
            n, d = "%s/%d" % (num, size), "%s/%d" % (den, size)
            rows.append(Row("%s / bare OpenSSL, %d bytes" % (what, size), ratio(medians, n, d), "<=", 1.2,
                            "%s %s, floor %s" % (what, per(medians, n), per(medians, d))))
        # Information: against the prepared-key technique done by hand.
        for what, num in (("v1 sign", "BM_v1_sign"), ("v1 verify", "BM_v1_verify")):
            n, d = "%s/%d" % (num, size), "BM_hmac_prekeyed/%d" % size
            rows.append(Row("%s / bare OpenSSL with a pre-keyed context, %d bytes" % (what, size),
                            ratio(medians, n, d), "info", 1.2,
                            "%s %s, pre-keyed %s" % (what, per(medians, n), per(medians, d))))
    # 7. Compile time (header-only and compiled mode): the umbrella header in each mode, and each
    #    public header on its own, against a TU of nlohmann/json.hpp + date/date.h.
    m = compile_result["median_seconds"] if compile_result else {}
    base = m.get("baseline")
    def compile_row(label, key, limit, runs):
        if base and key in m:
            rows.append(Row(label, m[key] / base, "<=", limit,
                            "median of %d: %.2f s vs %.2f s" % (runs, m[key], base)))
        else:
            rows.append(Row(label, None, "<=", limit, ""))
    runs = compile_result["runs"] if compile_result else 0
    # Regression guards: the targets 1.5 and 0.3 are retired.
    compile_row("compile keyhook.hpp / nlohmann+date", "keyhook", 2.3, runs)
    compile_row("compile keyhook.hpp, KEYHOOK_COMPILED / nlohmann+date", "keyhook_compiled", 0.6, runs)
    for key in sorted(k for k in m if k.startswith("header:")):
        compile_row("compile %s / nlohmann+date" % key[len("header:"):], key, 1.15,
                    compile_result.get("header_runs", runs))
    return rows


def summary(paths):
    medians, context, compile_result = load_medians(paths)
    rows = rows_for(medians, compile_result)
    width = max(len(r.target) for r in rows)
    print()
    if context:
        print("machine: %s CPUs at %s MHz, load average %s" % (
            context.get("num_cpus"), context.get("mhz_per_cpu"),
            " ".join("%.2f" % x for x in context.get("load_avg", []))))
    print("%-*s  %9s  %-8s  %-6s  %s" % (width, "target", "ratio", "limit", "result", "detail (medians)"))
    failed = False
    for r in rows:
        shown = "-" if r.ratio is None else ("%.3f" % r.ratio if r.ratio < 100 else "%.0f" % r.ratio)
        v = r.verdict()
        failed |= v == "FAIL"
        if v == "n/a":
            v, detail = "n/a", "not measured in this run (filtered out, or its header has not landed)"
        else:
            detail = r.detail
        limit = "" if r.op == "info" else "%s %g" % (r.op, r.limit)
        print("%-*s  %9s  %-8s  %-6s  %s" % (width, r.target, shown, limit, v, detail))
    if compile_result:
        print("\ncompile command (per TU): %s" % compile_result["command"])
    print()
    return 1 if failed else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "compile":
        runs, header_runs = 5, 3
        if "--runs" in argv:
            runs = int(argv[argv.index("--runs") + 1])
        if "--header-runs" in argv:
            header_runs = int(argv[argv.index("--header-runs") + 1])
        r = compile_times(argv[2], argv[3], runs, header_runs)
        print("compile time, median of %d: keyhook %.2f s, baseline %.2f s" % (
            runs, r["median_seconds"]["keyhook"], r["median_seconds"]["baseline"]))
        return 0
    if len(argv) >= 3 and argv[1] == "summary":
        return summary(argv[2:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
