// CPU time of a process and all its descendants (a browser's renderer, network and GPU
// processes), from Linux's /proc: what a timed page cost the machine, beside how long it took.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;
  } catch {
    return 100;
  }
})();

/** pid → { ppid, cpuMs } of every process now, or null where there is no /proc. */
function processTable() {
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const table = new Map();
  for (const pid of pids) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // (it ended while the table was read)
    }
    // The command name, in parentheses, may hold spaces: the fields are counted after its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
    table.set(Number(pid), { ppid, cpuMs: (ticks * 1000) / TICKS_PER_SECOND });
  }
  return table;
}

// What a Chromium process is, from its command line: its --type (renderer, gpu-process, …) and,
// for a utility process, the service it runs (the network service is one); no --type is the
// browser process itself.
function kindOf(pid) {
  let args;
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/); // (a renderer rewrites its own as one line)
  } catch {
    return 'ended';
  }
  const value = (flag) => args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
  const type = value('--type');
  if (type === undefined) return 'browser';
  if (type === 'utility') return (value('--utility-sub-type') ?? 'utility').replace(/\.mojom\..*/, '');
  return type;
}

/**
 * The CPU time so far of `root` and each process below it, as pid → { kind, cpuMs } (`kind` as
 * Chromium names the process); null without /proc. Subtract two of these with `cpuSince`.
 */
export function treeCpu(root) {
  const table = processTable();
  if (table === null) return null;
  const inTree = new Map();
  const below = (pid) => {
    if (pid === root) return true;
    const entry = table.get(pid);
    return entry !== undefined && entry.ppid !== pid && entry.ppid > 1 && below(entry.ppid);
  };
  for (const [pid, { cpuMs }] of table) if (below(pid)) inTree.set(pid, { kind: kindOf(pid), cpuMs });
  return inTree;
}

/**
 * The CPU ms the tree spent between two `treeCpu` samples, in all and by kind of process. A
 * process that ended in between is not counted, so these are lower bounds. NaN without /proc.
 */
export function cpuSince(before, after) {
  const byKind = {};
  if (before === null || after === null) return { ms: Number.NaN, byKind };
  let ms = 0;
  for (const [pid, { kind, cpuMs }] of after) {
    const spent = cpuMs - (before.get(pid)?.cpuMs ?? 0);
    ms += spent;
    byKind[kind] = (byKind[kind] ?? 0) + spent;
  }
  return { ms, byKind };
}
