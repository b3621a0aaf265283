/**
 * Run streams on real worker processes, a real bus and a real store (stream-workflow.ts): runs
 * stream tokens from an activity; readers follow each run's streams with `client.stream`,
 * disconnecting every few items and resuming after the last sequence number they saw; the only
 * worker is SIGKILLed mid-stream and a new one resumes the runs. Every reader must see sequence
 * numbers 1, 2, 3… once each, in order, to the close; the tokens after the activity's last reset
 * whole and in order; and the workflow's own chunks (`start`, `done`) once each, though the new
 * worker replayed the code that wrote `start`.
 *
 * Each adapter pair calls it from its own spec: `describeStreamCrash('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { Client } from '@baton/client';
import type { StreamItem } from '@baton/core';
import { CrashWorld, pollUntil, type CrashEnvironmentFactory } from './harness.js';
import { crashStreamer, type StreamerInput } from './stream-workflow.js';
import { REPO_ROOT } from './worker-processes.js';

const STREAM_WORKFLOW_MODULE = resolve(REPO_ROOT, 'libs/testing/src/crash/stream-workflow.ts');
const RUNS = 3;
const TOKENS = 40;
const TOKEN_DELAY_MS = 100;
/** A reader drops its connection after this many items and resumes. */
const ITEMS_PER_CONNECTION = 7;

/**
 * Follows a stream across deliberate disconnects: each connection reads at most
 * {@link ITEMS_PER_CONNECTION} items, then is abandoned (its iterator returned) and a new one
 * resumes from the last sequence number plus one. Resolves with every item seen, in order, pushed
 * to `seen` as they come (a caller may watch it grow).
 */
export async function resumingReader<T = string>(
  client: Client,
  runId: string,
  stream: string,
  seen: StreamItem<T>[] = [],
): Promise<StreamItem<T>[]> {
  for (let connections = 0; connections < 1_000; connections++) {
    const from = (seen.at(-1)?.seq ?? 0) + 1;
    let read = 0;
    for await (const item of client.stream<T>(runId, stream, { from, pollMs: 50 })) {
      seen.push(item);
      if (item.kind === 'close') return seen;
      if (++read === ITEMS_PER_CONNECTION) break;
    }
    // The iterator ended without a close: the run finished (its streams are all read).
    if (read < ITEMS_PER_CONNECTION) return seen;
  }
  throw new Error(`reader of ${runId}/${stream} never saw the end`);
}

/** The chunks of the activity's last attempt: what follows the last reset. */
function lastAttempt(items: StreamItem<string>[]): string[] {
  const lastReset = items.findLastIndex((i) => i.kind === 'reset');
  return items.slice(lastReset + 1).flatMap((i) => (i.kind === 'chunk' ? [i.value] : []));
}

export function describeStreamCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`run streams on worker processes: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      'a worker SIGKILLed mid-stream, readers disconnecting and resuming: every item once, in order, to the close',
      { timeout: 180_000 },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: {
            BATON_WORKFLOWS: STREAM_WORKFLOW_MODULE,
            BATON_LEASE_MS: '2000',
            BATON_HEARTBEAT_MS: '500',
            BATON_REAP_INTERVAL_MS: '500',
          },
        });
        const w = world;
        const client = new Client({ transport: w.env.transport, store: w.env.store });
        const first = await w.fleet.spawn();
        const input: StreamerInput = { count: TOKENS, delayMs: TOKEN_DELAY_MS };
        const runIds: string[] = [];
        for (let i = 0; i < RUNS; i++) {
          const handle = await client.start(crashStreamer, input, { idempotencyKey: `${w.ns}-${i}` });
          runIds.push(handle.runId);
        }
        const tokenReaders = runIds.map((runId) => resumingReader(client, runId, 'tokens'));
        const progressReaders = runIds.map((runId) => resumingReader(client, runId, 'progress'));

        // Kill the worker once every run has streamed a few tokens (and well before the last).
        await pollUntil(
          async () => {
            for (const runId of runIds) {
              const records = await w.env.transport.runStreams!.read(runId, 'tokens', 0);
              if (records.length < 3) return false;
            }
            return true;
          },
          60_000,
          () => `every run to stream 3 token records\n${w.fleet.describe()}`,
        );
        first.signal('SIGKILL');
        await first.exited;
        await w.fleet.spawn();

        for (const runId of runIds) expect(await client.result(runId, { timeoutMs: 90_000 })).toBe(TOKENS);
        const tokens = await Promise.all(tokenReaders);
        const progress = await Promise.all(progressReaders);
        const expected = Array.from({ length: TOKENS }, (_, i) => `t${i}`);
        for (const [i, items] of tokens.entries()) {
          const runId = runIds[i]!;
          // Once each, in order, with no gap: the reader resumed across many disconnects.
          expect(
            items.map((item) => item.seq),
            runId,
          ).toEqual(items.map((_, n) => n + 1));
          expect(items.at(-1)?.kind, runId).toBe('close');
          expect(lastAttempt(items), runId).toEqual(expected);
          // The attempt cut by the kill is superseded by a reset before the re-run's chunks.
          expect(items.filter((item) => item.kind === 'reset').length, runId).toBe(1);
          // And a reader from the start after the end sees the same items.
          const again: StreamItem<string>[] = [];
          for await (const item of client.stream<string>(runId, 'tokens')) again.push(item);
          expect(again, runId).toEqual(items);
        }
        for (const [i, items] of progress.entries()) {
          expect(
            items.map((item) => (item.kind === 'chunk' ? item.value : item.kind)),
            runIds[i],
          ).toEqual(['start', 'done', 'close']);
        }
        // Registered in the order first written: the workflow's and the activity's writers race.
        expect((await client.streamNames(runIds[0]!)).sort()).toEqual(['progress', 'tokens']);
      },
    );
  });
}
