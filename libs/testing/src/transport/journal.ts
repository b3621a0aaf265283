/**
 * Transport conformance, JournalLog and DeadLetterQueue sections.
 */
import { describe, expect, it } from 'vitest';
import type { Transport } from '@baton/core/adapter';
import { bytes, text, uniqueId } from '../conformance-helpers.js';

/** The shape a JournalConflictError must have, whichever copy of `@baton/core` raised it. */
const CONFLICT = { name: 'JournalConflictError', code: 'BATON_JOURNAL_CONFLICT' } as const;

/** Registers the journal and dead-letter tests; `transport()` is the test's fresh transport. */
export function describeJournalConformance(transport: () => Transport): void {
  async function appendAll(runId: string, labels: string[]): Promise<number[]> {
    const positions: number[] = [];
    for (const label of labels)
      positions.push(await transport().journal.append({ runId, data: bytes(label) }));
    return positions;
  }

  async function readTexts(runId: string, after = 0, upto?: number): Promise<string[]> {
    return (await transport().journal.read(runId, after, upto)).map((r) => text(r.data));
  }

  describe('journal', () => {
    it('appends records at strictly increasing positions and reads them back in order', async () => {
      const runId = uniqueId('run');
      const positions = await appendAll(runId, ['a', 'b', 'c']);
      expect(positions[0]).toBeGreaterThan(0);
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      expect(new Set(positions).size).toBe(3);
      const records = await transport().journal.read(runId, 0);
      expect(records.map((r) => r.position)).toEqual(positions);
      expect(records.map((r) => text(r.data))).toEqual(['a', 'b', 'c']);
    });

    it('reads only records after `afterPosition` and up to `uptoPosition`', async () => {
      const runId = uniqueId('run');
      const [p1, p2, p3, p4] = (await appendAll(runId, ['a', 'b', 'c', 'd'])) as [
        number,
        number,
        number,
        number,
      ];
      expect(await readTexts(runId, p1)).toEqual(['b', 'c', 'd']);
      expect(await readTexts(runId, p1, p3)).toEqual(['b', 'c']);
      expect(await readTexts(runId, 0, p1)).toEqual(['a']);
      expect(await readTexts(runId, p2, p2)).toEqual([]);
      expect(await readTexts(runId, p4)).toEqual([]);
      expect(await readTexts(uniqueId('empty'), 0)).toEqual([]);
    });

    it('keeps each run to its own records', async () => {
      const a = uniqueId('run-a');
      const b = uniqueId('run-b');
      await transport().journal.append({ runId: a, data: bytes('a1') });
      await transport().journal.append({ runId: b, data: bytes('b1') });
      await transport().journal.append({ runId: a, data: bytes('a2') });
      expect(await readTexts(a)).toEqual(['a1', 'a2']);
      expect(await readTexts(b)).toEqual(['b1']);
    });

    it('appends when the expected last position is right, also across other runs', async (ctx) => {
      if (!transport().journal.supportsOptimisticAppend)
        ctx.skip('transport does not enforce expectedLastPosition');
      const runId = uniqueId('run');
      const other = uniqueId('other');
      const p1 = await transport().journal.append({ runId, data: bytes('a'), expectedLastPosition: 0 });
      await transport().journal.append({ runId: other, data: bytes('x') });
      const p2 = await transport().journal.append({ runId, data: bytes('b'), expectedLastPosition: p1 });
      expect(p2).toBeGreaterThan(p1);
      expect(await readTexts(runId)).toEqual(['a', 'b']);
    });

    it('rejects an append whose expected last position is stale with JournalConflictError', async (ctx) => {
      if (!transport().journal.supportsOptimisticAppend)
        ctx.skip('transport does not enforce expectedLastPosition');
      const runId = uniqueId('run');
      const [p1, p2] = (await appendAll(runId, ['a', 'b'])) as [number, number];
      await expect(
        transport().journal.append({ runId, data: bytes('zombie'), expectedLastPosition: p1 }),
      ).rejects.toMatchObject({ ...CONFLICT, runId, expectedLast: p1, actualLast: p2 });
      await expect(
        transport().journal.append({ runId, data: bytes('zombie'), expectedLastPosition: 0 }),
      ).rejects.toMatchObject({ ...CONFLICT, expectedLast: 0, actualLast: p2 });
      expect(await readTexts(runId)).toEqual(['a', 'b']);
    });

    it('lets exactly one of two concurrent appends with the same expected position win', async (ctx) => {
      if (!transport().journal.supportsOptimisticAppend)
        ctx.skip('transport does not enforce expectedLastPosition');
      const runId = uniqueId('run');
      const [last] = (await appendAll(runId, ['base'])) as [number];
      const results = await Promise.allSettled(
        ['left', 'right'].map((label) =>
          transport().journal.append({ runId, data: bytes(label), expectedLastPosition: last }),
        ),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]?.reason).toMatchObject({ ...CONFLICT, expectedLast: last });
      const texts = await readTexts(runId);
      expect(texts).toHaveLength(2);
      expect(texts[0]).toBe('base');
    });

    it('appends unconditionally when no expected position is given', async () => {
      const runId = uniqueId('run');
      await appendAll(runId, ['a', 'b']);
      await transport().journal.append({ runId, data: bytes('fence') });
      expect(await readTexts(runId)).toEqual(['a', 'b', 'fence']);
    });

    it('keeps the appended bytes even if the caller reuses its buffer', async () => {
      const runId = uniqueId('run');
      const buffer = bytes('intact');
      await transport().journal.append({ runId, data: buffer });
      buffer.fill(0);
      const [record] = await transport().journal.read(runId, 0);
      record?.data.fill(0);
      expect(await readTexts(runId)).toEqual(['intact']);
    });

    it("purges one run's journal and keeps every other run's (or keeps both, by retention)", async () => {
      const purged = uniqueId('purged');
      const kept = uniqueId('kept');
      await appendAll(purged, ['a', 'b']);
      await appendAll(kept, ['c']);
      await transport().journal.purge(purged);
      await transport().journal.purge(uniqueId('never-written'));
      expect(['deletes', 'retention']).toContain(transport().journal.purgeMode);
      expect(await readTexts(purged)).toEqual(transport().journal.purgeMode === 'deletes' ? [] : ['a', 'b']);
      expect(await readTexts(kept)).toEqual(['c']);
    });
  });

  describe('dead letters', () => {
    it('keeps dead letters with reason, code, time, headers and data, oldest first', async () => {
      const at = Date.now();
      const first = {
        data: bytes('{bad json'),
        headers: { 'baton-kind': 'start' },
        reason: 'not JSON',
        code: 'unparseable',
        at,
      };
      const second = {
        data: bytes('{}'),
        headers: {},
        reason: 'workflow nope@1 is not registered',
        code: 'unknown-workflow',
        at: at + 1,
      };
      await transport().deadLetters.add(first);
      await transport().deadLetters.add(second);
      const letters = await transport().deadLetters.list();
      expect(letters.map((l) => l.code)).toEqual(['unparseable', 'unknown-workflow']);
      expect(letters[0]).toMatchObject({
        reason: 'not JSON',
        code: 'unparseable',
        at,
        headers: first.headers,
      });
      expect(text(letters[0]?.data ?? new Uint8Array())).toBe('{bad json');
    });

    it('lists only the most recent dead letters when given a limit', async () => {
      for (const code of ['one', 'two', 'three']) {
        await transport().deadLetters.add({
          data: bytes(code),
          headers: {},
          reason: `reason ${code}`,
          code,
          at: Date.now(),
        });
      }
      expect((await transport().deadLetters.list(2)).map((l) => l.code)).toEqual(['two', 'three']);
    });

    it('lists nothing before anything was dead-lettered', async () => {
      expect(await transport().deadLetters.list()).toEqual([]);
    });
  });
}
