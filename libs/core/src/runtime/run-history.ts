/**
 * Reading a run back, the one way every reader does it: the worker resuming a claimed run, and the
 * client reading a history to fork or retry it.
 *
 * checkpoint (history-start.ts) -> journal tail after it -> decode -> fencing filter -> chain
 * verification -> (optionally) large values read back from the payload store.
 *
 * Invariants:
 * 1. Nothing here writes: reading a run leaves it as it was found.
 * 2. Nothing is returned that did not verify: a tampered, truncated or undecryptable checkpoint or
 *    record raises CheckpointIntegrityError (a key the reader lacks MissingKeyError, a schema
 *    newer than it knows CheckpointSchemaError) before any entry reaches the caller.
 * 3. Entries a stale owner wrote after a newer owner's fence marker are dropped
 *    ({@link filterFencedEntries}), so a replay never sees a zombie's writes.
 */
import type { Checkpoint } from '../adapter/contracts/checkpoints.js';
import type { JournalLog, JournalRecord } from '../adapter/contracts/transport.js';
import { filterFencedEntries, type JournalEntry, type PositionedEntry } from '../shared/journal.js';
import type { ClaimCheck } from './payload/claim-check.js';
import type { ProtectedCheckpoint } from './payload/checkpoint-signing.js';
import { verifyJournalTail } from './payload/checkpoint-protection.js';
import { chainGenesis, linkEntries } from './payload/hash-chain.js';
import { decodeJournalRecord } from './payload/journal-records.js';
import type { PayloadProtection } from './payload/payload-config.js';
import { openStoredCheckpoint } from './payload/stored-checkpoint.js';
import { findHistoryStart, type HistoryStart, type HistoryStartOptions } from './history-start.js';

export interface ReadRunHistoryOptions extends HistoryStartOptions {
  /** Where the run's journal is read from. */
  journal: JournalLog;
  /** Decodes the records and opens the checkpoint (decryption, signatures, the hash chain). */
  protection: PayloadProtection;
  /** A start already found (a worker finds it before it fences the run); else it is found here. */
  start?: HistoryStart;
  /** Read the journal up to this position (inclusive). @defaultValue the start's, else its end */
  upto?: number;
  /** The journal records after the start, when the caller already has them: nothing is read. */
  tail?: readonly JournalRecord[];
  /** A check of the caller's own on the stored checkpoint, before it is opened. */
  beforeOpen?: (stored: ProtectedCheckpoint) => void;
  /** A check of the caller's own on the records read, before they are decoded. */
  checkTail?: (records: readonly JournalRecord[], from: number) => void | Promise<void>;
  /** When given, `resolved` holds the entries with their large values read back (verified). */
  claimCheck?: ClaimCheck;
}

/** A run's history, verified, as a replay takes it. */
export interface RunHistory {
  /** The checkpoint it starts from, opened and migrated to the current schema; none for the journal's start. */
  checkpoint: Checkpoint | undefined;
  /**
   * The effective entries: the checkpoint's, then the journal's after it without fenced-off ones.
   * They keep their hash-chain links; after a migration changed the checkpoint's entries they are
   * linked afresh from the run's genesis, so they agree with `head`.
   */
  entries: JournalEntry[];
  /** `entries` with large values read back from the payload store; `entries` itself without a claim check. */
  resolved: JournalEntry[];
  /** The hash chain's head after the last entry; undefined with the chain off. */
  head: string | undefined;
  /** The position the journal was read after (the checkpoint's, 0 without one). */
  from: number;
  /** The last journal position the history covers (the last record read, else `from`). */
  journalPosition: number;
  /** The highest seq among the run's checkpoints, readable or not (0 for none). */
  lastSeq: number;
}

/** Reads `runId`'s history (see the module doc). */
export async function readRunHistory(options: ReadRunHistoryOptions): Promise<RunHistory> {
  const { runId, journal, protection } = options;
  const start = options.start ?? (await findHistoryStart(options));
  const { stored } = start;
  const upto = options.upto ?? start.upto;
  // Verified before anything is replayed: a tampered, truncated or undecryptable checkpoint
  // raises here, and nothing is read from it.
  const opened =
    stored === undefined
      ? undefined
      : openStoredCheckpoint(stored as ProtectedCheckpoint, runId, protection, options.beforeOpen);
  const checkpoint = opened?.checkpoint;
  const from = checkpoint?.journalPosition ?? 0;
  const records = options.tail ?? (upto === from ? [] : await journal.read(runId, from, upto));
  await options.checkTail?.(records, from);
  const positioned: PositionedEntry[] = records.flatMap((record) =>
    decodeJournalRecord(record.data, runId, protection.codec, record.position).map((entry) => ({
      position: record.position,
      entry,
    })),
  );
  start.journalCheck?.(positioned);
  const fenced = filterFencedEntries(positioned, checkpoint?.epoch ?? 0);
  let head = verifyJournalTail(fenced, runId, opened?.verified, protection);
  let entries = [...(checkpoint?.entries ?? []), ...fenced.map((p) => p.entry)];
  // A migration rewrote the checkpoint's entries: link the effective list afresh, so the next
  // checkpoint's entries and chain head agree (the journal before it is covered by it).
  if (head !== undefined && opened?.migrated === true) {
    ({ entries, head } = linkEntries(entries, chainGenesis(runId)));
  }
  // Large values come back from the payload store (verified by hash) for a replay only: `entries`
  // keeps the references, so checkpoints written from it stay small.
  const resolved = options.claimCheck ? await options.claimCheck.resolveEntries(runId, entries) : entries;
  return {
    checkpoint,
    entries,
    resolved,
    head,
    from,
    journalPosition: records.at(-1)?.position ?? from,
    lastSeq: Math.max(checkpoint?.seq ?? 0, start.lastSeq),
  };
}
