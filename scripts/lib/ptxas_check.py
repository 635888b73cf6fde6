#!/usr/bin/env python3
"""The code ptxas generates for the engine's kernels, checked (issue 50).

Compiles the engine's CUDA sources (kernels/engine_kernels_*.cu) for one architecture (sm_90
unless --arch says otherwise) with `-Xptxas -v`, at the optimization users get, and reads what
ptxas says of every function: its registers, stack frame and spills. It fails, naming the
function, where

  - a function of the engine spills (spill stores or spill loads above 0): the kernel's block
    (engineKernel), the copy and reduce loops (copyBytesLoop, copyPeerBytesTwiceLoop,
    transformLoop) and whatever else they call; or
  - a kernel uses more registers than its budget: the registers of one multiprocessor
    (kSmRegisters) over the threads the launch bounds promise it holds at once (kEngineThreads x
    kEngineMinBlocksPerSm), read from kernels/engine/launch.h.

A spill that scripts/lib/ptxas_allowed.txt names (a pattern of the function's name and the most
bytes it may store) is reported as allowed instead, and fails again once it grows: the file is
the list of spills still to remove, each with why it is there.

A stack frame is not a spill (an array indexed at run time, a function's saved registers) and is
only reported. The compiles run at once, one per source, into a temporary folder.

usage: ptxas_check.py [--root DIR] [--arch sm_90] [--nvcc PATH] [--source FILE]...
                      [--define NAME[=VALUE]]... [--log FILE]
  --source   compile these files instead of the engine's (a fixture of a test)
  --define   passed to nvcc as -D (a fixture's switch)
  --log      read this ptxas output instead of compiling (no nvcc needed)
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ENGINE_SOURCES = [
    "kernels/engine_kernels_integers.cu",
    "kernels/engine_kernels_wide.cu",
    "kernels/engine_kernels_halves.cu",
    "kernels/engine_kernels_fp8.cu",
]

ENTRY = re.compile(r"Compiling entry function '([^']+)'")
PROPERTIES = re.compile(r"Function properties for (\S+)")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")


def launch_constant(text, name):
    m = re.search(r"\b%s\s*=\s*(\d+)\s*;" % name, text)
    if not m:
        sys.exit("ptxas_check: %s not found in kernels/engine/launch.h" % name)
    return int(m.group(1))


def register_budget(root):
    """Registers a thread may use: the multiprocessor's over the threads it must hold at once."""
    with open(os.path.join(root, "kernels/engine/launch.h")) as f:
        text = f.read()
    threads = launch_constant(text, "kEngineThreads")
    blocks = launch_constant(text, "kEngineMinBlocksPerSm")
    registers = launch_constant(text, "kSmRegisters")
    # ptxas allocates registers in eights, at most 255 a thread.
    return min(255, registers // (threads * blocks) // 8 * 8), threads, blocks


def parse(text):
    """What ptxas said: per function, the largest stack frame and spills over its compiles, and
    per kernel its registers."""
    functions = {}  # name -> [frame, stores, loads]
    registers = {}  # kernel -> registers
    entry = None
    pending = None
    for line in text.splitlines():
        m = ENTRY.search(line)
        if m:
            entry = m.group(1)
            continue
        m = PROPERTIES.search(line)
        if m:
            pending = m.group(1)
            continue
        m = FRAME.search(line)
        if m and pending:
            sizes = [int(x) for x in m.groups()]
            old = functions.get(pending, [0, 0, 0])
            functions[pending] = [max(a, b) for a, b in zip(old, sizes)]
            pending = None
            continue
        m = USED.search(line)
        if m and entry:
            registers[entry] = max(registers.get(entry, 0), int(m.group(1)))
    return functions, registers


def read_allowed(root):
    """ptxas_allowed.txt's lines: PATTERN BYTES (a regular expression of the demangled name, the
    most spill-store bytes allowed); '#' begins a comment."""
    allowed = []
    with open(os.path.join(root, "scripts/lib/ptxas_allowed.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                pattern, most = line.rsplit(None, 1)
                allowed.append((re.compile(pattern), int(most)))
    return allowed


def demangle(names):
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True).stdout
    return dict(zip(names, out.splitlines()))


def compile_one(nvcc, root, arch, source, defines, folder):
    cmd = [nvcc, "-DBRAID_HAVE_CUDA=1", "-I" + os.path.join(root, "include"), "-I" + root,
           "-DNDEBUG", "-std=c++17", "--fmad=false", "-arch=" + arch, "-cubin", "-Xptxas", "-v",
           "-o", os.path.join(folder, os.path.basename(source) + ".cubin")]
    cmd += ["-D" + d for d in defines]
    cmd.append(source if os.path.isabs(source) else os.path.join(root, source))
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        sys.exit("ptxas_check: %s did not compile" % source)
    return r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser(description="ptxas's registers and spills of the engine's kernels")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--source", action="append", default=[])
    ap.add_argument("--define", action="append", default=[])
    ap.add_argument("--log", default=None)
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    budget, threads, blocks = register_budget(root)

    started = time.time()
    if args.log:
        with open(args.log) as f:
            text = f.read()
        what = args.log
    else:
        nvcc = args.nvcc or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not os.path.exists(nvcc) and not shutil.which(nvcc):
            print("ptxas_check: no nvcc: not checked")
            return 0
        sources = args.source or ENGINE_SOURCES
        with tempfile.TemporaryDirectory() as folder, \
                concurrent.futures.ThreadPoolExecutor(max_workers=len(sources)) as pool:
            logs = pool.map(lambda s: compile_one(nvcc, root, args.arch, s, args.define, folder),
                            sources)
            text = "\n".join(logs)
        what = "%d source(s) for %s" % (len(sources), args.arch)

    functions, registers = parse(text)
    if not functions:
        print("ptxas_check: ptxas reported no function (%s)" % what)
        return 1
    names = demangle(sorted(set(functions) | set(registers)))
    allowed = read_allowed(root) if not args.source else []
    failures = []
    for name, (frame, stores, loads) in sorted(functions.items()):
        if not (stores or loads):
            continue
        limit = next((most for pattern, most in allowed if pattern.search(names[name])), None)
        if limit is not None and stores <= limit:
            print("allowed (ptxas_allowed.txt): %s: %d bytes stored, %d loaded"
                  % (names[name], stores, loads))
        else:
            failures.append("%s: spills (%d bytes stored, %d loaded; %d bytes stack frame)"
                            % (names[name], stores, loads, frame))
    for name, used in sorted(registers.items()):
        if used > budget:
            failures.append("%s: %d registers, above the budget of %d" % (names[name], used, budget))
    most = max(registers.values()) if registers else 0
    frames = max(f[0] for f in functions.values())
    print("ptxas_check: %s: %d functions, %d kernels, at most %d registers (budget %d: %d threads"
          " x %d blocks a multiprocessor), largest stack frame %d bytes, %.0f s"
          % (what, len(functions), len(registers), most, budget, threads, blocks, frames,
             time.time() - started))
    for f in failures:
        print("FAIL: " + f)
    if failures:
        print("ptxas_check: %d function(s) spill or pass the register budget" % len(failures))
        return 1
    print("ptxas_check: no function spills (beyond ptxas_allowed.txt) or passes the budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
