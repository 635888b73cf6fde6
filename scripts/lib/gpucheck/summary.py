"""scripts/gpu-check's verdicts, gathered: summary.json for programs, summary.txt for people.

    summary.py WORK OUT --mode gpu|emulated --binaries DIR --phases "preflight unit ..."
               [--started ISO] [--seconds S] [--commit C] [--emulated-gpus N] [--status N]

WORK holds cases.jsonl (record.py's cases) and phases.jsonl (each finished phase's time). A case
is PASS, FAIL, SKIP (a test found it does not apply here), INFO (a fact), NOT RUN (nothing to
compare with or no tool to check with here: no NVIDIA NCCL, no compute-sanitizer, no PyTorch on
CUDA, the emulated GPU) or INCOMPLETE (its time ran out, or its run ended, before it ran). A line
of either file that is not such a record fails the run as a case of its own, naming the line:
what cannot be read has not been seen to pass.

The run's verdict and exit status, the first that holds: FAIL (1) when a check failed; INCOMPLETE
(3) when a case is INCOMPLETE, a phase ran out of its time or phases asked for have not finished
(the summary is also written after each phase, so that a run stopped from outside leaves one;
where the caller gave up before them, --status, they are NOT RUN); FAIL (2) when only goals of
speed were missed; NOT RUN (5) when no case passed or failed but some were NOT RUN: nothing
asked for could be checked here; else PASS (0), which speaks only of what ran: the cases NOT RUN
are counted and named beside it. --status sets the status where the caller knows better (4: the
run could not start). Prints summary.txt and exits with the run's status.
"""

import argparse
import json
import os
import sys
from collections import Counter, OrderedDict

VERDICTS = ("PASS", "FAIL", "SKIP", "INFO", "NOT RUN", "INCOMPLETE")
KINDS = ("check", "goal", "info")


def read_lines(path):
    """(the JSON objects of a file, one a line; the lines that are none, as (number, text))."""
    if not os.path.exists(path):
        return [], []
    out, bad = [], []
    for number, line in enumerate(open(path, errors="replace"), 1):
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict):
            out.append((number, record))
        else:
            bad.append((number, line))
    return out, bad


def case_problem(case, asked):
    """Why a record of cases.jsonl is not a case summary.json can hold, or None."""
    for field, kind in (("phase", str), ("name", str), ("verdict", str), ("detail", str),
                        ("kind", str), ("seconds", (int, float))):
        if not isinstance(case.get(field), kind):
            return f"no {field}"
    if case["verdict"] not in VERDICTS:
        return f"no verdict {case['verdict']}"
    if case["kind"] not in KINDS:
        return f"no kind {case['kind']}"
    if case["phase"] not in asked:
        return f"phase {case['phase']} was not asked for"
    return None


def unreadable(what, number, text, why):
    """A case that fails the run for line NUMBER of WHAT.jsonl, which says TEXT."""
    return {"phase": "summary", "name": f"summary.{what}.line{number}", "verdict": "FAIL",
            "detail": f"line {number} of {what}.jsonl cannot be read ({why}): '{text[:160]}'",
            "seconds": 0.0, "kind": "check", "log": ""}


def read_work(work, asked):
    """(the cases, the finished phases by name, the summary's own cases: a FAIL for each line of
    cases.jsonl or phases.jsonl that it cannot read)."""
    records, bad = read_lines(os.path.join(work, "cases.jsonl"))
    own = [unreadable("cases", number, text, "not a JSON object") for number, text in bad]
    cases = []
    for number, case in records:
        problem = case_problem(case, asked)
        if problem:
            own.append(unreadable("cases", number, json.dumps(case), problem))
        else:
            cases.append(case)
    records, bad = read_lines(os.path.join(work, "phases.jsonl"))
    own += [unreadable("phases", number, text, "not a JSON object") for number, text in bad]
    finished = {}
    for number, p in records:
        if (isinstance(p.get("phase"), str) and isinstance(p.get("seconds"), (int, float)) and
                isinstance(p.get("limit"), int) and isinstance(p.get("timed_out"), bool)):
            finished[p["phase"]] = p
        else:
            own.append(unreadable("phases", number, json.dumps(p), "not a phase's time"))
    return cases, finished, own


def group_verdict(verdicts):
    """The verdict of a phase's (or a group's) cases: a failure first, then what its time left
    out; NOT RUN where nothing passed and something could not be checked here; SKIP where every
    case skipped; else PASS."""
    n = Counter(verdicts)
    if n["FAIL"]:
        return "FAIL"
    if n["INCOMPLETE"]:
        return "INCOMPLETE"
    if n["NOT RUN"] and not n["PASS"]:
        return "NOT RUN"
    if verdicts and n["SKIP"] == len(verdicts):
        return "SKIP"
    return "PASS"


def phase_verdict(cases, finished, stopped):
    if finished is None:
        return "NOT RUN" if stopped else "INCOMPLETE"
    verdict = group_verdict([c["verdict"] for c in cases])
    if finished["timed_out"] and verdict != "FAIL":
        return "INCOMPLETE"
    return verdict


def run_verdict(cases, phases):
    """(exit status, verdict) of the run, as the module's comment says."""
    n = Counter(c["verdict"] for c in cases)
    if any(c["verdict"] == "FAIL" and c["kind"] != "goal" for c in cases):
        return 1, "FAIL"
    if n["INCOMPLETE"] or any(p["verdict"] == "INCOMPLETE" or p["timed_out"] for p in phases):
        return 3, "INCOMPLETE"
    if n["FAIL"]:
        return 2, "FAIL"
    if n["NOT RUN"] and not n["PASS"]:
        return 5, "NOT RUN"
    return 0, "PASS"


def build(args):
    asked = args.phases.split()
    cases, finished, own = read_work(args.work, asked)
    phases = []
    for name in asked:
        mine = [c for c in cases if c["phase"] == name]
        done = finished.get(name)
        phases.append({
            "name": name,
            "verdict": phase_verdict(mine, done, args.status is not None),
            "seconds": done["seconds"] if done else None,
            "limit": done["limit"] if done else None,
            "timed_out": bool(done and done["timed_out"]),
            "counts": {v: sum(c["verdict"] == v for c in mine) for v in VERDICTS},
            "cases": mine,
        })
    if own:
        # What the summary could not read, as a phase of its own, so that the table shows it.
        phases.append({"name": "summary", "verdict": "FAIL", "seconds": None, "limit": None,
                       "timed_out": False,
                       "counts": {v: len(own) if v == "FAIL" else 0 for v in VERDICTS},
                       "cases": own})
        cases = cases + own
    status, verdict = run_verdict(cases, phases)
    counts = Counter(c["verdict"] for c in cases)
    return OrderedDict([
        ("schema", "braid gpu-check summary, version 2"),
        ("verdict", verdict),
        ("exit_status", status),
        ("mode", args.mode),
        ("emulated_gpus", args.emulated_gpus or None),
        ("binaries", args.binaries),
        ("commit", args.commit or None),
        ("started", args.started or None),
        ("seconds", args.seconds),
        ("phases_asked", asked),
        ("counts", {v: counts.get(v, 0) for v in VERDICTS}),
        ("not_run", [c["name"] for c in cases if c["verdict"] == "NOT RUN"]),
        ("incomplete", [c["name"] for c in cases if c["verdict"] == "INCOMPLETE"]),
        ("phases", phases),
    ])


def clip(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def render(s):
    c = s["counts"]
    mode = ("emulated GPU (BRAID_EMULATE_GPUS=%s)" % s["emulated_gpus"] if s["mode"] == "emulated"
            else "GPU")
    lines = [
        f"# gpu-check on {mode}: binaries {s['binaries']}"
        + (f", commit {s['commit'][:12]}{s['commit'][40:]}" if s["commit"] else "")
        + f", {s['started'] or ''}",
        f"# verdict: {s['verdict']} (exit status {s['exit_status']}): {c['PASS']} passed, "
        f"{c['FAIL']} failed, {c['INCOMPLETE']} incomplete, {c['NOT RUN']} not run, "
        f"{c['SKIP']} skipped, {c['INFO']} facts, in {s['seconds']:.0f} s",
    ]
    # What a PASS does not cover, said beside it rather than left to the counts.
    for key, what in (("incomplete", "not run for want of time"),
                      ("not_run", "not run: nothing to compare with or check with here")):
        if s[key]:
            names = ", ".join(s[key])
            lines.append(f"# {what} ({len(s[key])}): {clip(names, 200)}")
    if s["verdict"] == "PASS" and s["not_run"]:
        lines.append("# PASS speaks of what ran: the cases not run above were not checked")
    for p in s["phases"]:
        if p["name"] == "summary" and p["name"] not in s["phases_asked"]:
            took = "lines of the verdicts that cannot be read"
        elif p["seconds"] is None:
            took = "not finished"
        else:
            took = f"{p['seconds']:.0f} s" + (f" of {p['limit']}" if p["limit"] else "")
            took += ", RAN OUT OF TIME" if p["timed_out"] else ""
        lines.append("")
        lines.append(f"{p['verdict']:<10} phase {p['name']} ({took})")
        groups = OrderedDict()
        for case in p["cases"]:
            groups.setdefault(case.get("group") or case["name"], []).append(case)
        for name, members in groups.items():
            if len(members) == 1 and "group" not in members[0]:
                m = members[0]
                lines.append(f"  {m['verdict']:<10} {m['seconds']:7.1f} s  {m['name']}: "
                             f"{clip(m['detail'], 120)}")
                continue
            n = Counter(m["verdict"] for m in members)
            seconds = sum(m["seconds"] for m in members)
            counted = ", ".join(f"{n[v]} {word}" for v, word in (
                ("PASS", "passed"), ("FAIL", "failed"), ("INCOMPLETE", "incomplete"),
                ("NOT RUN", "not run"), ("SKIP", "skipped")) if n[v] or v in ("PASS", "FAIL"))
            lines.append(f"  {group_verdict([m['verdict'] for m in members]):<10} {seconds:7.1f} s"
                         f"  {name}: {len(members)} tests, {counted}")
            order = ("FAIL", "INCOMPLETE", "NOT RUN", "SKIP", "INFO")
            odd = [m for m in members if m["verdict"] != "PASS"]
            odd.sort(key=lambda m: order.index(m["verdict"]))  # failures first
            for m in odd[:12]:
                lines.append(f"    {m['verdict']:<10} {m['name'][len(name) + 1:]}: "
                             f"{clip(m['detail'], 110)}")
            if len(odd) > 12:
                lines.append(f"    ... and {len(odd) - 12} more (summary.json)")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("out")
    parser.add_argument("--mode", required=True, choices=("gpu", "emulated"))
    parser.add_argument("--binaries", required=True)
    parser.add_argument("--phases", required=True)
    parser.add_argument("--started", default="")
    parser.add_argument("--seconds", type=float, default=0.0)
    parser.add_argument("--commit", default="")
    parser.add_argument("--emulated-gpus", default="")
    parser.add_argument("--status", type=int, help="the exit status, where the caller decides it")
    args = parser.parse_args()
    s = build(args)
    if args.status is not None:
        s["exit_status"] = args.status
        s["verdict"] = "PASS" if args.status == 0 else "FAIL"
    files = (("summary.json", json.dumps(s, indent=1) + "\n"), ("summary.txt", render(s)))
    for name, text in files:
        tmp = os.path.join(args.out, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(args.out, name))  # never half a file, even when killed
    print(render(s), end="")
    return s["exit_status"]


if __name__ == "__main__":
    sys.exit(main())
