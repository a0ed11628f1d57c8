/**
 * CPU time a process has used (user + system, all threads), read from
 * /proc/<pid>/stat. Used by the telephony benches to report what a call costs
 * in CPU, which a shared machine's scheduling noise does not change the way it
 * changes latency tails. Linux only: elsewhere `read()` answers undefined.
 */
import { readdirSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

export interface CpuReading {
  user: number;
  system: number;
}

/** CPU seconds used so far by `pid`, or undefined when /proc cannot tell. */
export function readProcessCpu(pid: number): CpuReading | undefined {
  return readStatCpu(`/proc/${pid}/stat`);
}

/** CPU seconds used so far by one thread `tid` of `pid`, or undefined when /proc cannot tell. */
export function readThreadCpu(pid: number, tid: number): CpuReading | undefined {
  return readStatCpu(`/proc/${pid}/task/${tid}/stat`);
}

function readStatCpu(path: string): CpuReading | undefined {
  try {
    const stat = readFileSync(path, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its closing ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const hz = clockTicks();
    return { user: Number(fields[11]) / hz, system: Number(fields[12]) / hz };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds used so far by `pid`, its live descendants, and its children that
 * have exited and been reaped (their time is added to the parent's cutime and
 * cstime then): what a server that starts short-lived helpers (decoders,
 * espeak-ng) has used in all, steady across their exits.
 */
export function readProcessWithChildrenCpu(pid: number): CpuReading | undefined {
  const live = readProcessTreeCpu(pid);
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const hz = clockTicks();
    if (!live) return undefined;
    return { user: live.user + Number(fields[13]) / hz, system: live.system + Number(fields[14]) / hz };
  } catch {
    return undefined;
  }
}

/** CPU used between two readings, seconds. */
export function cpuSince(
  before: CpuReading | undefined,
  after: CpuReading | undefined,
): CpuReading | undefined {
  if (!before || !after) return undefined;
  return { user: after.user - before.user, system: after.system - before.system };
}

/**
 * CPU seconds used so far by `pid` and every live process below it (a pool's
 * primary and its workers, and their helpers). A child that exited between two
 * readings takes its CPU with it: read the tree while it is steady.
 */
export function readProcessTreeCpu(pid: number): CpuReading | undefined {
  let total: CpuReading | undefined;
  for (const member of processTree(pid)) {
    const cpu = readProcessCpu(member);
    if (!cpu) continue;
    total = { user: (total?.user ?? 0) + cpu.user, system: (total?.system ?? 0) + cpu.system };
  }
  return total;
}

/** `pid` and every live process below it, read from /proc. */
export function processTree(pid: number): Set<number> {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone between the listing and the read.
    }
  }
  const tree = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [child, parent] of parents)
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
  }
  return tree;
}
