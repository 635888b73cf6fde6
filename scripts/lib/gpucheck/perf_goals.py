"""The perf phase's numbers (scripts/lib/gpucheck/perf.sh): braid-perf's and braid-kernel-bench's
tables read back, judged against issue 27's goals.

    perf_goals.py registers DUMP           one line on cuobjdump --dump-resource-usage's output
    perf_goals.py goals LOGS CASES --emulated 0|1
                                           the goals and figures, added to CASES (record.py's file)

The goals: the engine's reduce loop reaches 85% of the device-to-device copy; N = 1 is no slower
than NVIDIA's NCCL at any size (5% for noise); N = 2 ranks on one GPU reach 85% of the bound the
copy gives for the bytes their ring moves; an 8 B all_reduce of 2 ranks takes under 10 us.

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
import sys


def table(path):
    """{size: (out-of-place us, in-place us, out-of-place busbw)} of a braid-perf log."""
    rows = {}
    if not os.path.exists(path):
        return rows
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) >= 13 and not line.startswith("#"):
            try:
                rows[int(f[0])] = (float(f[5]), float(f[9]), float(f[7]))
            except ValueError:
                pass
    return rows


def kernel(path, label):
    """(ms, GB/s, vs copy) of braid-kernel-bench's line that starts with label."""
    if not os.path.exists(path):
        return None
    for line in open(path, errors="replace"):
        if line.strip().startswith(label):
            try:
                return [float(x) for x in line.split()[-3:]]
            except ValueError:
                return None
    return None


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


class Goals:
    def __init__(self, logs, cases):
        self.logs, self.cases = logs, cases

    def log(self, name):
        return os.path.join(self.logs, f"perf.{name}.log")

    def add(self, name, verdict, detail, kind):
        with open(self.cases, "a") as f:
            f.write(json.dumps({"phase": "perf", "name": f"perf.{name}", "verdict": verdict,
                                "detail": detail, "seconds": 0.0, "kind": kind, "log": ""}) + "\n")
        print(f"  {verdict:<4}  perf.{name}: {detail}")

    def goal(self, name, ok, detail):
        self.add(f"goal.{name}", "PASS" if ok else "FAIL", detail, "goal")

    def missing(self, name, why):
        self.add(f"goal.{name}", "SKIP", f"not judged: {why}", "goal")

    def info(self, name, detail):
        self.add(name, "INFO", detail, "info")

    def run(self):
        copy = kernel(self.log("kernels"), "copy (cudaMemcpyAsync)")
        red = kernel(self.log("kernels"), "engine reduce float32 sum")
        if copy and red:
            self.goal("reduce_loop", red[2] >= 0.85,
                      f"float32 sum {red[1]:.0f} GB/s vs copy {copy[1]:.0f} GB/s = {red[2]:.3f} "
                      "(goal 0.85)")
        else:
            self.missing("reduce_loop", "braid-kernel-bench's table is missing")
        loops = []
        if os.path.exists(self.log("kernels")):
            for line in open(self.log("kernels"), errors="replace"):
                f = line.split()
                if f and f[0] == "engine" and len(f) >= 4:
                    loops.append(f"{' '.join(f[1:-3])} {f[-1]}")
        if loops:
            self.info("kernels", "of the copy's bandwidth: " + ", ".join(loops))

        braid1, nccl1 = table(self.log("n1")), table(self.log("n1_nccl"))
        pairs = [(braid1[s][i] / nccl1[s][i], s, i) for s in braid1 if s in nccl1 for i in (0, 1)
                 if nccl1[s][i] > 0]
        if pairs:
            worst = max(pairs)
            place = "in-place" if worst[2] else "out-of-place"
            self.goal("n1_vs_nccl", worst[0] <= 1.05,
                      f"worst braid/NCCL time {worst[0]:.2f} at {size_text(worst[1])} {place} "
                      f"(goal 1.05), over {len(pairs)} cells")
        else:
            self.missing("n1_vs_nccl", "a table of N = 1 is missing")

        for n in (2, 4, 8):
            t = table(self.log(f"n{n}"))
            if not t or not copy:
                if n == 2:
                    self.missing("n2_copy_bound", "the N = 2 table or the copy is missing")
                continue
            size = max(t)
            bound_us = (6 * n - 4) * size / (copy[1] * 1e3)
            eff = bound_us / t[size][0] if t[size][0] > 0 else 0.0
            detail = (f"{size_text(size)}: {t[size][0]:.0f} us, bound {bound_us:.0f} us, "
                      f"{eff:.3f} of it")
            if n == 2:
                self.goal("n2_copy_bound", eff >= 0.85, detail + " (goal 0.85)")
            else:
                self.info(f"n{n}_copy_bound", detail)

        for n in (1, 2):
            t = table(self.log(f"n{n}"))
            if 8 in t and n == 2:
                self.goal("latency_8b_n2", t[8][0] < 10, f"{t[8][0]:.2f} us out of place (goal 10)")
            elif 8 in t:
                self.info("latency_8b_n1", f"{t[8][0]:.2f} us out of place")
            elif n == 2:
                self.missing("latency_8b_n2", "the N = 2 table has no 8 B row")

        sweep = []
        for name in sorted(os.listdir(self.logs)):
            m = re.fullmatch(r"perf\.channels(\d+)\.log", name)
            t = table(os.path.join(self.logs, name)) if m else {}
            if t:
                sweep.append((int(m.group(1)), t[max(t)][2]))
        if sweep:
            best = max(sweep, key=lambda x: x[1])
            self.info("channels", "busbw by NCCL_MAX_NCHANNELS: " +
                      ", ".join(f"{c}: {bw:.3g}" for c, bw in sorted(sweep)) +
                      f" GB/s; best {best[0]}")

        odd, n2 = table(self.log("odd_count")), table(self.log("n2"))
        if odd and n2:
            size = max(odd)
            near = min(n2, key=lambda s: abs(s - size))
            ratio = odd[size][2] / n2[near][2] if n2[near][2] > 0 else 0.0
            self.info("odd_count", f"{size // 4} floats: busbw {odd[size][2]:.1f} GB/s, "
                      f"{ratio:.2f} of the aligned {size_text(near)}'s")

        simple, ll, oneshot = (table(self.log(x)) for x in ("simple", "ll", "oneshot"))
        if simple and ll:
            faster = [s for s in sorted(ll) if s in simple and ll[s][0] < simple[s][0]]
            largest = f", the largest {size_text(max(faster))}" if faster else ""
            self.info("ll_vs_simple", f"LL faster at {len(faster)} of {len(ll)} sizes{largest}")
        if ll and oneshot:
            faster = [s for s in sorted(oneshot) if s in ll and oneshot[s][0] < ll[s][0]]
            self.info("oneshot_vs_ll", f"one-shot faster than LL at {len(faster)} of "
                      f"{len(oneshot)} sizes")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("registers").add_argument("dump")
    goals = sub.add_parser("goals")
    goals.add_argument("logs")
    goals.add_argument("cases")
    goals.add_argument("--emulated", type=int, default=0)
    args = parser.parse_args()
    if args.what == "registers":
        print(registers_line(args.dump))
    elif args.emulated:
        Goals(args.logs, args.cases).info(
            "goals", "not judged: the emulated GPU's timings say nothing of a GPU's")
    else:
        Goals(args.logs, args.cases).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
