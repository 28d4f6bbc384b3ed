#!/usr/bin/env python3
"""Medians, ratios and added cost per job from bench sample lines.

Each input line is key=value pairs: sched=, mode=, optionally load=, rep=,
and the client's rate= (jobs/s, settled) and ctld_cpu_us= (slurmctld CPU
per job). Prints Markdown tables. No pass/fail: targets are only marked,
with a bootstrap interval: on a shared VM one mode's samples spread by
10-20%, and a target is only called met or missed when the interval is on
one side of it.
"""
import random
import statistics
import sys

NAMES = {
    "a": "a: no job_submit plugin",
    "b": "b: Slurm job_submit/lua",
    "c": "c: jobtap, C plugin",
    "k": "k: c without the kept state (state-dir = \"\")",
    "d": "d: jobtap, Lua policy",
    "e": "e: as c, with 100 service calls/s",
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


def interval(samples, stat, n=2000, lo=0.05, hi=0.95):
    """The lo..hi quantiles of stat over bootstrap resamples of each mode's
    samples (seeded: the same input gives the same interval)."""
    rng = random.Random(1)
    vals = []
    for _ in range(n):
        pick = {m: [rng.choice(v) for _ in v] for m, v in samples.items()}
        try:
            vals.append(stat({m: statistics.median(v) for m, v in pick.items()}))
        except ZeroDivisionError:
            continue
    vals.sort()
    if not vals:
        return float("nan"), float("nan")
    return vals[int(lo * (len(vals) - 1))], vals[int(hi * (len(vals) - 1))]


def verdict(lo, hi, ok):
    """'met' or 'MISSED' when the whole interval says so, else undecided."""
    if ok(lo) and ok(hi):
        return "met"
    if not ok(lo) and not ok(hi):
        return "MISSED"
    return "not resolved by this run's noise"


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
        rates = {m: [float(r["rate"]) for r in sub if r["mode"] == m] for m in modes}
        if a and "c" in rate:
            ca = rate["c"] / a
            lo, hi = interval({m: rates[m] for m in "ac"}, lambda x: x["c"] / x["a"])
            print(f"\nc/a = {ca:.3f}, 90% interval {lo:.3f} to {hi:.3f} "
                  f"(target >= 0.97: {verdict(lo, hi, lambda v: v >= 0.97)})")
        if a and "b" in rate and "d" in rate:
            ab = 1 / rate["b"] - 1 / a
            ad = 1 / rate["d"] - 1 / a

            # The ratio of two small differences swings wildly with noise;
            # the target is the same as a margin in us per job, half of
            # b's added cost minus d's, which does not.
            def margin(x):
                return (0.5 * (1 / x["b"] - 1 / x["a"]) - (1 / x["d"] - 1 / x["a"])) * 1e6

            lo, hi = interval({m: rates[m] for m in "abd"}, margin)
            if ab > 0:
                print(f"d/a = {rate['d'] / a:.3f}; Lua policy adds {ad * 1e6:.0f} us/job, "
                      f"job_submit/lua {ab * 1e6:.0f} us/job: ratio {ad / ab:.2f}")
                print(f"margin (half of job_submit/lua's added cost minus the Lua "
                      f"policy's) {margin(rate):+.1f} us/job, 90% interval {lo:+.1f} to {hi:+.1f} "
                      f"(target <= 0.5, margin >= 0: {verdict(lo, hi, lambda v: v >= 0)})")
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
