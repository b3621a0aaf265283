/**
 * Store conformance, journal index section (group commit across runs, contracts/group-journal.ts):
 * pointers appended at expected positions, refused when another writer came after, independent
 * per run within one call, read back by range, forgotten with the run; which runs are grouped;
 * what each group log's records are still needed for (retention).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { GROUP_POSITION_BASE, type GroupLogUse, type JournalIndex, type Store } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';
import { acquireOk, checkpointOf, createTestRun } from './helpers.js';

const BASE = GROUP_POSITION_BASE;

/** Registers the journal index tests; `store()` is the test's fresh store. */
export function describeJournalIndexConformance(store: () => Store): void {
  function index(): JournalIndex {
    const found = store().journalIndex;
    if (found === undefined) throw new Error(`store ${store().name} has no journalIndex`);
    return found;
  }

  describe('journal index', () => {
    it("appends a new run's pointers after its empty journal, in order, and reads them back", async () => {
      const runId = uniqueId('run');
      expect(
        await index().appendPointers([{ runId, expectedLastPosition: 0, log: 'w1', record: 7 }]),
      ).toEqual([{ status: 'appended', position: BASE + 1 }]);
      expect(
        await index().appendPointers([{ runId, expectedLastPosition: BASE + 1, log: 'w1', record: 9 }]),
      ).toEqual([{ status: 'appended', position: BASE + 2 }]);
      expect(await index().readPointers(runId, 0)).toEqual({
        grouped: true,
        pointers: [
          { position: BASE + 1, log: 'w1', record: 7 },
          { position: BASE + 2, log: 'w1', record: 9 },
        ],
      });
    });

    it('leaves a run journaled on its own when its first append expects a position of that journal', async () => {
      const runId = uniqueId('run');
      expect(
        await index().appendPointers([{ runId, expectedLastPosition: 41, log: 'w1', record: 1 }]),
      ).toEqual([{ status: 'not-grouped' }]);
      expect(await index().readPointers(runId, 0)).toEqual({ grouped: false, pointers: [] });
    });

    it('refuses a pointer whose expected position is not the last, and records nothing for it', async () => {
      const runId = uniqueId('run');
      await index().appendPointers([{ runId, expectedLastPosition: 0, log: 'w1', record: 1 }]);
      await index().appendPointers([{ runId, log: 'w2', record: 5 }]);
      const stale = await index().appendPointers([
        { runId, expectedLastPosition: BASE + 1, log: 'w1', record: 2 },
      ]);
      expect(stale).toEqual([{ status: 'conflict', lastPosition: BASE + 2 }]);
      // A writer that believes the run is new, or still journaled per run, is refused too.
      expect(
        await index().appendPointers([{ runId, expectedLastPosition: 0, log: 'w1', record: 3 }]),
      ).toEqual([{ status: 'conflict', lastPosition: BASE + 2 }]);
      expect((await index().readPointers(runId, 0)).pointers.map((p) => p.record)).toEqual([1, 5]);
    });

    it('answers an append that names the pointer it expects last as one that does not: by what the run holds', async () => {
      const runId = uniqueId('run');
      await index().appendPointers([{ runId, expectedLastPosition: 0, log: 'w1', record: 1 }]);
      // The hint matches: appended after it, in the same log or another.
      expect(
        await index().appendPointers([
          {
            runId,
            expectedLastPosition: BASE + 1,
            expectedLastPointer: { log: 'w1', record: 1 },
            log: 'w1',
            record: 4,
          },
        ]),
      ).toEqual([{ status: 'appended', position: BASE + 2 }]);
      expect(
        await index().appendPointers([
          {
            runId,
            expectedLastPosition: BASE + 2,
            expectedLastPointer: { log: 'w1', record: 4 },
            log: 'w2',
            record: 2,
          },
        ]),
      ).toEqual([{ status: 'appended', position: BASE + 3 }]);
      // Another writer came after the pointer a zombie names: refused with the run's last position.
      expect(
        await index().appendPointers([
          {
            runId,
            expectedLastPosition: BASE + 2,
            expectedLastPointer: { log: 'w1', record: 4 },
            log: 'w1',
            record: 9,
          },
        ]),
      ).toEqual([{ status: 'conflict', lastPosition: BASE + 3 }]);
      expect((await index().readPointers(runId, 0)).pointers.map((p) => [p.log, p.record])).toEqual([
        ['w1', 1],
        ['w1', 4],
        ['w2', 2],
      ]);
      // Both logs keep the run's oldest record in them.
      const uses = await index().groupLogUse();
      expect(uses.find((u) => u.log === 'w2')?.oldestNeeded).toBeLessThanOrEqual(2);
      // A run journaled on its own stays so, whatever the hint says.
      const own = uniqueId('own');
      await index().appendPointers([{ runId: own, log: 'w1', record: 3 }]);
      expect(
        await index().appendPointers([
          {
            runId: own,
            expectedLastPosition: BASE + 1,
            expectedLastPointer: { log: 'w1', record: 3 },
            log: 'w1',
            record: 5,
          },
        ]),
      ).toEqual([{ status: 'not-grouped' }]);
    });

    it('leaves a run on its own journal when its first append expects a pointer position', async () => {
      const runId = uniqueId('run');
      const [result] = await index().appendPointers([
        { runId, expectedLastPosition: BASE + 3, log: 'w1', record: 1 },
      ]);
      expect(result).toEqual({ status: 'not-grouped' });
      expect(await index().readPointers(runId, 0)).toEqual({ grouped: false, pointers: [] });
    });

    it('appends a fence marker after existing pointers, and marks a run without any as its own for good', async () => {
      const own = uniqueId('own');
      const grouped = uniqueId('grouped');
      await index().appendPointers([{ runId: grouped, expectedLastPosition: 0, log: 'w1', record: 1 }]);
      expect(
        await index().appendPointers([
          { runId: own, log: 'w2', record: 4 },
          { runId: grouped, log: 'w2', record: 4 },
        ]),
      ).toEqual([{ status: 'not-grouped' }, { status: 'appended', position: BASE + 2 }]);
      // A first owner that wakes up after the marker cannot start pointers behind it.
      expect(
        await index().appendPointers([{ runId: own, expectedLastPosition: 0, log: 'w1', record: 5 }]),
      ).toEqual([{ status: 'not-grouped' }]);
      expect(await index().readPointers(own, 0)).toEqual({ grouped: false, pointers: [] });
    });

    it('marks a run without pointers as its own on the cheap path, and leaves a grouped run as it is', async () => {
      const [fresh, grouped] = [uniqueId('fresh'), uniqueId('grouped')];
      await index().appendPointers([{ runId: grouped, expectedLastPosition: 0, log: 'w1', record: 1 }]);
      expect(await index().markOwnJournal(fresh)).toBe('own');
      expect(await index().markOwnJournal(fresh)).toBe('own');
      expect(await index().markOwnJournal(grouped)).toBe('grouped');
      // Marked: a first owner that wakes up late cannot start pointers.
      expect(
        await index().appendPointers([{ runId: fresh, expectedLastPosition: 0, log: 'w1', record: 2 }]),
      ).toEqual([{ status: 'not-grouped' }]);
      expect(await index().readPointers(grouped, 0)).toMatchObject({
        grouped: true,
        pointers: [{ record: 1 }],
      });
    });

    it('treats every run of one call on its own, and two appends of one run in order', async () => {
      const [a, b, c] = [uniqueId('a'), uniqueId('b'), uniqueId('c')];
      await index().appendPointers([{ runId: b, expectedLastPosition: 0, log: 'w1', record: 1 }]);
      const results = await index().appendPointers([
        { runId: a, expectedLastPosition: 0, log: 'w1', record: 2 },
        { runId: b, expectedLastPosition: 0, log: 'w1', record: 2 },
        { runId: c, expectedLastPosition: 0, log: 'w1', record: 2 },
        { runId: c, expectedLastPosition: BASE + 1, log: 'w1', record: 3 },
      ]);
      expect(results).toEqual([
        { status: 'appended', position: BASE + 1 },
        { status: 'conflict', lastPosition: BASE + 1 },
        { status: 'appended', position: BASE + 1 },
        { status: 'appended', position: BASE + 2 },
      ]);
      expect((await index().readPointers(c, 0)).pointers.map((p) => p.record)).toEqual([2, 3]);
    });

    it('reads pointers after a position and up to another', async () => {
      const runId = uniqueId('run');
      for (let i = 0; i < 4; i++) {
        await index().appendPointers([
          { runId, expectedLastPosition: i === 0 ? 0 : BASE + i, log: 'w1', record: i },
        ]);
      }
      const records = async (after: number, upto?: number) =>
        (await index().readPointers(runId, after, upto)).pointers.map((p) => p.record);
      expect(await records(BASE + 1)).toEqual([1, 2, 3]);
      expect(await records(BASE + 1, BASE + 3)).toEqual([1, 2]);
      expect(await records(0, BASE + 1)).toEqual([0]);
      expect(await records(BASE + 4)).toEqual([]);
      expect(await index().readPointers(runId, BASE + 4)).toEqual({ grouped: true, pointers: [] });
    });

    it('forgets every pointer of a run, and the mark of a run journaled on its own', async () => {
      const [grouped, own] = [uniqueId('grouped'), uniqueId('own')];
      await index().appendPointers([
        { runId: grouped, expectedLastPosition: 0, log: 'w1', record: 1 },
        { runId: own, log: 'w1', record: 1 },
      ]);
      await index().deletePointers(grouped);
      await index().deletePointers(own);
      await index().deletePointers(uniqueId('never'));
      expect(await index().readPointers(grouped, 0)).toEqual({ grouped: false, pointers: [] });
      expect(
        await index().appendPointers([{ runId: own, expectedLastPosition: 0, log: 'w1', record: 2 }]),
      ).toEqual([{ status: 'appended', position: BASE + 1 }]);
    });

    describe('retention of group logs', () => {
      const logName = (): string =>
        uniqueId('w')
          .replace(/[^A-Za-z0-9_-]/g, '')
          .slice(0, 40);
      const use = async (log: string): Promise<GroupLogUse | undefined> =>
        (await index().groupLogUse()).find((u) => u.log === log);

      it("knows each log's oldest record a run still needs and its newest recorded one, and releases a run's pointers with it", async () => {
        const [log, other] = [logName(), logName()];
        const [a, b] = [uniqueId('a'), uniqueId('b')];
        await index().appendPointers([{ runId: a, expectedLastPosition: 0, log, record: 3 }]);
        await index().appendPointers([
          { runId: b, expectedLastPosition: 0, log, record: 5 },
          { runId: a, expectedLastPosition: BASE + 1, log, record: 5 },
        ]);
        await index().appendPointers([{ runId: a, expectedLastPosition: BASE + 2, log: other, record: 2 }]);
        await index().appendPointers([{ runId: b, expectedLastPosition: BASE + 1, log, record: 9 }]);
        expect(await use(log)).toEqual({ log, oldestNeeded: 3, newestRecorded: 9 });
        expect(await use(other)).toEqual({ log: other, oldestNeeded: 2, newestRecorded: 2 });
        await index().deletePointers(a);
        expect(await use(log)).toEqual({ log, oldestNeeded: 5, newestRecorded: 9 });
        expect(await use(other)).toEqual({ log: other, newestRecorded: 2 });
        await index().deletePointers(b);
        expect(await use(log)).toEqual({ log, newestRecorded: 9 });
      });

      it('counts only accepted pointers: a refused or not-grouped append names nothing', async () => {
        const log = logName();
        const [own, grouped] = [uniqueId('own'), uniqueId('grouped')];
        expect(await index().markOwnJournal(own)).toBe('own');
        await index().appendPointers([{ runId: grouped, expectedLastPosition: 0, log, record: 4 }]);
        const results = await index().appendPointers([
          { runId: own, expectedLastPosition: 0, log, record: 8 },
          { runId: grouped, expectedLastPosition: 0, log, record: 8 },
        ]);
        expect(results.map((r) => r.status)).toEqual(['not-grouped', 'conflict']);
        expect(await use(log)).toEqual({ log, oldestNeeded: 4, newestRecorded: 4 });
      });

      it('forgets a log only when nothing names it and nothing was recorded since, and knows it again after', async () => {
        const log = logName();
        const runId = uniqueId('run');
        await index().appendPointers([{ runId, expectedLastPosition: 0, log, record: 6 }]);
        expect(await index().forgetGroupLog(log, 6)).toBe(false);
        await index().deletePointers(runId);
        expect(await index().forgetGroupLog(log, 5)).toBe(false);
        expect(await use(log)).toEqual({ log, newestRecorded: 6 });
        expect(await index().forgetGroupLog(log, 6)).toBe(true);
        expect(await use(log)).toBeUndefined();
        expect(await index().forgetGroupLog(log, 6)).toBe(false);
        const later = uniqueId('later');
        await index().appendPointers([{ runId: later, expectedLastPosition: 0, log, record: 11 }]);
        expect(await use(log)).toEqual({ log, oldestNeeded: 11, newestRecorded: 11 });
      });

      it("releases a run's pointers when the store deletes the finished run, by id and in the retention batch", async () => {
        const log = logName();
        const finished = async (record: number): Promise<string> => {
          const { runId } = await createTestRun(store(), 'completed');
          await index().appendPointers([{ runId, expectedLastPosition: 0, log, record }]);
          const epoch = await acquireOk(store(), runId, 'worker-a');
          await store().runs.finish(
            runId,
            epoch,
            { status: 'completed', result: null },
            checkpointOf(runId, epoch, 1, { status: 'completed' }),
          );
          return runId;
        };
        const byId = await finished(1);
        const swept = await finished(2);
        const live = (await createTestRun(store(), 'running')).runId;
        await index().appendPointers([{ runId: live, expectedLastPosition: 0, log, record: 3 }]);
        expect(await use(log)).toEqual({ log, oldestNeeded: 1, newestRecorded: 3 });
        expect(await store().retention.delete(byId)).toBe(true);
        expect(await use(log)).toEqual({ log, oldestNeeded: 2, newestRecorded: 3 });
        await sleep(300);
        expect(await store().retention.deleteExpired(150, 100, 150)).toContain(swept);
        expect(await use(log)).toEqual({ log, oldestNeeded: 3, newestRecorded: 3 });
        expect((await index().readPointers(live, 0)).pointers).toEqual([
          { position: BASE + 1, log, record: 3 },
        ]);
      });
    });
  });
}
