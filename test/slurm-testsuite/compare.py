#!/usr/bin/env python3
"""Compare the outcomes of Slurm's tests without and with the jobtap plugins.

    compare.py OUTDIR [LABEL]
    compare.py --differing OUTDIR     the node ids whose outcome differs, one a line

OUTDIR/{without,with}/results.jsonl are jobtap_sts.py's files, and
OUTDIR/MODE/seconds the wall time of that mode's run (and start-attempts
how many starts its cluster took). An outcome is one of
passed, failed (failed or error) and skipped. A test whose outcome differs
between the modes is a failure (a skip against a pass too); one that fails
in both is Slurm's or the cluster's, and is listed but not counted. Ends
with "N passed, N failed": the tests with equal outcomes, and those that
differ (plus one for a mode that did not run at all).

OUTDIR/MODE/results-again.jsonl, where the runner ran the differing tests
once more on the same clusters: a test that passes (or skips) in both
modes on that second run is a flake of Slurm's test (listed with both
runs, not counted); one that differs again, fails in both (run alone, a
test can miss what the tests before it set up), or was not run again, is
counted.
"""

import json
import os
import sys

MODES = ("without", "with")


def load(outdir, mode, name="results.jsonl"):
    path = os.path.join(outdir, mode, name)
    if not os.path.exists(path):
        return None
    results = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                results[r["nodeid"]] = r
    return results


def kind(outcome):
    return "failed" if outcome in ("failed", "error") else outcome


def number(outdir, mode, name):
    try:
        with open(os.path.join(outdir, mode, name)) as f:
            return float(f.read().strip())
    except (OSError, ValueError):
        return None


def differing(a, b):
    """(same, differ, both_failed) of two modes' results."""
    same, differ, both_failed = [], [], []
    for nodeid in sorted(set(a) | set(b)):
        ra, rb = a.get(nodeid), b.get(nodeid)
        ka = kind(ra["outcome"]) if ra else "absent"
        kb = kind(rb["outcome"]) if rb else "absent"
        if ka == kb == "failed":
            both_failed.append((nodeid, ra, rb))
        elif ka == kb:
            same.append(nodeid)
        else:
            differ.append((nodeid, ra, rb))
    return same, differ, both_failed


def main():
    if sys.argv[1] == "--differing":
        runs = [load(sys.argv[2], m) for m in MODES]
        if None not in runs:
            for nodeid, _, _ in differing(*runs)[1]:
                print(nodeid)
        return 0
    outdir = sys.argv[1]
    label = sys.argv[2] if len(sys.argv) > 2 else "Slurm"
    runs = {m: load(outdir, m) for m in MODES}
    again = {m: load(outdir, m, "results-again.jsonl") or {} for m in MODES}
    broken = [m for m in MODES if runs[m] is None]

    for m in MODES:
        res = runs[m]
        secs = number(outdir, m, "seconds")
        took = f", {secs / 60:.1f} min" if secs is not None else ""
        if (number(outdir, m, "start-attempts") or 1) > 1:
            took += " (its cluster started at the second try)"
        if res is None:
            print(f"{label}, {m} plugins: did not run{took}")
            continue
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        for r in res.values():
            counts[kind(r["outcome"])] += 1
        print(f"{label}, {m} plugins: {len(res)} run, {counts['passed']} passed, "
              f"{counts['failed']} failed, {counts['skipped']} skipped{took}")
        slow = sorted(res.values(), key=lambda r: -r["seconds"])[:5]
        print("  slowest: " + ", ".join(f"{r['nodeid'].split('/')[-1]} {r['seconds']:.0f} s"
                                          for r in slow))

    if broken:
        print(f"no comparison: the run {' and '.join(broken)} plugins gave no results")
        print(f"0 passed, {len(broken)} failed")
        return 1

    a, b = runs["without"], runs["with"]
    same, differ, both_failed = differing(a, b)
    # a difference that the second run does not show again
    flaky = []
    for d in list(differ):
        ra2, rb2 = again["without"].get(d[0]), again["with"].get(d[0])
        if ra2 and rb2 and kind(ra2["outcome"]) == kind(rb2["outcome"]) != "failed":
            differ.remove(d)
            flaky.append(d + (ra2, rb2))

    def out(r):
        return r["outcome"] if r else "absent"

    def msg(r):
        return (r["message"] or "-") if r else "not run"

    if differ:
        print(f"\nTests whose outcome differs ({len(differ)}, counted as failed):")
        w = max(len(n) for n, _, _ in differ)
        print(f"  {'test':<{w}}  {'without':<8} {'with':<8} with plugins / without")
        for nodeid, ra, rb in differ:
            print(f"  {nodeid:<{w}}  {out(ra):<8} {out(rb):<8} {msg(rb)}"
                  if kind(out(rb)) != "passed" else
                  f"  {nodeid:<{w}}  {out(ra):<8} {out(rb):<8} (without: {msg(ra)})")
    else:
        print("\nNo test's outcome differs between the modes.")
    if flaky:
        print(f"\nTests that differed once and not when run again ({len(flaky)}; "
              "flakes of Slurm's tests, not counted):")
        for nodeid, ra, rb, ra2, rb2 in flaky:
            print(f"  {nodeid}: first without {out(ra)}, with {out(rb)} ({msg(ra if kind(out(ra)) != 'passed' else rb)});"
                  f" again without {out(ra2)}, with {out(rb2)}")
    if both_failed:
        print(f"\nTests failing in both modes ({len(both_failed)}; Slurm's or the cluster's, not counted):")
        for nodeid, ra, rb in both_failed:
            print(f"  {nodeid}: {msg(rb)}" if msg(ra) == msg(rb) else
                  f"  {nodeid}: without: {msg(ra)} | with: {msg(rb)}")
    print(f"\n{len(same)} passed, {len(differ)} failed")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
