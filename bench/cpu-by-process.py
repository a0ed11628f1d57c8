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

tck = os.sysconf('SC_CLK_TCK')
seen = {}
def kind(pid):
    try:
        cmd = open(f'/proc/{pid}/cmdline','rb').read().split(b'\0')
        c = [x.decode(errors='replace') for x in cmd if x]
        if not c: return None
        s = ' '.join(c)
        if 'chromium' in s.split(' ')[0] or '--type=' in s:
            m = re.search(r'--type=(\S+)', s); u = re.search(r'--utility-sub-type=(\S+)', s)
            return 'chromium ' + (m.group(1) if m else 'browser') + (' ' + u.group(1) if u else '')
        if 'node' in c[0]:
            if 'vitest' in s and 'forks' in s: return 'node vitest-fork'
            return 'node ' + ' '.join(os.path.basename(x) for x in c[1:4])[:60]
        return os.path.basename(c[0]) + ' ' + ' '.join(os.path.basename(x) for x in c[1:2])[:40]
    except Exception: return None
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
me = os.getpid()
boot_ticks = int(open(f'/proc/{me}/stat').read().rsplit(')',1)[1].split()[19])
while p.poll() is None:
    for d in os.listdir('/proc'):
        if not d.isdigit(): continue
        pid = int(d)
        try:
            st = open(f'/proc/{pid}/stat').read()
            f = st[st.rindex(')')+2:].split()
            cpu = (int(f[11]) + int(f[12])) / tck
            start = int(f[19])
        except Exception: continue
        key = (pid, start)
        if key not in seen:
            k = kind(pid)
            if k is None: continue
            seen[key] = [k, 0.0 if start >= boot_ticks else cpu, cpu]  # kind, first seen cpu, last cpu
        else: seen[key][2] = cpu
    time.sleep(0.5)
by = collections.Counter()
for k, first, last in seen.values(): by[k] += last - first
for k, v in by.most_common(25):
    if v > 0.3: print(f'{v:7.1f} {k}')
print('total', round(sum(by.values()),1))
