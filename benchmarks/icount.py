"""Runs keyhook_icount's cases under callgrind and checks each ratio of
instruction counts against its bound (scripts/icount.sh is the entry point).

  icount.py KEYHOOK_ICOUNT [FILTER]
"""
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

# (row, measured case, baseline case, N, bound). docs/performance.md,
# "Instruction counts in CI", says how each bound was calibrated: the time
# bound of scripts/bench.sh divided by the ratio of time ratio to instruction
# ratio measured for the same binary; the decode rows instead hold the ratio
# the split decoder reached (1.194) plus 0.05, tighter than that calibration
# (1.35), so that a regression shows long before the time bound is at risk.
ROWS = [
    ("decode / null SAX pass, 1000 records", "list_decode", "list_null_sax", 1000, 1.24),
    ("decode / null SAX pass, 10000 records", "list_decode", "list_null_sax", 10000, 1.24),
    ("authorize / unordered_map::find, 1000 keys", "authorize", "authorize_map_find", 1000, 2.6),
    ("authorize / unordered_map::find, 10000 keys", "authorize", "authorize_map_find", 10000, 2.6),
    ("notification writer / ordered_json build+dump", "notification_writer", "notification_ordered_json", 20, 0.45),
    ("parse_timestamp / date::parse", "timestamp_parse", "timestamp_date_parse", 256, 0.09),
    ("v1 sign / bare HMAC, prepared context, 200 bytes", "v1_sign", "v1_hmac_prekeyed", 100, 1.2),
]
# (row, first row, second row, bound): the second row's ratio against the
# first's. A cost per record that grows with the page shows here.
GROWTH = [
    ("decode ratio, 10000 records / 1000 records", ROWS[0][0], ROWS[1][0], 1.05),
]


def count(exe, case, n, workdir):
    out = os.path.join(workdir, "%s.%d.out" % (case, n))
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--callgrind-out-file=" + out, exe, case, str(n)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("icount: %s %d failed (%d):\n%s" % (case, n, r.returncode, r.stderr[-2000:]))
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    sys.exit("icount: no totals in %s" % out)


def main(argv):
    exe = argv[1]
    filt = argv[2] if len(argv) > 2 else ""
    available = set(subprocess.run([exe, "--list"], stdout=subprocess.PIPE, text=True, check=True).stdout.split())
    rows = [r for r in ROWS if filt in r[0] and r[1] in available and r[2] in available]
    jobs = sorted({(c, r[3]) for r in rows for c in (r[1], r[2])})
    with tempfile.TemporaryDirectory() as d, ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        counts = dict(zip(jobs, pool.map(lambda j: count(exe, j[0], j[1], d), jobs)))
    width = max([len(r[0]) for r in rows + GROWTH] + [10])
    print("%-*s  %14s  %14s  %7s  %-7s  %s" % (width, "row", "measured", "baseline", "ratio", "bound", "result"))
    failed = False
    for name, m, b, n, bound in rows:
        num, den = counts[(m, n)], counts[(b, n)]
        ratio = num / den
        ok = ratio <= bound
        failed |= not ok
        print("%-*s  %14d  %14d  %7.3f  <= %-4g  %s" % (width, name, num, den, ratio, bound, "PASS" if ok else "FAIL"))
    ratios = {name: counts[(m, n)] / counts[(b, n)] for name, m, b, n, _ in rows}
    for name, first, second, bound in GROWTH:
        if first in ratios and second in ratios:
            g = ratios[second] / ratios[first]
            ok = g <= bound
            failed |= not ok
            print("%-*s  %14s  %14s  %7.3f  <= %-4g  %s" % (width, name, "", "", g, bound, "PASS" if ok else "FAIL"))
    skipped = [r[0] for r in ROWS if r not in rows and filt in r[0]]
    for s in skipped:
        print("%-*s  not built (no keyhook::crypto)" % (width, s))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
