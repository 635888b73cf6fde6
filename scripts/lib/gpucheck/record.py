"""Verdicts of scripts/gpu-check, one JSON object a line in a file that summary.py reads.

    record.py phase FILE --name N --seconds S --limit L [--timed-out]
    record.py gtest FILE --phase P --group G --list LIST --log LOG --rc RC --limit L
                         [--note TEXT] [--fail-skips REGEX] [--not-run WHY]
    record.py list LIST

A single case is written by record.sh's gc_record, in the same format, so that a phase's dozens
of cases do not start Python each. `phase` says how long a phase took. `gtest` turns one run of a
GoogleTest binary (its --gtest_list_tests output and its console log) into a case per test: a test that
printed OK passes, FAILED or a test that started and never ended (a crash, the group's time out)
fails, SKIPPED skips, and a test that never started because the run ended first is a SKIP that
says so; a skip whose reason matches --fail-skips (a device missing where the check found one)
fails. A non-zero exit status after every test passed fails the group itself, and so does a filter
that selects no test. It exits 1 when any of its cases failed, so that the caller keeps the
flight-recorder dumps. `list` prints the tests of a --gtest_list_tests output, one a line.
"""

import argparse
import json
import re
import sys

def append(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def listed_tests(path):
    """The tests of a --gtest_list_tests output, as Suite.Test, disabled ones left out."""
    tests, suite = [], None
    for line in open(path, errors="replace"):
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split()[0]  # "Suite." (with its "  # TypeParam" comment cut)
        elif suite is not None:
            name = line.split()[0]
            if not name.startswith("DISABLED_") and not suite.startswith("DISABLED_"):
                tests.append(suite + name)
    return tests


RESULT = re.compile(r"^\[\s*(OK|FAILED|SKIPPED)\s*\] ([^\s,]+)(.*)$")
RUN = re.compile(r"^\[ RUN\s*\] (\S+)")
MS = re.compile(r"\((\d+) ms\)\s*$")


def why(lines, verdict):
    """The first failure (or skip) message among a test's lines, on one line."""
    marker = ": Failure" if verdict == "FAIL" else ": Skipped"
    for i, line in enumerate(lines):
        if marker in line:
            text = " ".join(part.strip() for part in lines[i + 1:i + 4] if part.strip())
            return text[:300]
    return ""


def gtest_cases(log_path):
    """{test: (verdict, seconds, detail)} for the tests the log says ended, and the tests that
    started and never ended (one per run of the binary at most: a crash, a timeout)."""
    done, unfinished, current, lines = {}, [], None, []
    for raw in open(log_path, errors="replace"):
        line = raw.rstrip("\n")
        m = RUN.match(line)
        if m:
            if current is not None:
                unfinished.append(current)
            current, lines = m.group(1), []
            continue
        m = RESULT.match(line)
        if m and m.group(2) == current:
            verdict = {"OK": "PASS", "FAILED": "FAIL", "SKIPPED": "SKIP"}[m.group(1)]
            ms = MS.search(m.group(3))
            seconds = int(ms.group(1)) / 1000 if ms else 0.0
            done[current] = (verdict, seconds, why(lines, verdict))
            current = None
            continue
        if current is not None:
            lines.append(line)
    if current is not None:
        unfinished.append(current)
    return done, unfinished


def add_gtest(args):
    tests = listed_tests(args.list)
    done, unfinished = gtest_cases(args.log)
    note = args.note
    failed = False
    for test in tests:
        name = f"{args.group}.{test}"
        if test in done:
            verdict, seconds, detail = done[test]
            if verdict == "SKIP" and args.fail_skips and re.search(args.fail_skips, detail):
                verdict, detail = "FAIL", f"skipped on a machine with the device: {detail}"
        elif test in unfinished:
            verdict, seconds = "FAIL", 0.0
            if args.rc in (124, 137) and test == unfinished[-1]:
                detail = f"did not finish within the group's {args.limit} s: a hang?"
            else:
                detail = "did not finish: the binary ended inside it (a crash?)"
        else:
            verdict, seconds = "SKIP", 0.0
            detail = f"not run: {args.not_run}" + (f" (in {unfinished[-1]})" if unfinished else "")
        if verdict == "FAIL":
            failed = True
            detail += args.note
        append(args.file, {"phase": args.phase, "name": name, "group": args.group,
                           "verdict": verdict, "detail": detail or "", "seconds": seconds,
                           "kind": "check", "log": args.log_name})
    if not tests:
        failed = True
        append(args.file, {"phase": args.phase, "name": args.group, "group": args.group,
                           "verdict": "FAIL", "detail": f"no test matched its filter{note}",
                           "seconds": 0.0, "kind": "check", "log": args.log_name})
    elif args.rc != 0 and not failed:
        failed = True
        append(args.file, {"phase": args.phase, "name": args.group, "group": args.group,
                           "verdict": "FAIL",
                           "detail": f"exit status {args.rc} although every test passed{note}",
                           "seconds": 0.0, "kind": "check", "log": args.log_name})
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    phase = sub.add_parser("phase")
    phase.add_argument("file")
    phase.add_argument("--name", required=True)
    phase.add_argument("--seconds", type=float, required=True)
    phase.add_argument("--limit", type=int, required=True)
    phase.add_argument("--timed-out", action="store_true")
    gtest = sub.add_parser("gtest")
    gtest.add_argument("file")
    gtest.add_argument("--phase", required=True)
    gtest.add_argument("--group", required=True)
    gtest.add_argument("--list", required=True)
    gtest.add_argument("--log", required=True)
    gtest.add_argument("--log-name", default="")
    gtest.add_argument("--rc", type=int, required=True)
    gtest.add_argument("--limit", type=int, required=True)
    gtest.add_argument("--note", default="")
    gtest.add_argument("--fail-skips", default="")
    gtest.add_argument("--not-run", default="the run ended before it")
    sub.add_parser("list").add_argument("list")
    args = parser.parse_args()
    if args.what == "phase":
        append(args.file, {"phase": args.name, "seconds": args.seconds, "limit": args.limit,
                           "timed_out": args.timed_out})
        return 0
    if args.what == "list":
        print("\n".join(listed_tests(args.list)))
        return 0
    return add_gtest(args)


if __name__ == "__main__":
    sys.exit(main())
