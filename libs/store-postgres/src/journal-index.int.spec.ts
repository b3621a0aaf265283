/**
 * The journal index under concurrency, on real Postgres: two stores (two pools, as two workers)
 * appending pointers for the same runs at once, first appends racing fence markers, and deletes
 * racing appends. The conformance section covers the single-caller semantics.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { GROUP_POSITION_BASE, type JournalIndex, type PointerAppendResult } from '@baton/core/adapter';
import { postgresStore } from './index.js';
import { TestSchemas, admin, url } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());

const BASE = GROUP_POSITION_BASE;

/** Two stores on one fresh schema, and the schema. */
async function twoWriters(): Promise<{
  a: JournalIndex;
  b: JournalIndex;
  schema: string;
  close: () => Promise<void>;
}> {
  const schema = schemas.name();
  const stores = [postgresStore({ url, schema, poolSize: 4 }), postgresStore({ url, schema, poolSize: 4 })];
  await Promise.all(stores.map((s) => s.connect()));
  return {
    a: stores[0]!.journalIndex!,
    b: stores[1]!.journalIndex!,
    schema,
    close: async () => {
      await Promise.all(stores.map((s) => s.close()));
    },
  };
}

/**
 * Runs whose rows break the index's shape: pointers without the run's row, or pointers that are not
 * exactly 1..count of the run's row (a gap, or a count given twice).
 */
async function misshapenRuns(schema: string): Promise<string[]> {
  const rows = await admin<{ run_id: string }>(
    `SELECT coalesce(p.run_id, j.run_id) AS run_id
     FROM (SELECT run_id, count(*) AS pointers, max(n) AS last FROM "${schema}".journal_pointers GROUP BY run_id) p
     FULL JOIN "${schema}".journal_runs j ON j.run_id = p.run_id
     WHERE j.run_id IS NULL
        OR (p.run_id IS NOT NULL AND (j.own_journal OR p.pointers <> j.pointers OR p.last <> j.pointers))
        OR (p.run_id IS NULL AND NOT j.own_journal)`,
  );
  return rows.map((r) => r.run_id);
}

const statuses = (results: PointerAppendResult[]): string[] => results.map((r) => r.status);

describe('postgres journal index under concurrency', () => {
  it('gives each position once when two writers extend the same runs at once, in opposite orders', async () => {
    const { a, b, schema, close } = await twoWriters();
    try {
      const runs = Array.from({ length: 200 }, (_, i) => `run-${String(i).padStart(3, '0')}`);
      await a.appendPointers(runs.map((runId) => ({ runId, expectedLastPosition: 0, log: 'wa', record: 1 })));
      for (let round = 1; round <= 5; round++) {
        // Both writers believe every run's last position is BASE + round; each names the runs in
        // another order, so their calls would deadlock if taken in the order given.
        const [fromA, fromB] = await Promise.all([
          a.appendPointers(
            runs.map((runId) => ({
              runId,
              expectedLastPosition: BASE + round,
              log: 'wa',
              record: round + 1,
            })),
          ),
          b.appendPointers(
            [...runs]
              .reverse()
              .map((runId) => ({ runId, expectedLastPosition: BASE + round, log: 'wb', record: round + 1 })),
          ),
        ]);
        const winners = runs.map((_, i) =>
          [fromA[i]!.status, fromB[runs.length - 1 - i]!.status].sort().join('+'),
        );
        expect(new Set(winners)).toEqual(new Set(['appended+conflict']));
        // The refused writer is told the position the other one took.
        for (const result of [...fromA, ...fromB]) {
          expect(result).toEqual(
            result.status === 'appended'
              ? { status: 'appended', position: BASE + round + 1 }
              : { status: 'conflict', lastPosition: BASE + round + 1 },
          );
        }
      }
      expect(await misshapenRuns(schema)).toEqual([]);
      const { pointers } = await b.readPointers(runs[7]!, 0);
      expect(pointers.map((p) => p.position)).toEqual([1, 2, 3, 4, 5, 6].map((n) => BASE + n));
    } finally {
      await close();
    }
  });

  it('keeps every run contiguous when many writers race with the position each last saw', async () => {
    const { a, b, schema, close } = await twoWriters();
    try {
      const runs = ['hot-1', 'hot-2', 'hot-3'];
      await a.appendPointers(runs.map((runId) => ({ runId, expectedLastPosition: 0, log: 'w0', record: 0 })));
      let accepted = 0;
      // Eight writers, each appending to every run 15 times from the last position it saw.
      const writer = async (index: JournalIndex, name: string): Promise<void> => {
        const seen = new Map(runs.map((runId) => [runId, BASE + 1]));
        for (let i = 0; i < 15; i++) {
          const results = await index.appendPointers(
            runs.map((runId) => ({ runId, expectedLastPosition: seen.get(runId)!, log: name, record: i })),
          );
          results.forEach((result, r) => {
            if (result.status === 'appended') {
              accepted++;
              seen.set(runs[r]!, result.position);
            } else if (result.status === 'conflict') {
              seen.set(runs[r]!, result.lastPosition);
            } else {
              throw new Error(`run ${runs[r]} answered not-grouped`);
            }
          });
        }
      };
      await Promise.all([a, b, a, b, a, b, a, b].map((index, i) => writer(index, `w${i + 1}`)));
      expect(await misshapenRuns(schema)).toEqual([]);
      const counts = await Promise.all(
        runs.map(async (runId) => (await a.readPointers(runId, 0)).pointers.length),
      );
      expect(counts.reduce((x, y) => x + y, 0)).toBe(runs.length + accepted);
    } finally {
      await close();
    }
  });

  it("decides a run's first append once when a new run's pointer and a fence marker race", async () => {
    const { a, b, schema, close } = await twoWriters();
    try {
      const runs = Array.from({ length: 150 }, (_, i) => `new-${i}`);
      // One call per run and writer, all at once: which of the two lands first differs by run.
      const raced = await Promise.all(
        runs.map((runId) =>
          Promise.all([
            a.appendPointers([{ runId, expectedLastPosition: 0, log: 'wa', record: 1 }]),
            b.appendPointers([{ runId, log: 'wb', record: 1 }]),
          ]),
        ),
      );
      const first = raced.map(([[pointer]]) => pointer);
      const marker = raced.map(([, [mark]]) => mark);
      for (const [i, runId] of runs.entries()) {
        const outcome = `${first[i]!.status}+${marker[i]!.status}`;
        // The pointer first, then the marker after it; or the marker first, and the run is its own.
        expect(['appended+appended', 'not-grouped+not-grouped']).toContain(outcome);
        const { grouped, pointers } = await a.readPointers(runId, 0);
        expect({ runId, grouped, pointers: pointers.length }).toEqual(
          outcome === 'appended+appended'
            ? { runId, grouped: true, pointers: 2 }
            : { runId, grouped: false, pointers: 0 },
        );
      }
      expect(await misshapenRuns(schema)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('leaves no pointer behind when a run is deleted while it is appended to', async () => {
    const { a, b, schema, close } = await twoWriters();
    try {
      const runs = Array.from({ length: 60 }, (_, i) => `doomed-${i}`);
      await a.appendPointers(runs.map((runId) => ({ runId, expectedLastPosition: 0, log: 'wa', record: 1 })));
      const appending = (async () => {
        for (let i = 0; i < 10; i++) {
          const results = await a.appendPointers(runs.map((runId) => ({ runId, log: 'wa', record: i + 2 })));
          expect(statuses(results).every((s) => s === 'appended' || s === 'not-grouped')).toBe(true);
        }
      })();
      const deleting = (async () => {
        for (const runId of runs) await b.deletePointers(runId);
      })();
      await Promise.all([appending, deleting]);
      // A marker that came after a run's delete marked it as its own; every other run is gone.
      expect(await misshapenRuns(schema)).toEqual([]);
      for (const runId of runs)
        expect(await a.readPointers(runId, 0)).toEqual({ grouped: false, pointers: [] });
      // Nothing names a record of the log any more.
      const [use] = await a.groupLogUse();
      expect(use).toMatchObject({ log: 'wa' });
      expect(use?.oldestNeeded).toBeUndefined();
    } finally {
      await close();
    }
  });

  it('appends the pointers of 500 runs in one call', async () => {
    const { a, close } = await twoWriters();
    try {
      const runs = Array.from({ length: 500 }, (_, i) => `big-${i}`);
      const results = await a.appendPointers(
        runs.map((runId, i) => ({ runId, expectedLastPosition: 0, log: 'wa', record: i })),
      );
      expect(results).toEqual(runs.map(() => ({ status: 'appended', position: BASE + 1 })));
      expect(await a.groupLogUse()).toEqual([{ log: 'wa', oldestNeeded: 0, newestRecorded: 499 }]);
    } finally {
      await close();
    }
  });
});
