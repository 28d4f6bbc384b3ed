#!/usr/bin/env python3
"""Per-job figures of a slurmctld callgrind dump of N submissions.

    callgrind_annotate --tree=caller --inclusive=yes DUMP | ctld_summary.py N

The whole slurmctld, the submission RPCs, our entry points, and the
periodic work whose amount depends on how long the run took rather than
on the jobs: Slurm's scheduler passes (the function that calls
build_job_queue, static and so unnamed in a stripped slurmctld) and its
job state saves. The whole less those is what compares modes: a mode
that runs longer under valgrind fits more passes into its run.
"""
import re
import sys

LINE = re.compile(r"\s*([\d,]+) \([^)]*\)\s+([<*>])\s+(\S+)")


def read(lines):
    inclusive, callers, total = {}, {}, 0
    block = []
    for line in lines:
        if "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
            continue
        m = LINE.match(line)
        if not m:
            block = []
            continue
        count = int(m.group(1).replace(",", ""))
        kind, fn = m.group(2), m.group(3)
        if kind == "<":
            block.append((count, fn))
        elif kind == "*":
            inclusive[fn] = inclusive.get(fn, 0) + count
            callers[fn] = block
            block = []
    return total, inclusive, callers


def main():
    n = int(sys.argv[1])
    total, inclusive, callers = read(sys.stdin)

    def of(suffix):
        # (one function may be listed under two spellings of its file)
        return max((v for f, v in inclusive.items() if f.endswith(suffix)),
                   default=0)

    queue = [c for fn, cs in callers.items()
             if fn.endswith(":build_job_queue") for c in cs]
    passes = inclusive.get(max(queue)[1], 0) if queue else 0
    saves = of(":dump_all_job_state")
    hook = of("job_submit_jobtap.c:job_submit")
    site = of("site_factor_jobtap.c:site_factor_p_set")
    agent = of("agent.c:agent_main")

    def k(x):
        return f"{x / n / 1000:.2f}k"

    rpc = of(":slurmctld_req")
    print(f"per job ({n} jobs): whole {k(total)}; less scheduler passes "
          f"and job state saves {k(total - passes - saves)}")
    print(f"  submission RPCs {k(rpc)}; ours: job_submit {k(hook)}, "
          f"site_factor {k(site)}, agent {k(agent)}, "
          f"all {k(hook + site + agent)}")
    print(f"  periodic: scheduler passes {k(passes)}, "
          f"job state saves {k(saves)}")


if __name__ == "__main__":
    main()
