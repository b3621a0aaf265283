/**
 * A child whose start is dead-lettered, on real worker processes (NATS + Redis, Kafka + Postgres;
 * every reason a start is dead-lettered, on memory adapters: libs/worker's
 * worker-child-dead-letters.spec.ts). A first build registers two parents but not their child's
 * workflow, and its worker reads messages of at most BATON_MAX_MESSAGE_BYTES, which one parent's
 * child start (its input inline) exceeds. Checked from outside:
 *
 * - each parent fails with ChildWorkflowError naming the child, `dc_child@1` and the dead-letter
 *   code (`unknown-workflow` after the grace, `too-large` at once), instead of waiting for ever;
 * - each child is a failed run, and its start a dead letter;
 * - after the fix (a worker that registers the child and reads larger messages, the first one
 *   stopped), the letters are redriven, by the new worker itself for `unknown-workflow` and by
 *   an operator for `too-large`: both starts are dropped, no child runs, no second child exists.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { CHILD_START_DEAD_LETTERED } from '@baton/core';
import type { CrashEnvironment } from '@baton/testing/crash';
import { REPO_ROOT, WorkerProcess } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const FIRST_BUILD = resolve(REPO_ROOT, 'libs/testing/src/crash/dead-child-workflows.ts');
const FIXED_BUILD = resolve(REPO_ROOT, 'libs/testing/src/crash/dead-child-workflows-fixed.ts');
/** How long a start waits for a worker with its version before it is dead-lettered. */
const GRACE_MS = 1_500;
/** The first build's message limit, and the inline child input above it. */
const MAX_MESSAGE_BYTES = 4_096;
const BIG_INPUT = 8_192;

let env: CrashEnvironment | undefined;
const processes: WorkerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.alive) p.signal('SIGKILL');
    await p.exited;
  }
  await env?.transport.close();
  await env?.store.close();
  await env?.dispose();
  env = undefined;
});

function spawnWorker(id: string, code: string, extra: Record<string, string> = {}): WorkerProcess {
  const worker = new WorkerProcess(id, {
    ...env!.workerEnv,
    BATON_WORKFLOWS: code,
    BATON_WORKER_ID: id,
    BATON_MISSING_VERSION_GRACE_MS: String(GRACE_MS),
    ...extra,
  });
  processes.push(worker);
  return worker;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each([
  ['nats', 'redis'],
  ['kafka', 'postgres'],
] as const)('a child whose start is dead-lettered (%s + %s, worker processes)', (bus, storeKind) => {
  it(
    'fails its parent with ChildWorkflowError naming the child, its workflow@version and the code; a redrive after the fix makes no second child',
    { timeout: 90_000 },
    async () => {
      env = await crashEnvironment(storeKind, bus)(`dc${randomBytes(5).toString('hex')}`, {});
      await env.transport.connect();
      await env.store.connect();
      const client = new Client({ transport: env.transport, store: env.store });
      const first = spawnWorker('first', FIRST_BUILD, { BATON_MAX_MESSAGE_BYTES: String(MAX_MESSAGE_BYTES) });
      await first.ready();

      const sentAt = Date.now();
      const unknown = await client.start({ name: 'dc_parent', version: 1 }, 1);
      const big = await client.start({ name: 'dc_big_parent', version: 1 }, { n: 2, size: BIG_INPUT });
      const failures = await Promise.all(
        [unknown, big].map(async (h) => {
          const err = await h.result({ timeoutMs: 30_000 }).then(
            () => undefined,
            (e: unknown) => e as Error,
          );
          return { err, afterMs: Date.now() - sentAt };
        }),
      );
      console.log(
        `${bus}+${storeKind}: parent failed ${failures[0]!.afterMs} ms (unknown-workflow, grace ${GRACE_MS} ms) ` +
          `and ${failures[1]!.afterMs} ms (too-large) after its start`,
      );

      const [unknownChild] = await client.runs.children(unknown.runId);
      const [bigChild] = await client.runs.children(big.runId);
      for (const [failure, child, code] of [
        [failures[0]!, unknownChild, 'unknown-workflow'],
        [failures[1]!, bigChild, 'too-large'],
      ] as const) {
        expect(child, 'the child run').toBeDefined();
        expect(failure.err?.message).toContain(
          `child run ${child!.runId} (dc_child) failed: StartDeadLetteredError: the start of child run ` +
            `${child!.runId} (dc_child@1) was dead-lettered '${code}'`,
        );
        expect(child).toMatchObject({ status: 'failed', workflow: 'dc_child', version: 1 });
        expect(child!.error).toMatchObject({ code: CHILD_START_DEAD_LETTERED });
      }
      const letters = (await client.deadLetters.list()).letters;
      expect(letters.map((l) => l.code).sort()).toEqual(['too-large', 'unknown-workflow']);

      // The fix: a worker that registers dc_child and reads the larger start; the first one stops.
      first.signal('SIGTERM');
      expect((await first.exited).code, first.describe()).toBe(0);
      const fixed = spawnWorker('fixed', FIXED_BUILD, { BATON_LOG_LEVEL: 'info' });
      await fixed.ready();
      // It redrives the unknown-workflow letter by itself; the too-large one is an operator's.
      await client.deadLetters.redrive(letters.find((l) => l.code === 'too-large')!.id);
      await until('the letters to be redriven', async () =>
        (await client.deadLetters.list()).letters.length === 0 ? true : undefined,
      );
      const dropped = await until('both redriven starts to be dropped', async () => {
        const lines = fixed.logs.filter((l) => /^start of child run \S+ dropped/.test(l.msg));
        return lines.length >= 2 ? lines : undefined;
      });
      expect(new Set(dropped.map((l) => l.runId))).toEqual(new Set([unknownChild!.runId, bigChild!.runId]));

      // No second child, and the children never ran: each is still the failed run its letter made.
      for (const [parent, child] of [
        [unknown, unknownChild!],
        [big, bigChild!],
      ] as const) {
        expect(await client.runs.children(parent.runId)).toEqual([child]);
        expect(fixed.logs.filter((l) => l.runId === child.runId && /claim/.test(l.msg))).toEqual([]);
      }
    },
  );
});
