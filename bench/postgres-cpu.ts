/** CPU used by every PostgreSQL server process on this machine (backends come and go, so all are summed). */
import { readdirSync, readFileSync } from 'node:fs';
import { readCpuTicks, TICKS_PER_SECOND } from './proc.js';

function postgresPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** CPU seconds of the PostgreSQL processes over a span; exited backends count up to their last sample. */
export function samplePostgresCpu(): { stop(): number } {
  const start = new Map<number, number>();
  for (const pid of postgresPids()) start.set(pid, readCpuTicks(pid) ?? 0);
  const last = new Map(start);
  const timer = setInterval(() => {
    for (const pid of postgresPids()) last.set(pid, readCpuTicks(pid) ?? last.get(pid) ?? 0);
  }, 200);
  return {
    stop() {
      clearInterval(timer);
      for (const pid of postgresPids()) last.set(pid, readCpuTicks(pid) ?? last.get(pid) ?? 0);
      let ticks = 0;
      for (const [pid, t] of last) ticks += t - (start.get(pid) ?? 0);
      return ticks / TICKS_PER_SECOND;
    },
  };
}
