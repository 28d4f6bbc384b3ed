"""pytest plugin for running Slurm's testsuite/python on a private cluster.

Loaded by test/slurm-testsuite/run (``-p jobtap_sts``); it changes no test.

* After each test module, every job left in the queue is cancelled and the
  node is waited for (local-config mode cancels nothing: a module's
  ``sleep 600`` jobs would otherwise hold the node for the modules after it).
  A node left drained or down is resumed; each such step is noted in
  cleanup.log beside the results file.
* Each test's outcome is written to the file ``--jobtap-results`` names,
  one JSON object a line: nodeid, outcome (passed, failed, error, skipped),
  a one-line message and the seconds it took.
"""

import json
import os
import re
import subprocess
import time

import pytest


def pytest_addoption(parser):
    parser.addoption("--jobtap-results", default=None,
                     help="write each test's outcome here (JSON lines)")


_results = {}
_notes = None  # the cleanup's notes: cleanup.log beside the results


def _note(text):
    if _notes:
        with open(_notes, "a") as f:
            f.write(text + "\n")


def pytest_configure(config):
    global _notes
    path = config.getoption("--jobtap-results")
    if path:
        _notes = os.path.join(os.path.dirname(os.path.abspath(path)), "cleanup.log")


def _one_line(text, limit=300):
    text = " ".join(str(text).split())
    # pytest's assertion detail names objects by address: the same failure
    # must read the same in both modes
    text = re.sub(r" at 0x[0-9a-f]+", "", text).split(" + where ")[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _message(report):
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip
        msg = longrepr[2]
        return _one_line(msg[len("Skipped: "):] if msg.startswith("Skipped: ") else msg)
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return _one_line(crash.message)
    lines = [l for l in str(longrepr).splitlines() if l.strip()]
    errors = [l for l in lines if l.lstrip().startswith("E ")]
    return _one_line((errors or lines or [""])[-1])


def pytest_runtest_logreport(report):
    r = _results.setdefault(report.nodeid, {"nodeid": report.nodeid, "outcome": None,
                                            "message": "", "seconds": 0.0})
    r["seconds"] += getattr(report, "duration", 0.0) or 0.0
    if report.when == "setup":
        if report.failed:
            r["outcome"], r["message"] = "error", _message(report)
        elif report.skipped:
            r["outcome"], r["message"] = "skipped", _message(report)
    elif report.when == "call":
        if hasattr(report, "wasxfail"):
            r["outcome"] = "skipped"
            r["message"] = _one_line("xfail: " + str(report.wasxfail))
        elif report.failed:
            r["outcome"], r["message"] = "failed", _message(report)
        elif report.skipped:
            r["outcome"], r["message"] = "skipped", _message(report)
        else:
            r["outcome"] = "passed"
    elif report.when == "teardown":
        if report.failed and r["outcome"] in (None, "passed", "skipped"):
            r["outcome"], r["message"] = "error", "teardown: " + _message(report)


def pytest_collectreport(report):
    if report.failed:  # a module that does not import
        _results[report.nodeid] = {"nodeid": report.nodeid, "outcome": "error",
                                   "message": "collection: " + _message(report),
                                   "seconds": 0.0}


def _run(cmd, timeout=30):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (subprocess.TimeoutExpired, OSError) as e:
        return subprocess.CompletedProcess(cmd, 1, "", str(e))


def _clean_cluster(after):
    jobs = _run(["squeue", "-h", "-o", "%i"]).stdout.split()
    if jobs:
        _note(f"cancelled {len(jobs)} job(s) left by {after}")
        _run(["scancel"] + jobs)
        deadline = time.time() + 90
        while time.time() < deadline:
            if not _run(["squeue", "-h", "-o", "%i"]).stdout.strip():
                break
            time.sleep(0.5)
        else:
            _note(f"jobs still queued 90 s after {after}")
    # A node a test left drained, down or failing is given back.
    out = _run(["sinfo", "-h", "-N", "-o", "%N %T"]).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and any(s in parts[1] for s in ("drain", "down", "fail")):
            _note(f"node {parts[0]} {parts[1]} after {after}: resumed")
            _run(["scontrol", "update", f"nodename={parts[0]}", "state=resume"])
    deadline = time.time() + 60
    while time.time() < deadline:
        states = _run(["sinfo", "-h", "-N", "-o", "%T"]).stdout.split()
        if states and all(s == "idle" for s in states):
            return
        time.sleep(0.5)
    _note(f"node not idle 60 s after {after}: {states}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield  # the test's and (at a module's end) the module's fixtures end first
    if nextitem is None or nextitem.module is not item.module:
        _clean_cluster(item.module.__name__)


def pytest_sessionfinish(session):
    path = session.config.getoption("--jobtap-results")
    if not path:
        return
    with open(path, "w") as f:
        for r in _results.values():
            if r["outcome"] is None:  # only a teardown report was seen
                r["outcome"] = "error"
            f.write(json.dumps(r) + "\n")
