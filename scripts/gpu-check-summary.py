#!/usr/bin/env python3
"""The end of scripts/gpu-check.sh: OUTDIR/summary.txt from the step manifest and raw outputs.

Usage: gpu-check-summary.py WORK OUTDIR
  WORK/raw/steps.tsv lists every step in run order (name, tool, kind, coll, status, rc, wall_s,
  limit_s, end_s, note); WORK/raw/NAME.txt and NAME.err are each step's stdout and stderr;
  OUTDIR/env.json is `ncclbench env --json`. Standard library only.

Every tool prints nccl-tests' text table (the references too), so one parser reads them all.
Per comparison regime (small, large), reference and collective: ncclbench's and the
reference's time per call (median over rounds), the time ratio ncclbench/reference (median of
the rounds' ratios, each round's ncclbench run against the reference run beside it) with its
spread (lowest and highest round), and the busbw ratio.
"""

import csv
import json
import math
import os
import re
import statistics
import sys

NOT_PASSED = ("FAIL", "TIMEOUT", "NOTRUN")
STATUSES = ("PASS", "EXPECTED", "FAIL", "TIMEOUT", "NOTRUN", "SKIP")
REFS = ("cupy", "nccl-tests", "torch")


def rows_of(path):
    """{coll: {bytes: [oop_us, oop_busbw, ip_us, ip_busbw]}} (None where N/A), float rows;
    and the header lines as {key: [values]} for `# key: value` lines."""
    rows, meta, coll = {}, {}, None
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return rows, meta
    for line in text.splitlines():
        m = re.match(r"# Collective test starting: (\w+)_perf", line)
        if m:
            coll = m.group(1)
            continue
        m = re.match(r"# (nccl-library|nccl-version|reference): (.*)", line)
        if m:
            meta.setdefault(m.group(1), []).append(m.group(2).strip())
            continue
        m = re.search(r"nccl-library=(\d+)", line)
        if m:
            meta.setdefault("nccl-code", []).append(m.group(1))
        f = line.split()
        if not f or f[0].startswith("#") or len(f) < 13 or coll is None:
            continue
        if len(f) == 12:
            f.insert(3, "")
        try:
            nbytes = int(f[0])
        except ValueError:
            continue
        if f[2] != "float":
            continue

        def num(x):
            try:
                return float(x)
            except ValueError:
                return None
        rows.setdefault(coll, {})[nbytes] = [num(f[5]), num(f[7]), num(f[9]), num(f[11])]
    return rows, meta


def human(n):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def ratio(a, b):
    return a / b if a is not None and b is not None and a > 0 and b > 0 else None


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def comparison(regime, tool, steps, raw, out):
    """One table per (regime, reference): rows per collective and size."""
    passed = [s for s in steps if s["name"].startswith(regime + "/") and s["status"] == "PASS"]
    if tool == "torch":
        passed += [s for s in steps if s["tool"] == "torch" and s["status"] == "PASS"]
    refs = [s for s in passed if s["tool"] == tool]
    if not refs:
        return
    nbs = [s for s in passed if s["tool"] == "ncclbench"]
    rnd = lambda s: (re.search(r"\.r(\d+)\.", s["name"]) or [None, "1"])[1]
    nb_runs = {}  # coll -> {round: rows}
    for s in nbs:
        nb_runs.setdefault(s["coll"], {})[rnd(s)] = rows_of(os.path.join(raw, s["name"] + ".txt"))[0].get(s["coll"], {})
    ref_runs = {}  # coll -> {round: rows}
    for s in refs:
        for coll, rows in rows_of(os.path.join(raw, s["name"] + ".txt"))[0].items():
            ref_runs.setdefault(coll, {})[rnd(s) if tool != "torch" else "all"] = rows
    out.append(f"\n### {regime}: ncclbench / {tool}"
               + (" (torch: one run, against the median of ncclbench's rounds)" if tool == "torch" else ""))
    out.append(f"{'collective':<14} {'bytes':>6} {'place':>5} {'nb_us':>9} {'ref_us':>9} {'time_ratio':>10} "
               f"{'spread':>13} {'rounds':>6} {'nb_busbw':>8} {'ref_busbw':>9} {'busbw_ratio':>11}")
    for coll in [c for c in dict.fromkeys(s["coll"] for s in nbs) if c in ref_runs]:
        nbr, rfr = nb_runs.get(coll, {}), ref_runs[coll]
        sizes = sorted({b for r in rfr.values() for b in r} & {b for r in nbr.values() for b in r})
        ratios_all = []
        for b in sizes:
            for place in (0, 2):  # out of place, in place
                nb_us = [r[b][place] for r in nbr.values() if b in r]
                ref_us = [r[b][place] for r in rfr.values() if b in r]
                if median(ref_us) is None or median(nb_us) is None:
                    continue
                if tool == "torch":
                    per_round = [ratio(median(nb_us), median(ref_us))]
                else:  # each round's pair
                    per_round = [ratio(nbr[k][b][place], rfr[k][b][place])
                                 for k in nbr if k in rfr and b in nbr[k] and b in rfr[k]]
                per_round = [x for x in per_round if x is not None]
                if not per_round:
                    continue
                tr = statistics.median(per_round)
                ratios_all.append(tr)
                nb_bw = median([r[b][place + 1] for r in nbr.values() if b in r])
                ref_bw = median([r[b][place + 1] for r in rfr.values() if b in r])
                out.append(f"{coll:<14} {human(b):>6} {'oop' if place == 0 else 'ip':>5} "
                           f"{median(nb_us):9.2f} {median(ref_us):9.2f} {tr:10.3f} "
                           f"{fmt(min(per_round)) + '..' + fmt(max(per_round)):>13} {len(per_round):>6} "
                           f"{fmt(nb_bw, '.2f'):>8} {fmt(ref_bw, '.2f'):>9} {fmt(ratio(nb_bw, ref_bw)):>11}")
        out.append(f"{coll:<14} geomean time ratio {fmt(geomean(ratios_all))} over {len(ratios_all)} "
                   f"size/placement pairs")


def libraries(steps, raw, outdir, out):
    """Each tool's NCCL version and library file, set against ncclbench's."""
    out.append("\n## NCCL library of each tool (all must be one file)")
    nb_path, nb_version = None, None
    try:
        e = json.load(open(os.path.join(outdir, "env.json")))["nccl"]
        nb_path, nb_version = e.get("path"), e.get("version")
    except (OSError, ValueError, KeyError, TypeError):
        pass
    out.append(f"ncclbench    {nb_version or '?':<10} {nb_path or '<none loaded>'}")
    seen = set()
    for s in steps:
        if s["tool"] not in REFS or s["tool"] in seen or s["status"] in ("NOTRUN", "SKIP"):
            continue
        rows, meta = rows_of(os.path.join(raw, s["name"] + ".txt"))
        if not meta:
            continue
        seen.add(s["tool"])
        if s["tool"] == "nccl-tests":
            code = (meta.get("nccl-code") or ["?"])[0]
            paths, version = [nb_path or "?"], f"code {code}"
        else:
            paths = meta.get("nccl-library", ["?"])
            version = (meta.get("nccl-version") or ["?"])[0].split()[0]
        same = len(paths) == 1 and nb_path is not None and os.path.realpath(paths[0]) == os.path.realpath(nb_path)
        verdict = "same file" if same else "DIFFERENT from ncclbench's: its times are not comparable"
        out.append(f"{s['tool']:<12} {version:<10} {', '.join(paths)}: {verdict}")


def warnings(steps, raw, out):
    lines = {}
    for s in steps:
        try:
            text = open(os.path.join(raw, s["name"] + ".err"), errors="replace").read()
        except OSError:
            continue
        for l in text.splitlines():
            if "NCCL WARN" in l:
                key = re.sub(r"^.*?NCCL WARN", "NCCL WARN", l)
                lines.setdefault(key, []).append(s["name"])
    out.append(f"\n## NCCL warnings (NCCL_DEBUG=WARN): {len(lines)} distinct")
    for l, where in lines.items():
        out.append(f"{len(where):4}x {l[:160]}  (first in {where[0]})")


def checks(steps, raw, out):
    out.append("\n## Data checks (-c 1): rows and wrong elements per run")
    for s in steps:
        if s["tool"] != "ncclbench" or s["status"] in ("NOTRUN", "SKIP"):
            continue
        wrong, rows = 0, 0
        for line in open(os.path.join(raw, s["name"] + ".txt"), errors="replace"):
            f = line.split()
            if len(f) >= 12 and not f[0].startswith("#") and f[0].isdigit():
                rows += 1
                wrong += sum(int(x) for x in (f[-5], f[-1]) if x.isdigit())
        if "-c 1" in s["note"]:
            out.append(f"{s['status']:<8} {s['name']:<36} {rows:5} rows, {wrong} wrong elements")


def main():
    work, outdir = sys.argv[1], sys.argv[2]
    raw = os.path.join(work, "raw")
    with open(os.path.join(raw, "steps.tsv"), newline="") as f:
        steps = list(csv.DictReader(f, delimiter="\t"))
    counts = {k: sum(s["status"] == k for s in steps) for k in STATUSES}
    failed = sum(counts[k] for k in NOT_PASSED)
    out = [f"# ncclbench GPU check: {'PASS' if failed == 0 else 'FAIL'}: {len(steps)} steps, "
           + ", ".join(f"{v} {k}" for k, v in counts.items() if v)]
    env_txt = os.path.join(outdir, "env.txt")
    if os.path.isfile(env_txt):
        out += ["# " + l for l in open(env_txt).read().splitlines()[:5] if l and not l.startswith("#")]
    libraries(steps, raw, outdir, out)
    out.append("\n## Steps in run order (wall: the whole run; end: seconds since the start)")
    out.append(f"{'status':<8} {'rc':>4} {'wall_s':>8} {'limit':>6} {'end_s':>7}  step")
    for s in steps:
        note = "" if s["status"] == "PASS" else "  " + s["note"]
        out.append(f"{s['status']:<8} {s['rc']:>4} {s['wall_s']:>8} {s['limit_s']:>6} "
                   f"{s['end_s']:>7}  {s['name']}{note}")
    out.append("\n## ncclbench / reference, per collective and size: time per call (median over rounds), "
               "time ratio (median of the rounds' ratios; > 1: ncclbench slower) and its spread; "
               "busbw '-' where one rank moves no bus bytes")
    for regime in ("small", "large"):
        for tool in REFS:
            comparison(regime, tool, steps, raw, out)
    warnings(steps, raw, out)
    checks(steps, raw, out)
    with open(os.path.join(outdir, "summary.txt"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
