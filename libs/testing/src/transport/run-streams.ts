/**
 * Transport conformance, RunStreamLog section (contracts/run-streams.ts): order and positions per
 * (run, stream), optimistic append where the bus says it has it, the run's index of stream
 * names, isolation from the run's own journal and from other runs and streams, and purge.
 */
import { describe, expect, it } from 'vitest';
import type { RunStreamLog, Transport } from '@baton/core/adapter';
import { bytes, text, uniqueId } from '../conformance-helpers.js';

/** The shape a JournalConflictError must have, whichever copy of `@baton/core` raised it. */
const CONFLICT = { name: 'JournalConflictError', code: 'BATON_JOURNAL_CONFLICT' } as const;

/** Registers the run-stream tests; `transport()` is the test's fresh transport. */
export function describeRunStreamConformance(transport: () => Transport): void {
  const log = (): RunStreamLog => {
    const streams = transport().runStreams;
    if (streams === undefined) throw new Error(`${transport().name} has no runStreams`);
    return streams;
  };
  // Every run here started a moment ago, as far as a bus that seeks by time knows.
  const sinceMs = Date.now() - 60_000;
  const texts = async (runId: string, stream: string, after = 0): Promise<string[]> =>
    (await log().read(runId, stream, after, { sinceMs })).map((r) => text(r.data));

  describe('run streams', () => {
    it('appends records at strictly increasing positions and reads them back in order', async () => {
      const runId = uniqueId('run');
      const positions: number[] = [];
      for (const label of ['a', 'b', 'c']) {
        positions.push(await log().append({ runId, stream: 'tokens', data: bytes(label) }));
      }
      expect(positions[0]).toBeGreaterThan(0);
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      const records = await log().read(runId, 'tokens', 0, { sinceMs });
      expect(records.map((r) => r.position)).toEqual(positions);
      expect(records.map((r) => text(r.data))).toEqual(['a', 'b', 'c']);
      expect(await texts(runId, 'tokens', positions[0])).toEqual(['b', 'c']);
      expect(await texts(runId, 'tokens', positions[2])).toEqual([]);
      expect((await log().read(runId, 'tokens', 0, { sinceMs, limit: 2 })).map((r) => text(r.data))).toEqual([
        'a',
        'b',
      ]);
      expect(await texts(runId, 'never-written')).toEqual([]);
    });

    it('keeps each stream apart from the run journal, the run’s other streams and other runs', async () => {
      const runId = uniqueId('run');
      const other = uniqueId('run');
      await transport().journal.append({ runId, data: bytes('journal') });
      await log().append({ runId, stream: 'a', data: bytes('a1') });
      await log().append({ runId, stream: 'b', data: bytes('b1') });
      await log().append({ runId: other, stream: 'a', data: bytes('other-a1') });
      expect(await texts(runId, 'a')).toEqual(['a1']);
      expect(await texts(runId, 'b')).toEqual(['b1']);
      expect(await texts(other, 'a')).toEqual(['other-a1']);
      expect((await transport().journal.read(runId, 0)).map((r) => text(r.data))).toEqual(['journal']);
    });

    it('refuses an append that expects a stale last position, where the bus says it can', async () => {
      const runId = uniqueId('run');
      const first = await log().append({ runId, stream: 's', data: bytes('1'), expectedLastPosition: 0 });
      const second = await log().append({
        runId,
        stream: 's',
        data: bytes('2'),
        expectedLastPosition: first,
      });
      expect(second).toBeGreaterThan(first);
      const stale = log().append({ runId, stream: 's', data: bytes('late'), expectedLastPosition: first });
      if (log().supportsOptimisticAppend) {
        await expect(stale).rejects.toMatchObject(CONFLICT);
        expect(await texts(runId, 's')).toEqual(['1', '2']);
      } else {
        // Kafka: the writer fences by epoch instead (the worker's run-streams.ts); the record lands.
        await stale;
        expect(await texts(runId, 's')).toEqual(['1', '2', 'late']);
      }
    });

    it('lists the run’s stream names once each, in the order first registered', async () => {
      const runId = uniqueId('run');
      expect(await log().names(runId, { sinceMs })).toEqual([]);
      await log().register(runId, 'progress', { sinceMs });
      await log().register(runId, 'tokens', { sinceMs });
      await log().register(runId, 'progress', { sinceMs });
      expect(await log().names(runId, { sinceMs })).toEqual(['progress', 'tokens']);
      expect(await log().names(uniqueId('run'), { sinceMs })).toEqual([]);
    });

    it('purges every stream of the run and its names, and no other run’s', async () => {
      const runId = uniqueId('run');
      const kept = uniqueId('run');
      for (const id of [runId, kept]) {
        await log().register(id, 'out', { sinceMs });
        await log().append({ runId: id, stream: 'out', data: bytes(`${id}-1`) });
      }
      await log().purge(runId, { sinceMs });
      await log().purge(uniqueId('never'), { sinceMs });
      if (log().purgeMode === 'deletes') {
        expect(await texts(runId, 'out')).toEqual([]);
        expect(await log().names(runId, { sinceMs })).toEqual([]);
      }
      expect(await texts(kept, 'out')).toEqual([`${kept}-1`]);
      expect(await log().names(kept, { sinceMs })).toEqual(['out']);
    });

    it('wakes a waiting reader when a record lands, where the bus offers waitForRecord', async () => {
      const wait = log().waitForRecord?.bind(log());
      if (wait === undefined) return; // the bus leaves readers to poll
      const runId = uniqueId('run');
      const first = await log().append({ runId, stream: 'w', data: bytes('1') });
      // A record already past the position answers at once.
      await wait(runId, 'w', 0, { timeoutMs: 600_000 });
      // One landing during the wait wakes it (a wait that never woke would time the test out).
      const waiting = wait(runId, 'w', first, { timeoutMs: 600_000 });
      await new Promise((r) => setTimeout(r, 50));
      await log().append({ runId, stream: 'w', data: bytes('2') });
      await waiting;
      expect(await texts(runId, 'w', first)).toEqual(['2']);
      // An abort ends a wait with nothing to hear.
      const abort = new AbortController();
      const idle = wait(runId, 'w', Number.MAX_SAFE_INTEGER - 1, {
        timeoutMs: 600_000,
        signal: abort.signal,
      });
      abort.abort();
      await idle;
    });

    it('refuses a stream name or run id the contract does not allow, naming it', async () => {
      const runId = uniqueId('run');
      await expect(log().append({ runId, stream: 'a.b', data: bytes('x') })).rejects.toMatchObject({
        name: 'ConfigError',
        message: expect.stringContaining("'a.b'"),
      });
      await expect(log().read('bad.run', 'a', 0)).rejects.toMatchObject({ name: 'ConfigError' });
      await expect(log().register(runId, '')).rejects.toMatchObject({ name: 'ConfigError' });
    });
  });
}
