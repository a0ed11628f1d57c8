#!/usr/bin/env python3
"""CPU seconds of a command's processes by kind: `python3 bench/cpu-by-process.py <command...>`.

Where bench/cpu-seconds.py gives one total, this says who spent it: every process on the machine is read from
/proc every 0.5 s while the command runs (utime + stime), and the CPU each gained is summed by kind, Chromium's
by process type (renderer, gpu-process, the browser, utilities), Node's by its first arguments. A process that
lived less than one sample is missed, and others' processes running meanwhile are counted too: run it on a quiet
machine. Used for the test suite's CPU (docs/performance.md, "The test suite").
"""
import collections
import os
import re
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def kind(pid: int) -> str | None:
    """What a process is: Chromium's by --type, Node's by its first arguments, others by their name."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None
    if not args:
        return None  # a kernel thread
    line = " ".join(args)
    if "chromium" in args[0] or "--type=" in line:
        kind_of = re.search(r"--type=(\S+)", line)
        utility = re.search(r"--utility-sub-type=(\S+)", line)
        return "chromium " + (kind_of.group(1) if kind_of else "browser") + (" " + utility.group(1) if utility else "")
    if "node" in args[0]:
        if "vitest" in line and "forks" in line:
            return "node vitest-fork"
        return "node " + " ".join(os.path.basename(a) for a in args[1:4])[:60]
    return os.path.basename(args[0]) + " " + " ".join(os.path.basename(a) for a in args[1:2])[:40]


def cpu_and_start(pid: int) -> tuple[float, int] | None:
    """The process's utime + stime in seconds and its start time in clock ticks since boot."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS, int(fields[19])


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    own = cpu_and_start(os.getpid())
    started_ticks = own[1] if own else 0
    # (pid, start) -> [kind, its CPU when first seen (0 if it started after us), its CPU when last seen]
    seen: dict[tuple[int, int], list] = {}
    command = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while command.poll() is None:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            sample = cpu_and_start(int(entry))
            if sample is None:
                continue
            cpu, start = sample
            key = (int(entry), start)
            if key in seen:
                seen[key][2] = cpu
                continue
            what = kind(int(entry))
            if what is not None:
                seen[key] = [what, 0.0 if start >= started_ticks else cpu, cpu]
        time.sleep(0.5)
    by_kind: collections.Counter = collections.Counter()
    for what, first, last in seen.values():
        by_kind[what] += last - first
    for what, seconds in by_kind.most_common(25):
        if seconds > 0.3:
            print(f"{seconds:7.1f} {what}")
    print("total", round(sum(by_kind.values()), 1))
    return command.returncode


if __name__ == "__main__":
    sys.exit(main())
