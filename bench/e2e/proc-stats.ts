import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const HZ = 100;

export interface ProcSample {
  /** User + system CPU seconds since the process started. */
  cpuSeconds: number;
  /** Peak resident set size (VmHWM) in MiB. */
  peakRssMiB: number;
}

/** CPU time and peak RSS of a live process from /proc; null once it is gone. */
export function sampleProc(pid: number): ProcSample | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name (which may hold spaces) start after the last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    return {
      cpuSeconds: (utime + stime) / HZ,
      peakRssMiB: hwm ? Number(hwm[1]) / 1024 : 0,
    };
  } catch {
    return null;
  }
}
