"""scripts/gpu-check's verdicts, gathered: summary.json for programs, summary.txt for people.

    summary.py WORK OUT --mode gpu|emulated --binaries DIR --phases "preflight unit ..."
               [--started ISO] [--seconds S] [--commit C] [--emulated-gpus N] [--status N]

WORK holds cases.jsonl (record.py's cases) and phases.jsonl (each finished phase's time). Phases
asked for but not yet finished make the verdict INCOMPLETE (the summary is also written after each
phase, so that a run stopped from outside leaves one); where the caller gave up before them
(--status), they are NOT RUN. Prints summary.txt and exits with the run's status: 0 when nothing
failed, 1 when a check failed or a phase ran out of its time, 2 when only goals of speed were
missed, 3 when the run is incomplete; or --status, where the caller knows better (4: the run
could not start).
"""

import argparse
import json
import os
import sys
from collections import Counter, OrderedDict

VERDICTS = ("PASS", "FAIL", "SKIP", "INFO")


def read_lines(path):
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path, errors="replace"):
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a line cut short by a kill: the rest still counts
    return out


def phase_verdict(cases, finished, stopped):
    if finished is None:
        return "NOT RUN" if stopped else "INCOMPLETE"
    if finished.get("timed_out") or any(c["verdict"] == "FAIL" for c in cases):
        return "FAIL"
    if cases and all(c["verdict"] == "SKIP" for c in cases):
        return "SKIP"
    return "PASS"


def build(args):
    cases = read_lines(os.path.join(args.work, "cases.jsonl"))
    finished = {p["phase"]: p for p in read_lines(os.path.join(args.work, "phases.jsonl"))}
    asked = args.phases.split()
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
    counts = Counter(c["verdict"] for c in cases)
    check_failed = any(c["verdict"] == "FAIL" and c.get("kind") != "goal" for c in cases)
    goal_failed = any(c["verdict"] == "FAIL" and c.get("kind") == "goal" for c in cases)
    if check_failed or any(p["timed_out"] for p in phases):
        status, verdict = 1, "FAIL"
    elif goal_failed:
        status, verdict = 2, "FAIL"
    elif any(p["verdict"] == "INCOMPLETE" for p in phases):
        status, verdict = 3, "INCOMPLETE"
    else:
        status, verdict = 0, "PASS"
    return OrderedDict([
        ("schema", "braid gpu-check summary, version 1"),
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
        f"{c['FAIL']} failed, {c['SKIP']} skipped, {c['INFO']} facts, in {s['seconds']:.0f} s",
    ]
    for p in s["phases"]:
        if p["seconds"] is None:
            took = "not finished"
        else:
            took = f"{p['seconds']:.0f} s" + (f" of {p['limit']}" if p["limit"] else "")
            took += ", RAN OUT OF TIME" if p["timed_out"] else ""
        lines.append("")
        lines.append(f"{p['verdict']:<5} phase {p['name']} ({took})")
        groups = OrderedDict()
        for case in p["cases"]:
            groups.setdefault(case.get("group") or case["name"], []).append(case)
        for name, members in groups.items():
            if len(members) == 1 and "group" not in members[0]:
                m = members[0]
                lines.append(f"  {m['verdict']:<4} {m['seconds']:7.1f} s  {m['name']}: "
                             f"{clip(m['detail'], 120)}")
                continue
            n = Counter(m["verdict"] for m in members)
            verdict = "FAIL" if n["FAIL"] else "SKIP" if n["SKIP"] == len(members) else "PASS"
            seconds = sum(m["seconds"] for m in members)
            lines.append(f"  {verdict:<4} {seconds:7.1f} s  {name}: {len(members)} tests, "
                         f"{n['PASS']} passed, {n['FAIL']} failed, {n['SKIP']} skipped")
            odd = [m for m in members if m["verdict"] != "PASS"]
            odd.sort(key=lambda m: m["verdict"] != "FAIL")  # failures first
            for m in odd[:12]:
                lines.append(f"    {m['verdict']:<4} {m['name'][len(name) + 1:]}: "
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
