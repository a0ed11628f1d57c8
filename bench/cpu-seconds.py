#!/usr/bin/env python3
"""CPU seconds of a command and everything it starts: `python3 bench/cpu-seconds.py <command...>`.

/usr/bin/time counts only descendants reaped by their parents. A test file's Chromium helpers (zygote,
GPU, renderers) are orphaned when a browser is killed (the bots' close SIGKILLs it) and reaped by init,
so their CPU goes uncounted. Here the command runs under a child subreaper (Linux prctl
PR_SET_CHILD_SUBREAPER): orphans are reparented to this process and reaped here, so RUSAGE_CHILDREN
holds all of them. Prints wall, user, sys and the load average before and after on stderr; exits with the
command's code.
"""
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("cpu-seconds: prctl(PR_SET_CHILD_SUBREAPER) failed", file=sys.stderr)
        return 2
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    started = time.time()
    rc = subprocess.Popen(sys.argv[1:]).wait()
    while True:  # every orphan left behind
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    wall = time.time() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_after = " ".join(open("/proc/loadavg").read().split()[:3])
    print(
        f"cpu-seconds: rc={rc} wall={wall:.1f}s user={usage.ru_utime:.1f} sys={usage.ru_stime:.1f} "
        f"cpu={usage.ru_utime + usage.ru_stime:.1f}s load before {load_before}, after {load_after}",
        file=sys.stderr,
    )
    return rc


if __name__ == "__main__":
    sys.exit(main())
