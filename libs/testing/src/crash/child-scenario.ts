/**
 * Child workflows on real worker processes, a real bus and a real store: parents start crash
 * chains as children (`crash_parent`) and sum their results. The worker that logs the first child
 * start is SIGKILLed at once (a parent killed between starting its children), and later a worker
 * with child activities in flight is SIGKILLed (children killed mid-step, their parents waiting
 * on other workers). Checked from outside: every parent completes with the sum of its children's
 * results; each parent has exactly as many children as it starts (their ids derive from its
 * steps, so a repeated start would show as a second run); and every child passes the crash
 * suite's invariants (each step applied once, nothing re-executed after completion, fencing).
 *
 * Each adapter pair calls it from its own spec: `describeChildCrash('nats+redis', environment)`.
 */
import { childKeyPrefix, parentOfKey } from '@baton/core/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';

import { CrashWorld, type CrashEnvironmentFactory, NO_VIOLATIONS, pollUntil } from './harness.js';
import { crashParent, expectedParentOutput, type ChainInput, type ParentInput } from './crash-workflow.js';
import type { WorkerProcess } from './worker-processes.js';

const PARENTS = 6;
const CHILDREN = 3;
const CHILD_SHAPE = { steps: 4, minDelayMs: 150, maxDelayMs: 350 };

const startedChildren = (p: WorkerProcess): number =>
  p.logs.filter((l) => l.msg === 'child run started').length;

export function describeChildCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`child workflows on worker processes: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      'parents and children complete with every child started once and every step applied once while their workers are SIGKILLed',
      { timeout: 150_000 },
      async () => {
        world = await CrashWorld.create(factory);
        const w = world;
        const client = new Client({ transport: w.env.transport, store: w.env.store });
        await Promise.all([w.fleet.spawn(), w.fleet.spawn(), w.fleet.spawn()]);

        const parents: Array<{ runId: string; input: ParentInput }> = [];
        for (let seed = 1; seed <= PARENTS; seed++) {
          const input: ParentInput = { seed, children: CHILDREN, child: CHILD_SHAPE };
          const handle = await client.start(crashParent, input, { idempotencyKey: `${w.ns}-parent-${seed}` });
          parents.push({ runId: handle.runId, input });
        }

        // A parent killed between the starts of its children.
        let starter: WorkerProcess | undefined;
        await pollUntil(
          async () => (starter = w.fleet.alive.find((p) => startedChildren(p) > 0)) !== undefined,
          30_000,
          () => `a child start\n${w.fleet.describe()}`,
        );
        starter!.signal('SIGKILL');
        await starter!.exited;
        const replacement = w.fleet.spawn();

        // Children killed mid-step, on a worker other than their parents' (those wait, suspended).
        const busy = new Map<number, number>();
        await pollUntil(
          async () => {
            busy.clear();
            const open = (await w.ledger.executions()).filter((e) => e.finishedAt === null);
            for (const e of open) busy.set(e.pid, (busy.get(e.pid) ?? 0) + 1);
            return w.fleet.alive.some((p) => (busy.get(p.pid) ?? 0) > 0);
          },
          30_000,
          () => `a child step in flight\n${w.fleet.describe()}`,
        );
        const victim = w.fleet.alive.filter((p) => (busy.get(p.pid) ?? 0) > 0)[0]!;
        victim.signal('SIGKILL');
        await victim.exited;
        await Promise.all([replacement, w.fleet.spawn()]);

        const results = new Map<string, unknown>();
        await pollUntil(
          async () => {
            for (const { runId } of parents) {
              if (results.has(runId)) continue;
              const run = await w.env.store.runs.get(runId);
              if (run?.status === 'completed') results.set(runId, run.result);
              else if (run?.status === 'failed' || run?.status === 'cancelled')
                throw new Error(`parent ${runId} ${run.status}: ${JSON.stringify(run.error)}`);
            }
            return results.size === parents.length;
          },
          90_000,
          () => `${parents.length - results.size} parents to complete\n${w.fleet.describe()}`,
        );

        for (const { runId, input } of parents) {
          expect(results.get(runId), `parent ${runId}`).toBe(expectedParentOutput(input));
          const page = await w.env.store.runs.list({
            idempotencyKeyPrefix: childKeyPrefix(runId),
            limit: 100,
          });
          const children = page.runs.filter((r) => parentOfKey(r.idempotencyKey)?.runId === runId);
          expect(children, `children of ${runId}`).toHaveLength(CHILDREN);
          for (const child of children) {
            expect(child.status).toBe('completed');
            w.runs.push({ runId: child.runId, input: child.input as ChainInput });
          }
        }
        await w.waitForAll(30_000);
        expect(await w.violations()).toEqual(NO_VIOLATIONS);
      },
    );
  });
}
