#!/usr/bin/env python3
"""The end of scripts/gpu-check.sh: `ncclbench compare` per configuration, then summary.txt.

Usage: gpu-check-summary.py NCCLBENCH WORK OUTDIR SECONDS
  WORK/raw holds the step manifest steps.tsv (one line per step, in run order), configs.tsv and
  every step's stdout (NAME.txt); SECONDS bounds all compare runs together. Writes
  OUTDIR/compare.txt (every configuration's report), OUTDIR/compare.json (the main -c 0 pair's),
  WORK/raw/compare/<config>/ (compare --out) and OUTDIR/summary.txt, and appends one manifest
  line per compare run. Standard library only: the GPU machine has python3 but nothing else.

Both tools print the nccl-tests text table, so one parser reads both; a line that is not a
table row (headers, NCCL's own lines) is skipped.
"""

import csv
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

FIELDS = ["name", "tool", "config", "coll", "status", "rc", "wall_s", "limit_s", "end_s", "note"]
NOT_PASSED = ("FAIL", "TIMEOUT", "NOTRUN")
MAIN = "c0"


def read_manifest(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def append_manifest(path, row):
    with open(path, "a") as f:
        f.write("\t".join(str(row.get(k, "")) for k in FIELDS) + "\n")


def rows_of(path):
    """Table rows: {(type, op, root, bytes): (oop_us, oop_busbw, oop_wrong, ip_us, ip_busbw, ip_wrong)}."""
    rows = {}
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return rows
    for line in lines:
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if len(f) == 12:  # hypercube prints an empty op
            f.insert(3, "")
        try:
            key = (f[2], f[3], int(f[4]), int(f[0]))
            num = [float(f[i]) for i in (5, 7, 9, 11)]
        except (ValueError, IndexError):
            continue
        wrong = [None if f[i] == "N/A" else float(f[i]) for i in (8, 12)]
        rows[key] = (num[0], num[1], wrong[0], num[2], num[3], wrong[1])
    return rows


def human(n):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def ratio(a, b):
    return a / b if a and b and a > 0 and b > 0 else None


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def run_compares(bin_, raw, steps, seconds, manifest):
    """One compare per configuration with both sides: nccl-tests before, ncclbench after."""
    reports, stop = [], time.monotonic() + seconds
    for config in dict.fromkeys(s["config"] for s in steps):
        side = {t: [os.path.join(raw, s["name"] + ".txt") for s in steps
                    if s["config"] == config and s["tool"] == t and s["status"] == "PASS"]
                for t in ("nccl-tests", "ncclbench")}
        if config == "correctness" or not side["nccl-tests"] or not side["ncclbench"]:
            continue
        dest = os.path.join(raw, "compare", config)
        argv = [bin_, "compare"] + [a for p in side["nccl-tests"] for a in ("--before", p)]
        argv += [a for p in side["ncclbench"] for a in ("--after", p)] + ["--out", dest]
        start, left = time.monotonic(), stop - time.monotonic()
        if left < 2:
            append_manifest(manifest, dict(name=f"compare/{config}", tool="compare", config=config,
                                           coll="-", status="NOTRUN", rc="-", wall_s=0, limit_s=0,
                                           end_s="", note="budget spent"))
            continue
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=min(left, 60))
            rc, text = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            rc, text = 124, "compare timed out\n"
        status = {0: "PASS", 1: "SLOWER", 124: "TIMEOUT"}.get(rc, "FAIL")
        os.makedirs(dest, exist_ok=True)
        with open(dest + ".txt", "w") as f:
            f.write(text)
        append_manifest(manifest, dict(name=f"compare/{config}", tool="compare", config=config,
                                       coll="-", status=status, rc=rc,
                                       wall_s=f"{time.monotonic() - start:.2f}", limit_s=int(left),
                                       end_s="", note=f"{len(side['nccl-tests'])} nccl-tests files "
                                       f"before, {len(side['ncclbench'])} ncclbench after: {verdict(dest, text)}"))
        reports.append((config, status, text, verdict(dest, text)))
    return reports


def verdict(dest, text):
    """compare's totals from its JSON, else its last line."""
    try:
        with open(os.path.join(dest, "compare.json")) as f:
            t = json.load(f)["totals"]
        return (f"{t['compared']} sizes compared: {t['slower']} slower, {t['faster']} faster, "
                f"{t['unchanged']} unchanged")
    except (OSError, ValueError, KeyError):
        return ([l for l in text.splitlines() if l.strip()][-1:] or ["no output"])[0]


def ratio_section(config, desc, steps, raw, out):
    """Per collective and size: median over rounds of each tool, and their ratios."""
    out.append(f"\n### {config}: {desc}")
    out.append("collective      bytes   nb_us(oop)   nt_us(oop)  time_ratio  ip_time_ratio"
               "  nb_busbw  nt_busbw  busbw_ratio")
    for coll in dict.fromkeys(s["coll"] for s in steps if s["config"] == config):
        per = {}
        for t in ("ncclbench", "nccl-tests"):
            files = [rows_of(os.path.join(raw, s["name"] + ".txt")) for s in steps
                     if s["config"] == config and s["coll"] == coll and s["tool"] == t
                     and s["status"] == "PASS"]
            keys = sorted({k for f in files for k in f}, key=lambda k: (k[0], k[1], k[2], k[3]))
            per[t] = {k: [statistics.median(f[k][i] for f in files if k in f) for i in (0, 1, 3)]
                      for k in keys}
        nb, nt = per["ncclbench"], per["nccl-tests"]
        both = [k for k in nb if k in nt]
        for k in both:
            tr, ipr = ratio(nb[k][0], nt[k][0]), ratio(nb[k][2], nt[k][2])
            out.append(f"{coll:<14} {human(k[3]):>6}  {nb[k][0]:11.2f}  {nt[k][0]:11.2f}  "
                       f"{fmt(tr):>10}  {fmt(ipr):>13}  {nb[k][1]:8.2f}  {nt[k][1]:8.2f}  "
                       f"{fmt(ratio(nb[k][1], nt[k][1])):>11}")
        big = [ratio(nb[k][0], nt[k][0]) for k in both if k[3] >= 1 << 20]
        only = len(nb) + len(nt) - 2 * len(both)
        out.append(f"{coll:<14} geomean time ratio: all sizes {fmt(geomean(ratio(nb[k][0], nt[k][0]) for k in both))}"
                   f", >= 1M {fmt(geomean(big))}; {len(both)} sizes in common"
                   + (f", {only} rows in one tool only" if only else "")
                   + ("" if both else " (a side is missing: see the steps)"))


def wall_section(steps, configs, out):
    out.append("\n## Wall time of each whole run (s), ncclbench / nccl-tests; -c 1 minus -c 0 is the cost of checking")
    head = ["c0", "c1"] + [c for c in configs if c not in ("c0", "c1")] + ["correctness"]
    out.append("collective      " + "".join(f"{c:>22}" for c in head))
    for coll in dict.fromkeys(s["coll"] for s in steps if s["tool"] in ("ncclbench", "nccl-tests")):
        cells = []
        for c in head:
            w = {t: [s["wall_s"] for s in steps if s["config"] == c and s["coll"] == coll
                     and s["tool"] == t and s["status"] not in ("NOTRUN", "SKIP")]
                 for t in ("ncclbench", "nccl-tests")}
            cells.append(f"{'+'.join(w['ncclbench']) or '-'} / {'+'.join(w['nccl-tests']) or '-'}")
        if any(c != "- / -" for c in cells):
            out.append(f"{coll:<16}" + "".join(f"{c:>22}" for c in cells))


def check_cost_section(steps, out):
    """Wall time of a whole -c 1 sweep against -c 0 (first round) per tool, ncclbench's host
    verification (vhost) beside its device one, and ncclbench's -c 1 over nccl-tests' (the
    goal is at most 1.5)."""
    def wall(config, coll, tool, name=None):
        for s in steps:
            if (s["config"], s["coll"], s["tool"]) == (config, coll, tool) \
                    and s["status"] not in ("NOTRUN", "SKIP") and (name is None or name in s["name"]):
                return float(s["wall_s"])
        return None

    def ratio(a, b):
        return f"{a / b:.2f}" if a is not None and b else "-"

    def cell(v):
        return f"{v:.2f}" if v is not None else "-"

    out.append("\n## -c 1 cost: wall time of one whole sweep (s); device = --verify device, host = --verify host")
    out.append(f"{'collective':<16}{'nb c0':>9}{'nb c1 dev':>11}{'nb c1 host':>12}{'nb dev/c0':>11}"
               f"{'nb host/c0':>12}{'nt c0':>9}{'nt c1':>9}{'nt c1/c0':>10}{'nb c1/nt c1':>13}")
    for coll in dict.fromkeys(s["coll"] for s in steps if s["config"] in ("c1", "vhost")):
        nb0, nb1 = wall("c0", coll, "ncclbench", ".r1."), wall("c1", coll, "ncclbench")
        nbh = wall("vhost", coll, "ncclbench")
        nt0, nt1 = wall("c0", coll, "nccl-tests", ".r1."), wall("c1", coll, "nccl-tests")
        out.append(f"{coll:<16}{cell(nb0):>9}{cell(nb1):>11}{cell(nbh):>12}{ratio(nb1, nb0):>11}"
                   f"{ratio(nbh, nb0):>12}{cell(nt0):>9}{cell(nt1):>9}{ratio(nt1, nt0):>10}"
                   f"{ratio(nb1, nt1):>13}")


def checks_section(steps, raw, out):
    out.append("\n## Data checks: wrong elements in every run that verified (-c 1)")
    for s in steps:
        if s["tool"] not in ("ncclbench", "nccl-tests") or s["status"] in ("NOTRUN", "SKIP"):
            continue
        rows = rows_of(os.path.join(raw, s["name"] + ".txt"))
        checked = [w for r in rows.values() for w in (r[2], r[5]) if w is not None]
        if checked:
            out.append(f"{s['status']:<8} {s['name']:<44} {len(rows):5} rows, "
                       f"{int(sum(checked))} wrong elements")


def main():
    bin_, work, outdir, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    raw = os.path.join(work, "raw")
    manifest = os.path.join(raw, "steps.tsv")
    steps = read_manifest(manifest)
    configs = {}
    for line in open(os.path.join(raw, "configs.tsv")).read().splitlines():
        if "\t" in line:
            k, v = line.split("\t", 1)
            configs[k] = v
    reports = run_compares(bin_, raw, steps, seconds, manifest)
    with open(os.path.join(outdir, "compare.txt"), "w") as f:
        for config, status, text, _ in reports:
            f.write(f"==== {config}: {configs.get(config, '')} "
                    f"(before: nccl-tests, after: ncclbench) [{status}]\n{text}\n")
    main_json = os.path.join(raw, "compare", MAIN, "compare.json")
    if os.path.isfile(main_json):
        shutil.copy(main_json, os.path.join(outdir, "compare.json"))
    steps = read_manifest(manifest)
    counts = {k: sum(s["status"] == k for s in steps)
              for k in ("PASS", "SLOWER", "FAIL", "TIMEOUT", "NOTRUN", "SKIP")}
    failed = sum(counts[k] for k in NOT_PASSED)
    out = [f"# ncclbench GPU check: {'PASS' if failed == 0 else 'FAIL'}: {len(steps)} steps, "
           + ", ".join(f"{v} {k}" for k, v in counts.items() if v)]
    env_txt = os.path.join(outdir, "env.txt")
    if os.path.isfile(env_txt):
        out += ["# " + l for l in open(env_txt).read().splitlines()[:6] if l and not l.startswith("#")]
    out.append("\n## Steps in run order (wall: the whole run; end: seconds since the start)")
    out.append(f"{'status':<8} {'rc':>4} {'wall_s':>8} {'limit':>6} {'end_s':>7}  step")
    for s in steps:
        note = "" if s["status"] == "PASS" else "  " + s["note"]
        out.append(f"{s['status']:<8} {s['rc']:>4} {s['wall_s']:>8} {s['limit_s']:>6} "
                   f"{s['end_s']:>7}  {s['name']}{note}")
    out.append("\n## ncclbench / nccl-tests: median over rounds, out-of-place unless named; "
               "time ratio > 1: ncclbench slower; busbw '-' where a side is 0 (one rank moves no bus bytes)")
    for config, desc in configs.items():
        if any(s["config"] == config for s in steps):
            ratio_section(config, desc, steps, raw, out)
    wall_section(steps, configs, out)
    check_cost_section(steps, out)
    checks_section(steps, raw, out)
    out.append("\n## compare (full reports in compare.txt)")
    for config, status, _, said in reports:
        out.append(f"{config:<8} {status:<8} {said}")
    with open(os.path.join(outdir, "summary.txt"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
