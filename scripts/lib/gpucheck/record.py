"""Verdicts of scripts/gpu-check, one JSON object a line in a file that summary.py reads.

    record.py phase FILE --name N --seconds S --limit L [--timed-out]
    record.py gtest FILE --phase P --group G --list LIST --log LOG --rc RC --limit L
                         [--note TEXT] [--fail-skips REGEX] [--not-run WHY]
    record.py list LIST

A single case is written by record.sh's gc_record, in the same format, so that a phase's dozens
of cases do not start Python each. `phase` says how long a phase took. `gtest` turns one run of a
GoogleTest binary (its --gtest_list_tests output and its console log) into a case per test: a test
that printed OK passes, FAILED or a test that started and never ended (a crash, the group's time
out) fails, SKIPPED skips, and a test that never started because the run or the time ended first
is INCOMPLETE: it checked nothing, and the run cannot pass without it. A skip whose reason matches
--fail-skips (a device missing where the check found one) fails. A non-zero exit status after
every test passed fails the group itself, and so does a filter that selects no test. A line of
the list or the log that GoogleTest's grammar does not allow (a marker cut short, a result for a
test that never started, a marker in the middle of a line) fails the group as `<group>.output`,
naming the line: a test whose result line cannot be read has not been seen to pass. It exits 1
when any of its cases failed, so that the caller keeps the flight-recorder dumps, else 3 when some
are INCOMPLETE, else 0; 2 where it could not read them at all (its own error). `list` prints the
tests of a --gtest_list_tests output, one a line.
"""

import argparse
import json
import re
import sys
import traceback


def append(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


# --gtest_list_tests: "Suite." (typed: "Suite/0.  # TypeParam = int") and "  Test" (parameterized:
# "  Test/0  # GetParam() = 4").
LIST_SUITE = re.compile(r"^(\S+\.)(\s+# .*)?$")
LIST_TEST = re.compile(r"^  (\S+)(\s+# .*)?$")
# braid's (or NCCL's) log lines, which a binary may print as it starts (perf_table.awk allows the
# same in a table).
LOG_LINE = re.compile(r"^(\S+:\d+:\d+ (\[\d+\] )?(braid|NCCL)|braid) [A-Z]+ ")


def listed_tests(path):
    """(the tests of a --gtest_list_tests output as Suite.Test, disabled ones left out; its lines
    that are neither a suite, a test nor a log line, as (number, text))."""
    tests, unreadable, suite = [], [], None
    for number, line in enumerate(open(path, errors="replace"), 1):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        m = LIST_SUITE.match(line)
        if m:
            suite = m.group(1)
            continue
        m = LIST_TEST.match(line)
        if m and suite is not None:
            name = m.group(1)
            if not name.startswith("DISABLED_") and not suite.startswith("DISABLED_"):
                tests.append(suite + name)
            continue
        if not LOG_LINE.match(line):
            unreadable.append((number, line))
    return tests, unreadable


# GoogleTest's console output: a 12-character marker at the start of a line, then what it says.
MARKER = re.compile(r"^\[([ A-Z=-]{10})\] (.*)$")
# A marker anywhere else: a test's output that ran into GoogleTest's line, which then no longer
# reads as the result it was.
MARKER_INSIDE = re.compile(r".\[ *(RUN|OK|FAILED|SKIPPED|PASSED|DISABLED) *\] "
                           r"|.\[(==========|----------)\] ")
# Every marker: a line that is the start of one, and no more of it, is a marker cut short.
MARKERS = ("[ RUN      ] ", "[       OK ] ", "[  FAILED  ] ", "[  SKIPPED ] ", "[  PASSED  ] ",
           "[ DISABLED ] ", "[==========] ", "[----------] ", "[  DEATH   ] ")
# "Suite.Test (12 ms)", "P/Suite.Test/0, where GetParam() = 4 (3 ms)", "Suite.Test" (no time).
NAMED = re.compile(r"^([^\s,]+)(, where .*?)?(?: \((\d+) ms\))?$")
COUNT = r"\d+ tests?"
# What the other markers may say.
OTHER = {
    "==========": re.compile(rf"^(Running {COUNT} from \d+ test suites?\.|"
                             rf"{COUNT} from \d+ test suites? ran\.( \(\d+ ms total\))?)$"),
    "----------": re.compile(rf"^(Global test environment (set-up\.|tear-down)|"
                             rf"{COUNT} from \S+(, where .*)?( \(\d+ ms total\))?)$"),
    "  PASSED  ": re.compile(rf"^{COUNT}\.$"),
}
SUMMARY_COUNT = re.compile(rf"^{COUNT}(, listed below:|\.)$")
SUITE_FAILED = re.compile(r"^(\S+): SetUpTestSuite or TearDownTestSuite$")
VERDICT = {"       OK ": "PASS", "  FAILED  ": "FAIL", "  SKIPPED ": "SKIP"}


def why(lines, verdict):
    """The first failure (or skip) message among a test's lines, on one line."""
    marker = ": Failure" if verdict == "FAIL" else ": Skipped"
    for i, line in enumerate(lines):
        if marker in line:
            text = " ".join(part.strip() for part in lines[i + 1:i + 4] if part.strip())
            return text[:300]
    return ""


class GtestLog:
    """One or more runs of a GoogleTest binary, read from its console log: the tests that ended
    (done: {test: (verdict, seconds, detail)}), those that started and never ended (unfinished: a
    crash, a timeout; one per run of the binary at most), the suites whose set-up or tear-down
    failed, and the lines GoogleTest's grammar does not allow (unreadable: (number, text, why,
    the test running then)). Lines without a marker are the tests' own output."""

    def __init__(self, path, tests):
        self.listed = set(tests)
        self.done, self.unfinished, self.suites, self.unreadable = {}, [], [], []
        self.current, self.lines = None, []
        for number, raw in enumerate(open(path, errors="replace"), 1):
            line, within = raw.rstrip("\n"), self.current
            problem = self.read(line)
            if problem:
                self.unreadable.append((number, line, problem, within))
        if self.current is not None:
            self.unfinished.append(self.current)

    def read(self, line):
        """Takes one line in; returns why it cannot be read, or None."""
        m = MARKER.match(line)
        if not m:
            if MARKER_INSIDE.search(line):
                return "GoogleTest's marker inside a line"
            if len(line) > 1 and any(m.startswith(line) for m in MARKERS):
                return "a marker cut short"
            if self.current is not None:
                self.lines.append(line)
            return None
        marker, text = m.groups()
        if marker == "  DEATH   ":  # a death test's child, quoted where the test failed
            self.lines.append(line)
            return None
        if marker == " RUN      ":
            if text not in self.listed:
                return "a test that --gtest_list_tests did not list"
            if self.current is not None:
                self.unfinished.append(self.current)
            self.current, self.lines = text, []
            return None
        if marker in OTHER:
            return None if OTHER[marker].match(text) else "not what this marker says"
        if marker == " DISABLED ":
            return None if "DISABLED_" in text else "a disabled test not named DISABLED_"
        if marker not in VERDICT:
            return "no such marker"
        verdict = VERDICT[marker]
        n = NAMED.match(text)
        if n and n.group(1) == self.current:
            seconds = int(n.group(3)) / 1000 if n.group(3) else 0.0
            self.done[self.current] = (verdict, seconds, why(self.lines, verdict))
            self.current = None
            return None
        # The run's summary: "2 tests, listed below:", then each failed (skipped) test again.
        if verdict != "PASS" and SUMMARY_COUNT.match(text):
            return None
        if verdict == "FAIL" and SUITE_FAILED.match(text):
            self.suites.append(SUITE_FAILED.match(text).group(1))
            return None
        if (verdict != "PASS" and n and n.group(3) is None and
                self.done.get(n.group(1), (None,))[0] == verdict):
            return None
        if n is None:
            return "not a result as GoogleTest prints one"
        return f"a result for {n.group(1)} while {self.current or 'no test'} ran"


def gtest_case(args, name, verdict, detail, seconds=0.0):
    append(args.file, {"phase": args.phase, "name": name, "group": args.group, "verdict": verdict,
                       "detail": detail, "seconds": seconds, "kind": "check",
                       "log": args.log_name})


def add_gtest(args):
    tests, unlisted = listed_tests(args.list)
    log = GtestLog(args.log, tests)
    verdicts = []
    for test in tests:
        seconds = 0.0
        if test in log.done:
            verdict, seconds, detail = log.done[test]
            if verdict == "SKIP" and args.fail_skips and re.search(args.fail_skips, detail):
                verdict, detail = "FAIL", f"skipped on a machine with the device: {detail}"
        elif test in log.unfinished:
            verdict = "FAIL"
            garbled = [number for number, _, _, within in log.unreadable if within == test]
            if garbled:
                detail = (f"did not end as GoogleTest ends a test: line {garbled[0]} cannot be "
                          "read (its .output case)")
            elif args.rc in (124, 137) and test == log.unfinished[-1]:
                detail = f"did not finish within the group's {args.limit} s: a hang?"
            else:
                detail = "did not finish: the binary ended inside it (a crash?)"
        else:
            verdict = "INCOMPLETE"
            detail = f"not run: {args.not_run}" + (
                f" (in {log.unfinished[-1]})" if log.unfinished else "")
        if verdict == "FAIL":
            detail += args.note
        verdicts.append(verdict)
        gtest_case(args, f"{args.group}.{test}", verdict, detail or "", seconds)
    # What the group itself says: a case each, named after the group.
    problems = []
    if not tests:
        problems.append(("", "no test matched its filter"))
    for number, text in unlisted[:1]:
        more = f" (and {len(unlisted) - 1} more)" if len(unlisted) > 1 else ""
        problems.append((".list", f"line {number} of its --gtest_list_tests output is no suite or "
                         f"test: '{text[:160]}'{more}"))
    for number, text, problem, _ in log.unreadable[:1]:
        more = f" (and {len(log.unreadable) - 1} more)" if len(log.unreadable) > 1 else ""
        problems.append((".output", f"line {number} of {args.log_name or args.log} cannot be "
                         f"read as GoogleTest's output ({problem}): '{text[:160]}'{more}"))
    for suite in log.suites:
        problems.append((f".{suite}", "SetUpTestSuite or TearDownTestSuite failed"))
    if tests and args.rc != 0 and "FAIL" not in verdicts and not problems:
        problems.append(("", f"exit status {args.rc} although no test failed"))
    for suffix, detail in problems:
        verdicts.append("FAIL")
        gtest_case(args, args.group + suffix, "FAIL", detail + args.note)
    return 1 if "FAIL" in verdicts else 3 if "INCOMPLETE" in verdicts else 0


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
        print("\n".join(listed_tests(args.list)[0]))
        return 0
    return add_gtest(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # told apart from 1 (a case failed): the caller records the group's failure
        traceback.print_exc()
        sys.exit(2)
