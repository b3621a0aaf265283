/**
 * What the cluster crash specs share (cluster-nats, cluster-kafka): the invariants they expect,
 * a probe that appends to a run of its own to measure how long journal appends stall, and the
 * figures they print from the workers' ledger and logs. Nothing here is asserted on timings.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CrashWorld } from '@baton/testing/crash';

export { NO_VIOLATIONS } from '@baton/testing/crash';

/** Appends to a run of the test's own every `everyMs` and keeps when each append succeeded. */
export function appendProbe(world: CrashWorld, everyMs = 50) {
  const successes: number[] = [];
  const failures: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      try {
        await world.env.transport.journal.append({ runId: `probe-${world.ns}`, data: new Uint8Array([1]) });
        successes.push(Date.now());
      } catch (err) {
        failures.push((err as Error).message);
      }
      await sleep(Math.max(0, everyMs - (Date.now() - started)));
    }
  })();
  return {
    failures,
    /** The longest time without a successful append after `since`. */
    longestGapAfter(since: number): number {
      let last = since;
      let longest = 0;
      for (const at of successes.filter((t) => t >= since)) {
        longest = Math.max(longest, at - last);
        last = at;
      }
      return longest;
    },
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/**
 * The invariants, once the cluster answers reads again: right after a node comes back, a stream or
 * partition may still be electing a leader, and reads fail as unavailable (retryable) for a moment.
 */
export async function violationsWhenReadable(world: CrashWorld): Promise<Record<string, string[]>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await world.violations();
    } catch (err) {
      if ((err as { retryable?: boolean }).retryable !== true || attempt >= 60) throw err;
      await sleep(500);
    }
  }
}

/** Runs whose activities ran on more than one worker process. */
export async function runsMoved(world: CrashWorld): Promise<number> {
  const pids = new Map<string, Set<number>>();
  for (const e of await world.ledger.executions()) {
    const set = pids.get(e.runId) ?? new Set<number>();
    set.add(e.pid);
    pids.set(e.runId, set);
  }
  return [...pids.values()].filter((s) => s.size > 1).length;
}

/**
 * The fleet's side of the stall: the longest time after `since` in which no worker started or
 * finished an activity (each step's start follows its predecessor's journal append).
 */
export async function fleetGapAfter(world: CrashWorld, since: number): Promise<number> {
  const events = (await world.ledger.executions())
    .flatMap((e) => [e.startedAt, ...(e.finishedAt === null ? [] : [e.finishedAt])])
    .filter((t) => t >= since)
    .sort((a, b) => a - b);
  let last = since;
  let longest = 0;
  for (const at of events) {
    longest = Math.max(longest, at - last);
    last = at;
  }
  return longest;
}

/** What the workers logged at warn level or above, message -> count. */
export function warnings(world: CrashWorld): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of world.fleet.all.flatMap((p) => p.logs)) {
    if (line.level >= 40) counts[line.msg] = (counts[line.msg] ?? 0) + 1;
  }
  return counts;
}
