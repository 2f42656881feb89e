/**
 * CPU time from /proc/self/stat (Linux), in ms: this process's own (utime + stime, every thread)
 * and its reaped child processes' (cutime + cstime). null where there is no /proc. The kernel
 * counts in clock ticks, taken here as the usual 100 per second.
 */
import fs from 'node:fs';

export function procCpuMs(): { self: number; children: number } | null {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // After the command name's closing parenthesis: state, then fields 4.. of proc(5); utime,
    // stime, cutime, cstime (fields 14-17) land at 11-14.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { self: (Number(f[11]) + Number(f[12])) * 10, children: (Number(f[13]) + Number(f[14])) * 10 };
  } catch {
    return null;
  }
}
