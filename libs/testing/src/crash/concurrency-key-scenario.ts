/**
 * Concurrency per key on real worker processes, a real bus and a real store: runs of `crash_keyed`
 * (a crash chain, at most KEYED_LIMIT runs per customer at once) for two customers, more than the
 * limit each, while a worker holding runs mid-step is SIGKILLed (twice, unless every run is done
 * after the first). Checked from outside: from
 * the ledger's executions, never more than the limit of one customer's steps ran at once (a killed
 * process's step counts until the kill); every run completes with the right output; the crash
 * suite's invariants hold (each step applied once, nothing re-executed after completion, fencing);
 * and nothing is left holding or waiting for a slot.
 *
 * Each adapter pair calls it from its own spec: `describeConcurrencyKeyCrash('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@baton/client';
import { CrashWorld, type CrashEnvironmentFactory, NO_VIOLATIONS } from './harness.js';
import { crashKeyed, KEYED_LIMIT, type KeyedInput } from './crash-workflow.js';
import type { ExecutionRow } from './ledger.js';

const CUSTOMERS = ['acme', 'zeta'];
const RUNS_PER_CUSTOMER = 8;
const SHAPE = { steps: 4, minDelayMs: 150, maxDelayMs: 350 };

/** The most executions of one customer that overlapped, a killed one lasting until its kill. */
export function mostAtOnce(
  executions: readonly ExecutionRow[],
  customerOf: ReadonlyMap<string, string>,
  killedAt: ReadonlyMap<number, number>,
): Map<string, number> {
  const events = new Map<string, Array<[number, number]>>();
  for (const e of executions) {
    const customer = customerOf.get(e.runId);
    if (customer === undefined) continue;
    const end = e.finishedAt ?? killedAt.get(e.pid) ?? Number.POSITIVE_INFINITY;
    const list = events.get(customer) ?? [];
    // Ends sort before starts at the same instant: a slot handed on at once is not an overlap.
    list.push([e.startedAt, 1], [end, -1]);
    events.set(customer, list);
  }
  const most = new Map<string, number>();
  for (const [customer, list] of events) {
    list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let peak = 0;
    for (const [, delta] of list) peak = Math.max(peak, (now += delta));
    most.set(customer, peak);
  }
  return most;
}

export function describeConcurrencyKeyCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`concurrency per key on worker processes: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      `never runs more than ${KEYED_LIMIT} runs of a customer at once while their holders are SIGKILLed, and completes every run once`,
      { timeout: 150_000 },
      async () => {
        world = await CrashWorld.create(factory);
        const w = world;
        const client = new Client({ transport: w.env.transport, store: w.env.store });
        await Promise.all([w.fleet.spawn(), w.fleet.spawn(), w.fleet.spawn()]);

        const customerOf = new Map<string, string>();
        let seed = 0;
        for (let i = 0; i < RUNS_PER_CUSTOMER; i++) {
          for (const customer of CUSTOMERS) {
            const input: KeyedInput = { ...SHAPE, seed: ++seed, customer };
            const handle = await client.start(crashKeyed, input, { idempotencyKey: `${w.ns}-keyed-${seed}` });
            w.runs.push({ runId: handle.runId, input });
            customerOf.set(handle.runId, customer);
          }
        }

        const killedAt = new Map<number, number>();
        // Twice, while runs remain: a worker with a step of some run in flight (a slot holder).
        for (let kill = 0; kill < 2 && (kill === 0 || (await w.unfinished()).length > 0); kill++) {
          const killed = await w.killBusyWorker();
          killedAt.set(killed.pid, killed.at);
          await sleep(300);
        }

        await w.waitForAll(90_000);
        expect(await w.violations()).toEqual(NO_VIOLATIONS);
        const most = mostAtOnce(await w.ledger.executions(), customerOf, killedAt);
        for (const customer of CUSTOMERS) {
          expect(most.get(customer), customer).toBeLessThanOrEqual(KEYED_LIMIT);
          expect(await w.env.store.concurrency.state(customer)).toEqual({ holders: [], waiting: [] });
        }
        // The limit was reached: the runs did queue behind one another.
        expect(Math.max(...most.values())).toBe(KEYED_LIMIT);
      },
    );
  });
}
