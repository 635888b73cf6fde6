"""The perf phase's numbers (scripts/lib/gpucheck/perf.sh): braid-perf's and braid-kernel-bench's
tables read back, judged against issue 27's goals.

    perf_goals.py registers DUMP           one line on cuobjdump --dump-resource-usage's output
    perf_goals.py goals LOGS CASES --emulated 0|1
                                           the goals and figures, added to CASES (record.py's file)
    perf_goals.py versus BRAID_LOG NCCL_LOG   one line: braid's table against NVIDIA's NCCL's

The goals: the engine's reduce loop reaches 85% of the device-to-device copy; N = 2 ranks on one
GPU reach 85% of the bound the copy gives for the bytes their ring moves; an 8 B all_reduce of 2
ranks takes under 10 us. A goal with nothing to be judged against (on the emulated GPU, with its
case failed or out of time) is NOT RUN or INCOMPLETE, which summary.py counts apart from PASS.
None compares braid with NVIDIA's NCCL: on one GPU NCCL refuses two ranks, and at N = 1 both only
copy. `versus` is phase multigpu's figure, a rank on each GPU.

The copy bound: a ring all_reduce of S bytes on N ranks moves, through each rank's memory, in
units of S / N: 2 for the first send (read the input, write the peer's FIFO), 3 for each of the
N - 2 receive-reduce-sends (read the FIFO and the input, write the next FIFO), 4 for the last
reduction (read two, write the output and the next FIFO), 3 for each of the N - 2 copies of the
gather and 2 for the last receive: (6N - 4) / N of the buffer per rank, (6N - 4) S in all, at the
copy's bandwidth (which counts bytes read plus written). N = 1 gives 2S: the copy itself.
"""

import argparse
import json
import os
import re
import subprocess
import sys

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perf_table.awk")


class NotJudged(Exception):
    """Why a goal could not be judged, and the verdict that says so: NOT RUN where its case did
    not run or failed on its own (nothing to compare), INCOMPLETE where its case ran out of time,
    FAIL where the case passed but its table cannot be read or lacks what the goal needs."""

    def __init__(self, verdict, why):
        super().__init__(why)
        self.verdict, self.why = verdict, why


def rows_of(path, kind):
    """The rows of a braid-perf (kind perf) or braid-kernel-bench (kernels) log as perf_table.awk
    reads them, the same grammar as the case's; raises NotJudged (FAIL) on a line it cannot
    read."""
    run = subprocess.run(["awk", "-v", f"table={kind}", "-f", TABLE, path], capture_output=True,
                         text=True, errors="replace")
    if run.returncode != 0:
        raise NotJudged("FAIL", f"logs/{os.path.basename(path)} could not be read: "
                        f"{run.stderr.strip()[:160]}")
    rows = []
    for line in run.stdout.splitlines():
        f = line.split("\t")
        if f[0] == "unreadable":
            raise NotJudged("FAIL", f"line {f[1]} of logs/{os.path.basename(path)} cannot be "
                            f"read: '{f[2][:160]}'")
        rows.append(f[1:])
    return rows


def table(path):
    """{size: (out-of-place us, in-place us, out-of-place busbw)} of a braid-perf log, the
    columns of a placement that did not run (N/A) as 0."""
    def value(text):
        return 0.0 if text == "N/A" else float(text)
    return {int(f[0]): (value(f[5]), value(f[9]), value(f[7]))
            for f in rows_of(path, "perf")}


def kernel_rows(path):
    """{what: (ms, GB/s, vs copy)} of braid-kernel-bench's log."""
    return {f[0]: tuple(float(x) for x in f[1:]) for f in rows_of(path, "kernels")}


def size_text(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def registers_line(path):
    """The registers of each kernel, and how many 512-thread blocks an SM's 64 Ki registers hold."""
    kernels, name = {}, None
    for line in open(path, errors="replace"):
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r"REG:(\d+)", line)
        if m and name:
            kernels[name] = int(m.group(1))
            name = None
    if not kernels:
        return "cuobjdump listed no kernel"
    most = max(kernels.values())
    per_sm = 65536 // (((most + 7) // 8 * 8) * 512)  # registers are given out 8 a thread at a time
    engine = [k for k in kernels if "engine" in k.lower()]
    return (f"{len(kernels)} kernels ({len(engine)} engine), {min(kernels.values())} .. {most} "
            f"registers a thread; at {most}, {per_sm} blocks of 512 threads fit an SM's registers")


GOALS = ("reduce_loop", "n2_copy_bound", "latency_8b_n2")


class Goals:
    """The goals, each a case added to CASES, and the figures beside them (INFO). A table is read
    only where its case passed (perf.sh checked it as perf_table.awk reads it). A goal is judged
    or says why it was not: NOT RUN where there is nothing to compare (the kernel bench absent, a
    case failed on its own), INCOMPLETE where its case ran out of time,
    FAIL (a check, not a goal) where a table that passed lacks what the goal needs; never a PASS
    or a SKIP that reads as one."""

    def __init__(self, logs, cases):
        self.logs, self.cases = logs, cases
        self.verdicts = {}
        for line in open(cases, errors="replace"):
            try:
                case = json.loads(line)
                self.verdicts[case["name"]] = case
            except (ValueError, KeyError, TypeError):
                pass  # summary.py fails the run on that line itself

    def log(self, name):
        return os.path.join(self.logs, f"perf.{name}.log")

    def add(self, name, verdict, detail, kind):
        with open(self.cases, "a") as f:
            f.write(json.dumps({"phase": "perf", "name": f"perf.{name}", "verdict": verdict,
                                "detail": detail, "seconds": 0.0, "kind": kind, "log": ""}) + "\n")
        print(f"  {verdict:<4}  perf.{name}: {detail}")

    def source(self, name):
        """perf.NAME's log, where that case passed; raises NotJudged where it did not."""
        case = self.verdicts.get(f"perf.{name}")
        if case is None:
            raise NotJudged("NOT RUN", f"perf.{name} did not run")
        if case.get("verdict") == "PASS":
            return self.log(name)
        verdict = "INCOMPLETE" if case.get("verdict") == "INCOMPLETE" else "NOT RUN"
        raise NotJudged(verdict, f"perf.{name} {case.get('verdict')}: "
                        f"{str(case.get('detail'))[:120]}")

    def perf(self, name):
        """perf.NAME's table, which has at least one row."""
        rows = table(self.source(name))
        if not rows:
            raise NotJudged("FAIL", f"perf.{name} passed with no row in its table")
        return rows

    def copy(self):
        """braid-kernel-bench's rows, with the copy's among them."""
        rows = kernel_rows(self.source("kernels"))
        if "copy (cudaMemcpyAsync)" not in rows:
            raise NotJudged("FAIL", "perf.kernels' table has no line 'copy (cudaMemcpyAsync)'")
        return rows

    def goal(self, name, judge):
        """Goal NAME: judge() returns (met, detail), or raises NotJudged."""
        try:
            met, detail = judge()
        except NotJudged as e:
            kind = "check" if e.verdict == "FAIL" else "goal"
            self.add(f"goal.{name}", e.verdict, f"not judged: {e.why}", kind)
            return
        self.add(f"goal.{name}", "PASS" if met else "FAIL", detail, "goal")

    def fact(self, name, figure):
        """An INFO case, figure()'s line; left out where its cases did not pass (they say why),
        a FAIL where a table that passed lacks what it needs."""
        try:
            detail = figure()
        except NotJudged as e:
            if e.verdict == "FAIL":
                self.add(name, "FAIL", e.why, "check")
            return
        if detail:
            self.add(name, "INFO", detail, "info")

    def not_judged(self, why):
        for name in GOALS:
            self.add(f"goal.{name}", "NOT RUN", f"not judged: {why}", "goal")

    def reduce_loop(self):
        rows = self.copy()
        red = rows.get("engine reduce float32 sum")
        if red is None:
            raise NotJudged("FAIL", "perf.kernels' table has no line 'engine reduce float32 sum'")
        copy = rows["copy (cudaMemcpyAsync)"]
        return red[2] >= 0.85, (f"float32 sum {red[1]:.0f} GB/s vs copy {copy[1]:.0f} GB/s = "
                                f"{red[2]:.3f} (goal 0.85)")

    def copy_bound(self, n):
        """(fraction of the copy bound at the largest size, its line) for N = n."""
        t, copy = self.perf(f"n{n}"), self.copy()["copy (cudaMemcpyAsync)"]
        size = max(t)
        bound_us = (6 * n - 4) * size / (copy[1] * 1e3)
        eff = bound_us / t[size][0] if t[size][0] > 0 else 0.0
        return eff, (f"{size_text(size)}: {t[size][0]:.0f} us, bound {bound_us:.0f} us, "
                     f"{eff:.3f} of it")

    def latency(self, n):
        t = self.perf(f"n{n}")
        if 8 not in t:
            raise NotJudged("FAIL", f"perf.n{n}'s table has no 8 B row")
        return t[8][0]

    def kernel_loops(self):
        loops = [f"{what[len('engine '):]} {row[2]:.3f}" for what, row in self.copy().items()
                 if what.startswith("engine ")]
        return "of the copy's bandwidth: " + ", ".join(loops) if loops else ""

    def channels(self):
        """Each NCCL_MAX_NCHANNELS case's bus bandwidth, with the channels its ranks got (braid's
        INFO line "gpu: K channel(s)"): the knob only lowers braid's own count."""
        sweep = []
        for name in sorted(os.listdir(self.logs)):
            m = re.fullmatch(r"perf\.(channels(\d+))\.log", name)
            if m and self.verdicts.get(f"perf.{m.group(1)}", {}).get("verdict") == "PASS":
                t = self.perf(m.group(1))
                got = sorted(set(re.findall(r"braid INFO gpu: (\d+) channel\(s\)",
                                            open(self.log(m.group(1)), errors="replace").read())))
                sweep.append((int(m.group(2)), "/".join(got) or "?", t[max(t)][2]))
        if not sweep:
            return ""
        best = max(sweep, key=lambda x: x[2])
        figures = ", ".join(f"{c} (got {got}): {bw:.3g}" for c, got, bw in sorted(sweep))
        return f"busbw by NCCL_MAX_NCHANNELS: {figures} GB/s; best {best[0]}"

    def odd_count(self):
        odd, n2 = self.perf("odd_count"), self.perf("n2")
        size = max(odd)
        near = min(n2, key=lambda s: abs(s - size))
        ratio = odd[size][2] / n2[near][2] if n2[near][2] > 0 else 0.0
        return (f"{size // 4} floats: busbw {odd[size][2]:.1f} GB/s, {ratio:.2f} of the aligned "
                f"{size_text(near)}'s")

    def ll_vs_simple(self):
        simple, ll = self.perf("simple"), self.perf("ll")
        faster = [s for s in sorted(ll) if s in simple and ll[s][0] < simple[s][0]]
        largest = f", the largest {size_text(max(faster))}" if faster else ""
        return f"LL faster at {len(faster)} of {len(ll)} sizes{largest}"

    def oneshot_vs_ll(self):
        ll, oneshot = self.perf("ll"), self.perf("oneshot")
        faster = [s for s in sorted(oneshot) if s in ll and oneshot[s][0] < ll[s][0]]
        return f"one-shot faster than LL at {len(faster)} of {len(oneshot)} sizes"

    def run(self):
        self.goal("reduce_loop", self.reduce_loop)
        self.fact("kernels", self.kernel_loops)

        def n2_bound():
            eff, line = self.copy_bound(2)
            return eff >= 0.85, line + " (goal 0.85)"
        self.goal("n2_copy_bound", n2_bound)
        for n in (4, 8):
            self.fact(f"n{n}_copy_bound", lambda n=n: self.copy_bound(n)[1])
        self.goal("latency_8b_n2", lambda: (self.latency(2) < 10,
                                            f"{self.latency(2):.2f} us out of place (goal 10)"))
        self.fact("latency_8b_n1", lambda: f"{self.latency(1):.2f} us out of place")
        self.fact("channels", self.channels)
        self.fact("odd_count", self.odd_count)
        self.fact("ll_vs_simple", self.ll_vs_simple)
        self.fact("oneshot_vs_ll", self.oneshot_vs_ll)


def versus(braid_log, nccl_log):
    """braid's table against NVIDIA's NCCL's, the same run of braid-perf on each library: the time
    of each at the smallest and the largest size they share, out of place, and their ratio."""
    braid, nccl = table(braid_log), table(nccl_log)
    shared = sorted(s for s in braid if s in nccl and nccl[s][0] > 0)
    if not shared:
        raise NotJudged("FAIL", "the two tables share no timed size")
    parts = [f"{size_text(s)} {braid[s][0]:.1f} vs {nccl[s][0]:.1f} us "
             f"({braid[s][0] / nccl[s][0]:.2f})" for s in sorted({shared[0], shared[-1]})]
    return "braid vs NVIDIA's NCCL, time out of place (braid/NCCL): " + "; ".join(parts)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("registers").add_argument("dump")
    pair = sub.add_parser("versus")
    pair.add_argument("braid_log")
    pair.add_argument("nccl_log")
    goals = sub.add_parser("goals")
    goals.add_argument("logs")
    goals.add_argument("cases")
    goals.add_argument("--emulated", type=int, default=0)
    args = parser.parse_args()
    if args.what == "registers":
        print(registers_line(args.dump))
    elif args.what == "versus":
        try:
            print(versus(args.braid_log, args.nccl_log))
        except NotJudged as e:
            print(e.why)
            return 1
    elif args.emulated:
        Goals(args.logs, args.cases).not_judged("the emulated GPU's timings say nothing of a GPU's")
    else:
        Goals(args.logs, args.cases).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
