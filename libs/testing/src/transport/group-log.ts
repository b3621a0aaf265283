/**
 * Transport conformance, group log section (group commit across runs, contracts/group-journal.ts):
 * records appended to a named log at increasing positions, read back by position, trimmed.
 */
import { describe, expect, it } from 'vitest';
import type { GroupLog, Transport } from '@baton/core/adapter';
import { bytes, text, uniqueId } from '../conformance-helpers.js';

/** Registers the group log tests; `transport()` is the test's fresh transport. */
export function describeGroupLogConformance(transport: () => Transport): void {
  function groupLog(): GroupLog {
    const found = transport().groupLog;
    if (found === undefined) throw new Error(`transport ${transport().name} has no groupLog`);
    return found;
  }
  const logName = (): string =>
    uniqueId('w')
      .replace(/[^A-Za-z0-9_-]/g, '')
      .slice(0, 40);

  describe('group log', () => {
    it('appends records at increasing positions and reads them by position', async () => {
      const log = logName();
      const positions: number[] = [];
      for (const label of ['a', 'b', 'c'])
        positions.push(await groupLog().appendGroupRecord(log, bytes(label)));
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      expect(new Set(positions).size).toBe(3);
      const read = await groupLog().readGroupRecords(log, [positions[2]!, positions[0]!]);
      expect(new Map([...read].map(([p, data]) => [p, text(data)]))).toEqual(
        new Map([
          [positions[2], 'c'],
          [positions[0], 'a'],
        ]),
      );
    });

    it('keeps logs apart and leaves out positions it does not have', async () => {
      const [one, two] = [logName(), logName()];
      const p1 = await groupLog().appendGroupRecord(one, bytes('one'));
      const p2 = await groupLog().appendGroupRecord(two, bytes('two'));
      const read = await groupLog().readGroupRecords(one, [p1, p2 === p1 ? p1 + 1_000_000 : p2]);
      expect([...read.keys()]).toEqual([p1]);
      expect((await groupLog().readGroupRecords(logName(), [1, 2])).size).toBe(0);
    });

    it('trims the records before a position and keeps the rest', async () => {
      const log = logName();
      const positions: number[] = [];
      for (const label of ['a', 'b', 'c'])
        positions.push(await groupLog().appendGroupRecord(log, bytes(label)));
      // Before the first record, and before position 1: nothing goes.
      await groupLog().trimGroupLog(log, positions[0]!);
      await groupLog().trimGroupLog(log, 1);
      await groupLog().trimGroupLog(log, 0);
      expect([...(await groupLog().readGroupRecords(log, positions)).keys()].sort((a, b) => a - b)).toEqual(
        positions,
      );
      await groupLog().trimGroupLog(log, positions[2]!);
      await groupLog().trimGroupLog(logName(), 10);
      const read = await groupLog().readGroupRecords(log, positions);
      expect([...read.keys()]).toEqual([positions[2]]);
    });

    it('refuses a log name that is not letters, digits, - or _, naming it', async () => {
      await expect(groupLog().appendGroupRecord('a.b', bytes('x'))).rejects.toThrow(/a\.b/);
    });
  });
}
