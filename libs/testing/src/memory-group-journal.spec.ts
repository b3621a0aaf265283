/**
 * The transport conformance's journal section on a group journal (group commit across runs) over
 * the in-process bus and store, in both modes: to the executor it must be a journal like any other.
 * The real pairs run it through the worker's crash suites (crash-group-journal.fleet.int.spec.ts).
 */
import { beforeEach, describe } from 'vitest';
import type { Transport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { withGroupJournal } from '@baton/core/runtime';
import { describeJournalConformance } from './transport/journal.js';

for (const mode of ['group', 'per-run'] as const) {
  describe(`the journal conformance section on a group journal (mode ${mode})`, () => {
    let current: Transport | undefined;
    beforeEach(() => {
      current = withGroupJournal(memoryTransport(), memoryStore(), { mode, log: 'w1' });
    });
    describeJournalConformance(() => current!);
  });
}
