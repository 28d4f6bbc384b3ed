#!/usr/bin/env python3
"""t0950's checker, after a restart: every job the streams saw acknowledged,
against Slurm (squeue, dumped in W/squeue) and jobtap (the control socket,
one connection, docs/cli.md "The protocol"). Python 3 standard library only.

    kill_check.py W SOCKET

W holds the streams' files: wait, release, plain ("ID NAME SENT ACKED"
per acknowledged submission: when it was sent, when its reply was seen),
ops ("hold|release|update ID SENT ACKED" per acknowledged scontrol), tries
("release ID SENT", written before each release is sent: one a kill cut
off may have been made), kills ("SENT GONE" per SIGKILL: when it was
sent, when slurmctld was seen gone), restarts ("SENT DONE" per
reconfigure that restarts slurmctld in place, 24.11) and squeue
("ID|NAME|TIMELIMIT|REASON|STATE"). Prints one "BAD ..." line per broken
rule, then the counts: ACKED, LOST (jobs Slurm itself lost: acknowledged,
gone after the next kill) with the window (the longest time from acknowledgement to
the kill that lost a job), KEPT (waiting jobs whose history goes back
to before a kill) and ENDED_UNKNOWN (jobs Slurm shows ended that jobtap no
longer has).

The rules. A job Slurm kept has its jobtap state: one submit, first; a
waiting job ("wait-KEY") still held once, by its own dependency, both in
jobtap and in Slurm's reason, unless "release-KEY" was submitted; released
(no dependency, no jobtap hold) when Slurm kept that release job; its
dependency added once, before the kill (kept, not rebuilt). A plain job's
jobtap duration is Slurm's time limit; urgency 0 exactly when Slurm has it
held by its user or an operator; held when its hold was acknowledged and
no release was tried; no jobtap hold left. A job Slurm lost has no jobtap state
left, or its id belongs to a later job whose history begins after the
kill. A job Slurm shows ended may be unknown to jobtap: a restart restores
the jobs that have not ended, as flux-core's job manager reloads only its
active jobs (the streams' jobs wait behind the blocker and end only when
Slurm lost the blocker).
"""
import json
import math

# squeue's names of the states IS_JOB_FINISHED tells (a job in them is not
# restored by jobtap after a restart)
ENDED = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
         "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}
import socket
import struct
import sys


def lines(w, name):
    try:
        with open(f"{w}/{name}") as f:
            return [l.split() for l in f if l.strip()]
    except FileNotFoundError:
        return []


class Control:
    """A connection to slurmctld's jobtap control socket."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(10)
        self.s.connect(path)

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("control socket closed")
            buf += chunk
        return buf

    def job(self, jobid):
        req = json.dumps({"op": "job", "id": int(jobid)}).encode()
        self.s.sendall(struct.pack(">I", len(req)) + req)
        (n,) = struct.unpack(">I", self._read(4))
        resp = json.loads(self._read(n))
        return resp["result"] if resp.get("ok") else None


def minutes(limit):
    """squeue's time limit (M:SS, H:MM:SS or D-H:MM:SS) in minutes."""
    days = 0
    if "-" in limit:
        d, limit = limit.split("-", 1)
        days = int(d)
    parts = [int(x) for x in limit.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return days * 1440 + parts[0] * 60 + parts[1]


def main():
    w, sock = sys.argv[1], sys.argv[2]
    ctl = Control(sock)
    slurm = {}
    for l in open(f"{w}/squeue"):
        f = l.rstrip("\n").split("|")
        if len(f) >= 5:
            slurm[f[0]] = {"name": f[1], "limit": f[2], "reason": f[3], "state": f[4]}
    kills = sorted([(float(l[0]), float(l[1]), "kill") for l in lines(w, "kills")]
                   + [(float(l[0]), float(l[1]), "restart")
                      for l in lines(w, "restarts")])
    acked = sorted(((l[0], l[1], float(l[2]), float(l[3]))
                    for n in ("wait", "release", "plain") for l in lines(w, n)),
                   key=lambda a: (int(a[0]), a[3]))
    ops, tries = {}, {}
    for op, jobid, sent, t in lines(w, "ops"):
        ops.setdefault(jobid, []).append((float(sent), float(t), op))
    for op, jobid, sent in lines(w, "tries"):
        tries.setdefault(jobid, []).append((float(sent), op))
    released = {l[1][len("release-"):] for l in lines(w, "release")}
    released_kept = {j["name"][len("release-"):] for j in slurm.values()
                     if j["name"].startswith("release-")}

    def next_kill(t):
        """The time the first kill that can have lost a job acknowledged
        at t was sent. A stream writes its time just after the reply:
        a reply the killed slurmctld sent can be stamped a little after
        the kill was sent, not after it was gone (0.5 s: a busy stream)."""
        return next(((sent, kind) for sent, gone, kind in kills
                     if gone > t - 0.5), (None, None))

    bad, lost = [], []
    kept_history = ended_unknown = 0
    for jobid, name, sent, t in acked:
        j = ctl.job(jobid)
        s = slurm.get(jobid)
        if s is None or s["name"] != name:
            k, kind = next_kill(t)
            if k is None:
                bad.append(f"{jobid} {name}: gone from Slurm with no kill after it")
                continue
            lost.append((kind, max(0.0, k - t)))
            if s is None:
                if j is not None and j["state_name"] != "INACTIVE":
                    bad.append(f"{jobid} {name}: Slurm lost it, jobtap has it "
                               f"in {j['state_name']}")
            elif j is None and s["state"] in ENDED:
                ended_unknown += 1  # the later job ended
            # (a job bound after a restart opened the kept state begins
            # with Slurm's submit time, in whole seconds)
            elif (j is None or not j["eventlog"]
                  or j["eventlog"][0]["timestamp"] < math.floor(k)):
                bad.append(f"{jobid} {name}: lost by Slurm, its id taken by "
                           f"{s['name']}, but jobtap shows a history from before "
                           f"the kill")
            continue
        if j is None and s["state"] in ENDED:
            ended_unknown += 1
            continue
        if j is None:
            bad.append(f"{jobid} {name}: Slurm has it, jobtap does not")
            continue
        log = j["eventlog"]
        names = [e["name"] for e in log]
        if not log or names[0] != "submit" or names.count("submit") != 1:
            bad.append(f"{jobid} {name}: eventlog {names[:4]}... does not start "
                       f"with its one submit")
        if s["state"] != "PENDING":
            continue  # (the blocker is checked by the test itself)
        reason, deps = s["reason"], j["dependencies"]
        # ops on this id (the update stream picks plain jobs' ids, which a
        # job Slurm lost leaves to the next): one sent after this job's
        # reply reached it; one sent before and answered after this job
        # was sent may have reached it or the job Slurm lost before it
        on_id = ops.get(jobid, [])
        mine = [o for (o_sent, _, o) in on_id if o_sent >= t]
        maybe = [o for (o_sent, o_acked, o) in on_id
                 if o_sent < t and o_acked > sent]
        if name.startswith("wait-") and ("release" in mine
                                         or "release" in maybe):
            continue  # an operator's release overrides a jobtap hold
        if name.startswith("wait-"):
            key = name[len("wait-"):]
            adds = [e for e in log if e["name"] == "dependency-add"]
            if len(adds) != 1:
                bad.append(f"{jobid} {name}: {len(adds)} dependency-add events")
            if key in released_kept:
                if deps or reason.startswith("jobtap"):
                    bad.append(f"{jobid} {name}: released by release-{key}, "
                               f"held again: {deps} / {reason}")
            elif key not in released:
                want = f"wait for release-{key}"
                # a plain job Slurm lost leaves its id, and the hold made on
                # it after the kill, to this job: then its user holds it too
                also = "; also held by its user" if "hold" in mine else ""
                reasons = {f"jobtap: {want}{also}"}
                if "hold" in maybe:
                    reasons.add(f"jobtap: {want}; also held by its user")
                if deps != [want] or reason not in reasons:
                    bad.append(f"{jobid} {name}: not held once for release-{key}: "
                               f"{deps} / {reason}")
            k, _ = next_kill(t)
            if adds and k is not None and k - t > 1:
                if adds[0]["timestamp"] > k:
                    bad.append(f"{jobid} {name}: eventlog rebuilt after the kill, "
                               f"not kept: {names}")
                else:
                    kept_history += 1
        elif name.startswith("plain-"):
            duration = j["jobspec"]["attributes"]["system"].get("duration")
            if duration != 60.0 * minutes(s["limit"]):
                bad.append(f"{jobid} {name}: jobtap's duration {duration}, Slurm's "
                           f"time limit {s['limit']}")
            held = reason in ("JobHeldUser", "JobHeldAdmin")  # root holds as admin
            if (j["urgency"] == 0) != held:
                bad.append(f"{jobid} {name}: urgency {j['urgency']}, Slurm's "
                           f"reason {reason!r}")
            # a release sent but not acknowledged (cut off by a kill) may
            # have been made before it
            tried = [o for (o_sent, o) in tries.get(jobid, []) if o_sent >= sent]
            if ("hold" in mine and "release" not in mine
                    and "release" not in tried and not held):
                bad.append(f"{jobid} {name}: held by its user (acknowledged), "
                           f"released: {reason!r}, urgency {j['urgency']}")
            if reason.startswith("jobtap") or deps:
                bad.append(f"{jobid} {name}: a jobtap hold left: {deps} / {reason}")
    for b in bad:
        print("BAD " + b)
    print(f"ACKED {len(acked)}")
    at_kill = [a for kind, a in lost if kind == "kill"]
    at_restart = [a for kind, a in lost if kind == "restart"]
    print(f"LOST {len(at_kill)} WINDOW {max(at_kill, default=0.0):.2f}")
    print(f"RESTART_LOST {len(at_restart)} WINDOW "
          f"{max(at_restart, default=0.0):.2f}")
    print(f"KEPT {kept_history}")
    print(f"ENDED_UNKNOWN {ended_unknown}")


if __name__ == "__main__":
    main()
