/**
 * CPU time of the processes a benchmark target uses, from /proc (Linux; elsewhere it reports
 * nothing). On a shared machine req/s follow everyone's load; CPU milliseconds per request do much
 * less, so the bench prints both.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11] and [12] are utime and stime (fields 14 and 15 of proc(5))
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** Pids whose command name (comm) is `name`. */
export function pidsNamed(name: string): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/comm`, 'utf8').trim() === name) out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}

export type PidGroups = Record<string, number[]>;

/** Snapshot of CPU ms per group; `since` gives per-group deltas (pids new since the start count fully). */
export function snapshot(groups: PidGroups): Map<string, Map<number, number>> {
  const s = new Map<string, Map<number, number>>();
  for (const [g, pids] of Object.entries(groups)) {
    const m = new Map<number, number>();
    for (const pid of pids) {
      const v = cpuMs(pid);
      if (v !== null) m.set(pid, v);
    }
    s.set(g, m);
  }
  return s;
}

export function since(
  start: Map<string, Map<number, number>>,
  groups: PidGroups,
): Record<string, number> {
  const end = snapshot(groups);
  const out: Record<string, number> = {};
  for (const [g, m] of end) {
    let sum = 0;
    for (const [pid, v] of m) sum += v - (start.get(g)?.get(pid) ?? 0);
    out[g] = sum;
  }
  return out;
}
