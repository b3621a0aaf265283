import { describe, expect, it } from 'vitest';
import { decodeEntries, encodeEntries } from '../codec.js';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import { filterFencedEntries, type JournalEntry, type PositionedEntry } from '../../shared/journal.js';
import {
  chainGenesis,
  chainHeadOf,
  chainLink,
  linkEntries,
  verifyChain,
  type ChainedEntry,
} from './hash-chain.js';

const runId = 'run-chain';

function history(): JournalEntry[] {
  return [
    { type: 'ValueRecorded', epoch: 1, at: 10, seq: 0, name: 'now', value: 1234 },
    { type: 'ActivityStarted', epoch: 1, at: 11, seq: 1, name: 'charge' },
    {
      type: 'ActivityCompleted',
      epoch: 1,
      at: 12,
      seq: 1,
      name: 'charge',
      result: { id: 'ch_1' },
      attempts: 1,
    },
    { type: 'TimerScheduled', epoch: 1, at: 13, seq: 2, wakeAt: 99 },
    { type: 'TimerFired', epoch: 1, at: 14, seq: 2 },
  ];
}

function linked(): ChainedEntry[] {
  return linkEntries(history(), chainGenesis(runId)).entries;
}

/** The CheckpointIntegrityError verifyChain throws for `items`. */
function chainError(
  items: readonly (ChainedEntry | PositionedEntry)[],
  options: Partial<Parameters<typeof verifyChain>[1]> = {},
): CheckpointIntegrityError {
  let caught: unknown;
  try {
    verifyChain(items, { runId, ...options });
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(CheckpointIntegrityError);
  return caught as CheckpointIntegrityError;
}

describe('hash chain links', () => {
  it('starts from a genesis of its own per run', () => {
    expect(chainGenesis('a')).not.toBe(chainGenesis('b'));
    expect(chainGenesis('a')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('links entries so that verification walks to the same head', () => {
    const { entries, head } = linkEntries(history(), chainGenesis(runId));
    expect(entries[0]!.prev).toBe(chainGenesis(runId));
    expect(entries[1]!.prev).toBe(chainLink(chainGenesis(runId), history()[0]!));
    expect(verifyChain(entries, { runId })).toBe(head);
    expect(chainHeadOf(entries, chainGenesis(runId))).toBe(head);
    expect(verifyChain([], { runId })).toBe(chainGenesis(runId));
  });

  it('does not depend on key order, dropped undefined fields or a JSON round trip through a store', () => {
    const { entries, head } = linkEntries(history(), chainGenesis(runId));
    const reordered = entries.map((e) => Object.fromEntries(Object.entries(e).reverse()) as ChainedEntry);
    expect(verifyChain(reordered, { runId })).toBe(head);
    const throughBus = decodeEntries(encodeEntries(entries), runId);
    expect(verifyChain(throughBus, { runId })).toBe(head);
    const completed = history()[2]!;
    const withUndefined = { ...completed, reconciled: undefined } as JournalEntry;
    expect(chainLink('h', withUndefined)).toBe(chainLink('h', completed));
  });

  it('continues from a checkpoint head, numbering entries after the checkpoint', () => {
    const all = linked();
    const checkpointHead = chainHeadOf(all.slice(0, 3), chainGenesis(runId));
    expect(verifyChain(all.slice(3), { runId, startHash: checkpointHead, startIndex: 3 })).toBe(
      verifyChain(all, { runId }),
    );
    // The first record after the checkpoint was removed: the next entry does not continue it.
    const err = chainError(all.slice(4), {
      startHash: checkpointHead,
      startIndex: 3,
      where: 'journal after checkpoint 2',
    });
    expect(err.entry).toBe('journal after checkpoint 2: journal entry #3 (TimerFired of step #2)');
    expect(err.message).toMatch(/it does not continue the checkpoint it follows/);
  });
});

describe('hash chain verification finds', () => {
  it('a deleted entry in the middle, naming the entry that followed it', () => {
    const entries = linked();
    entries.splice(2, 1); // the ActivityCompleted of step 1
    const err = chainError(entries);
    expect(err.entry).toBe('journal entry #2 (TimerScheduled of step #2)');
    expect(err.message).toMatch(
      /it records predecessor hash .{12}… but the entries before it hash to .{12}…: entry #1 \(ActivityStarted\) or an earlier one was removed, reordered or altered/,
    );
  });

  it('a deleted first entry', () => {
    const err = chainError(linked().slice(1));
    expect(err.entry).toBe('journal entry #0 (ActivityStarted of step #1)');
    expect(err.message).toMatch(/entries before it were removed/);
  });

  it('two entries swapped, naming the one moved up', () => {
    const entries = linked();
    [entries[1], entries[2]] = [entries[2]!, entries[1]!];
    expect(chainError(entries).entry).toBe('journal entry #1 (ActivityCompleted of step #1)');
  });

  it('an altered entry, at the entry after it', () => {
    const entries = linked();
    entries[2] = { ...entries[2]!, result: { id: 'ch_forged' } } as ChainedEntry;
    expect(chainError(entries).entry).toBe('journal entry #3 (TimerScheduled of step #2)');
  });

  it('an altered link, at the entry itself', () => {
    const entries = linked();
    entries[3] = { ...entries[3]!, prev: chainGenesis(runId) };
    expect(chainError(entries).entry).toBe('journal entry #3 (TimerScheduled of step #2)');
    entries[3] = { ...entries[3]!, prev: 42 as unknown as string };
    expect(chainError(entries).message).toMatch(/its prev field is not a hash string/);
  });

  it('the transport position of the bad entry when given positioned entries', () => {
    const positioned = linked().map((entry, i) => ({ position: 100 + i, entry }));
    positioned.splice(1, 1);
    expect(chainError(positioned).entry).toBe(
      'journal entry #1 (ActivityCompleted of step #1, journal position 102)',
    );
  });

  it('but not a removed newest entry: only a head recorded elsewhere (a checkpoint) shows that', () => {
    const entries = linked();
    const head = verifyChain(entries, { runId });
    const truncatedHead = verifyChain(entries.slice(0, -1), { runId });
    expect(truncatedHead).not.toBe(head);
  });
});

describe('hash chain with lease markers and fenced writers', () => {
  it('accepts a lease marker written before its owner read the journal, and still covers it', () => {
    const first = linkEntries(history().slice(0, 2), chainGenesis(runId));
    const marker: ChainedEntry = { type: 'LeaseAcquired', epoch: 2, at: 20, workerId: 'w-2' };
    // The new owner reads the journal (with its own marker) and links after it.
    const afterRead = chainHeadOf([...first.entries, marker], chainGenesis(runId));
    const next = linkEntries([{ type: 'TimerFired', epoch: 2, at: 21, seq: 2 }], afterRead);
    const journal = [...first.entries, marker, ...next.entries];
    expect(verifyChain(journal, { runId })).toBe(next.head);
    const withoutMarker = journal.filter((e) => e.type !== 'LeaseAcquired');
    expect(chainError(withoutMarker).entry).toBe('journal entry #2 (TimerFired of step #2)');
  });

  it('verifies the effective entries: a zombie write is filtered out first, and would fail if not', () => {
    const ownerA = linkEntries(history().slice(0, 2), chainGenesis(runId));
    const marker: ChainedEntry = { type: 'LeaseAcquired', epoch: 2, at: 20, workerId: 'w-2' };
    // The fenced owner A appends after B's marker, linked to what A had seen.
    const zombie = linkEntries([{ type: 'TimerFired', epoch: 1, at: 22, seq: 9 }], ownerA.head).entries;
    const ownerB = linkEntries(
      [{ type: 'TimerScheduled', epoch: 2, at: 23, seq: 2, wakeAt: 5 }],
      chainHeadOf([...ownerA.entries, marker], chainGenesis(runId)),
    );
    const journal = [...ownerA.entries, marker, ...zombie, ...ownerB.entries].map((entry, i) => ({
      position: i + 1,
      entry,
    }));
    expect(verifyChain(filterFencedEntries(journal), { runId })).toBe(ownerB.head);
    expect(chainError(journal).entry).toBe('journal entry #3 (TimerFired of step #9, journal position 4)');
  });

  it('refuses entries without a link unless told they predate the chain', () => {
    const unlinked = history();
    expect(chainError(unlinked).message).toMatch(
      /it carries no link to the entries before it \(no prev field\).*BATON_ALLOW_PLAINTEXT=true/,
    );
    const head = verifyChain(unlinked, { runId, allowUnlinked: true });
    expect(head).toBe(chainHeadOf(unlinked, chainGenesis(runId)));
    // Links written after the migration cover the unlinked entries before them.
    const more = linkEntries([{ type: 'TimerFired', epoch: 1, at: 30, seq: 3 }], head);
    expect(verifyChain([...unlinked, ...more.entries], { runId, allowUnlinked: true })).toBe(more.head);
    expect(chainError([...unlinked.slice(1), ...more.entries], { allowUnlinked: true }).entry).toBe(
      'journal entry #4 (TimerFired of step #3)',
    );
  });
});
