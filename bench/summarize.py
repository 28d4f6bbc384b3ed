#!/usr/bin/env python3
"""Medians, ratios and added cost per job from bench sample lines.

Each input line is key=value pairs: sched=, mode=, optionally load=, rep=,
and the client's rate= (jobs/s, settled) and ctld_cpu_us= (slurmctld CPU
per job). Prints Markdown tables. No pass/fail: targets are only marked.
"""
import statistics
import sys

NAMES = {
    "a": "a: no job_submit plugin",
    "b": "b: Slurm job_submit/lua",
    "c": "c: jobtap, C plugin",
    "d": "d: jobtap, Lua policy",
}


def parse(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for line in f:
                kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
                if "mode" in kv and "rate" in kv:
                    rows.append(kv)
    return rows


def med(rows, key):
    vals = [float(r[key]) for r in rows if key in r]
    return statistics.median(vals) if vals else float("nan")


def throughput(rows):
    for sched in sorted({r["sched"] for r in rows}):
        sub = [r for r in rows if r["sched"] == sched and "load" not in r]
        if not sub:
            continue
        modes = sorted({r["mode"] for r in sub})
        rate = {m: med([r for r in sub if r["mode"] == m], "rate") for m in modes}
        cpu = {m: med([r for r in sub if r["mode"] == m], "ctld_cpu_us") for m in modes}
        n = {m: len([r for r in sub if r["mode"] == m]) for m in modes}
        print(f"\n### SchedulerParameters={sched}\n")
        print("| mode | samples | median jobs/s | x/a | added wall per job (1/x - 1/a) | slurmctld CPU per job | added CPU per job |")
        print("|---|---|---|---|---|---|---|")
        a = rate.get("a")
        for m in modes:
            ratio = rate[m] / a if a else float("nan")
            added = (1 / rate[m] - 1 / a) * 1e6 if a else float("nan")
            dcpu = cpu[m] - cpu["a"] if "a" in cpu else float("nan")
            print(f"| {NAMES.get(m, m)} | {n[m]} | {rate[m]:.0f} | {ratio:.3f} | {added:+.0f} us | {cpu[m]:.0f} us | {dcpu:+.0f} us |")
        if a and "c" in rate:
            ca = rate["c"] / a
            print(f"\nc/a = {ca:.3f} (target >= 0.97: {'met' if ca >= 0.97 else 'MISSED'})")
        if a and "b" in rate and "d" in rate:
            ab = 1 / rate["b"] - 1 / a
            ad = 1 / rate["d"] - 1 / a
            if ab > 0:
                print(f"d/a = {rate['d'] / a:.3f}; Lua policy adds {ad * 1e6:.0f} us/job, "
                      f"job_submit/lua {ab * 1e6:.0f} us/job: ratio {ad / ab:.2f} "
                      f"(target <= 0.5: {'met' if ad <= 0.5 * ab else 'MISSED'})")
            else:
                print(f"d/a = {rate['d'] / a:.3f}; Lua policy adds {ad * 1e6:.0f} us/job; "
                      f"job_submit/lua was not slower than a here ({ab * 1e6:.0f} us/job): "
                      "wall-time ratio undefined, see the CPU line")
            cb = cpu["b"] - cpu["a"]
            cd = cpu["d"] - cpu["a"]
            if cb > 0:
                print(f"by slurmctld CPU: Lua policy adds {cd:.0f} us/job, job_submit/lua {cb:.0f} us/job: ratio {cd / cb:.2f}")
            else:
                print(f"by slurmctld CPU: Lua policy adds {cd:.0f} us/job, job_submit/lua {cb:.0f} us/job (within noise)")


def scale(rows):
    sub = [r for r in rows if "load" in r]
    if not sub:
        return
    print("\n### Scale: submissions with 0 and with N pending jobs\n")
    print("| mode | pending jobs | samples | median jobs/s | slurmctld CPU per job | rate vs 0 jobs |")
    print("|---|---|---|---|---|---|")
    for m in sorted({r["mode"] for r in sub}):
        base = None
        for load in sorted({r["load"] for r in sub if r["mode"] == m}, key=int):
            s = [r for r in sub if r["mode"] == m and r["load"] == load]
            rate = med(s, "rate")
            if base is None:
                base = rate
            print(f"| {NAMES.get(m, m)} | {load} | {len(s)} | {rate:.0f} | {med(s, 'ctld_cpu_us'):.0f} us | {rate / base:.3f} |")


def main():
    rows = parse(sys.argv[1:])
    if not rows:
        print("no samples", file=sys.stderr)
        return 1
    throughput(rows)
    scale(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
