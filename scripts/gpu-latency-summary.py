#!/usr/bin/env python3
"""The summary of scripts/gpu-latency.sh: per collective and size, the median over rounds of
each variant's out-of-place and in-place time per call, and each ncclbench variant's ratio to
nccl-tests run the same way (nb-core2 against nt-core2, nb-cpu against nt-cpu); then the steps,
the fp8 checks' skip lines and exit codes, and the NCCL INFO lines that differ between the two
tools' init."""
import glob, os, re, statistics, sys

raw = sys.argv[1]


def rows(path):
    """{size: (oop_time, ip_time)} of a text output."""
    out = {}
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) >= 13 and not line.startswith("#") and f[0].isdigit():
            try:
                out[int(f[0])] = (float(f[5]), float(f[9]))
            except ValueError:
                pass
    return out


runs = {}
for p in glob.glob(os.path.join(raw, "*.r*.txt")):
    coll, variant, _ = os.path.basename(p)[: -len(".txt")].split(".")
    runs.setdefault(coll, {}).setdefault(variant, []).append(rows(p))

pairs = [("nb", "nt"), ("nb-vhost", "nt"), ("nb-core2", "nt-core2"), ("nb-cpu", "nt-cpu")]
for coll in sorted(runs):
    v = runs[coll]
    med = {}
    for name, outs in v.items():
        sizes = sorted(set().union(*[o.keys() for o in outs]))
        med[name] = {
            s: tuple(statistics.median(o[s][i] for o in outs if s in o) for i in (0, 1))
            for s in sizes
        }
    print(f"## {coll}: median of {max(len(o) for o in v.values())} rounds, time per call (us), oop/ip")
    head = "bytes".rjust(8) + "".join(f"{a + '/' + b:>26}" for a, b in pairs)
    print(head)
    sizes = sorted(med.get("nt", {}))
    ratios = {p: [] for p in pairs}
    for s in sizes:
        line = f"{s:>8}"
        for a, b in pairs:
            if s in med.get(a, {}) and s in med.get(b, {}):
                x, y = med[a][s], med[b][s]
                line += f"  {x[0]:6.2f}/{y[0]:6.2f} {x[1]:5.2f}/{y[1]:5.2f}"
                if y[0] > 0:
                    ratios[(a, b)].append(x[0] / y[0])
            else:
                line += " " * 26
        print(line)
    for p, r in ratios.items():
        if r:
            g = statistics.geometric_mean(r)
            print(f"  {p[0]}/{p[1]} oop geomean ratio {g:.3f} over {len(r)} sizes")
    print()

print("## steps")
print(open(os.path.join(raw, "steps.txt")).read())
print("## fp8 checks")
for p in sorted(glob.glob(os.path.join(raw, "*.fp8-all.txt"))):
    txt = open(p, errors="replace").read()
    print(os.path.basename(p), "rows:", sum(1 for l in txt.splitlines() if l[:1] == " " and l.split()[:1] and l.split()[0].isdigit()))
    for l in txt.splitlines():
        if "skipping" in l or "Out of bounds" in l or "error" in l.lower():
            print("  ", l)
    err = open(p[:-4] + ".err", errors="replace").read().strip()
    if err:
        print("  stderr:", err[-500:])
print()
print("## NCCL INFO lines only one tool printed (pids, pointers and numbers masked)")
for coll in ("all_reduce", "sendrecv"):
    def lines(tool):
        p = os.path.join(raw, f"{coll}.{tool}.info.txt")
        e = os.path.join(raw, f"{coll}.{tool}.info.err")
        text = ""
        for f in (p, e):
            if os.path.exists(f):
                text += open(f, errors="replace").read()
        keep = set()
        for l in text.splitlines():
            if "NCCL INFO" not in l:
                continue
            l = l.split("NCCL INFO", 1)[1]
            l = re.sub(r"0x[0-9a-f]+", "0x?", l)
            l = re.sub(r"\b\d+\.\d+(ms|s)\b", "T", l)
            l = re.sub(r"pid \d+|Pid \d+", "pid ?", l)
            l = re.sub(r"busId [0-9a-f]+", "busId ?", l)
            l = re.sub(r"(total|init|allocated|hash)[^,]*", r"\1 ?", l)
            keep.add(l.strip())
        return keep
    nb, nt = lines("nb"), lines("nt")
    print(f"### {coll}: ncclbench only")
    for l in sorted(nb - nt):
        print("  ", l)
    print(f"### {coll}: nccl-tests only")
    for l in sorted(nt - nb):
        print("  ", l)
