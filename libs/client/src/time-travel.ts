/**
 * Time travel for the client: a run's effective history at a point (a kept checkpoint or a journal
 * position), read and verified the way a worker reads it, and re-written as a checkpoint a worker
 * accepts for another run (a fork) or for the same run after its failure (a retry).
 *
 * Invariants:
 * 1. The original run is only read: nothing here writes to its journal or its checkpoints.
 * 2. A history is read as a resume would read it: the checkpoint is verified (signature, seal,
 *    chain) and migrated, the journal after it is fence-filtered and chain-checked; so a fork
 *    never starts from entries a worker would have refused.
 * 3. A checkpoint written here carries the protection the workers expect (chain relinked from the
 *    target run's genesis, entries sealed, signed); a client that cannot produce it refuses.
 */
import {
  chainGenesis,
  checkpointSchemaFor,
  ConfigError,
  decodeJournalRecord,
  filterFencedEntries,
  CheckpointUnreadableError,
  linkEntries,
  NotFoundError,
  openStoredCheckpoint,
  protectCheckpoint,
  protectionActive,
  verifyJournalTail,
  type Checkpoint,
  type CheckpointSummary,
  type JournalEntry,
  type OpenedCheckpoint,
  type PayloadProtection,
  type ProtectedCheckpoint,
  type Store,
  type Transport,
} from '@baton/core';

/** Where a fork starts: exactly one of the two. */
export interface ForkPoint {
  /** A kept checkpoint's `seq` (see `client.checkpoints(runId)`): its entries are the prefix. */
  fromCheckpoint?: number;
  /** A journal record's position (see `client.history(runId)`): every entry up to it is the prefix. */
  fromJournalPosition?: number;
}

/** A run's effective history at a point. */
export interface HistoryAt {
  /** Effective entries up to the point, in journal order, without chain links. */
  entries: JournalEntry[];
  /** Journal position the entries cover. */
  journalPosition: number;
  /** The checkpoint the history was read from, if any. */
  base: CheckpointSummary | undefined;
  /** The highest seq the run's checkpoints have (readable or not), 0 for none. */
  lastSeq: number;
}

/** Opens a stored checkpoint as the worker does; a client lacking the run's signing key gets a named error. */
function openStored(
  stored: ProtectedCheckpoint,
  runId: string,
  protection: PayloadProtection,
): OpenedCheckpoint {
  return openStoredCheckpoint(stored, runId, protection, () => {
    if (stored.signature !== undefined && protection.signing === undefined) {
      throw new ConfigError(
        `run ${runId}: checkpoint ${stored.seq} is signed (key ${stored.signature.keyId}), and a checkpoint written ` +
          "from it must be signed for the workers to accept it: create the Client with the workers' payloadProtection",
      );
    }
  }).checkpoint;
}

function withoutLinks(entries: readonly JournalEntry[]): JournalEntry[] {
  return entries.map((entry) => {
    const { prev: _prev, ...rest } = entry as JournalEntry & { prev?: string };
    return rest as JournalEntry;
  });
}

/**
 * The run's effective history at `point`: a kept checkpoint's entries, or the newest checkpoint at
 * or before a journal position plus the journal records after it up to that position; with
 * `point` 'end', everything the run journaled. NotFoundError names a seq or position the run
 * does not have.
 */
export async function readHistoryAt(
  store: Store,
  transport: Transport,
  runId: string,
  point: ForkPoint | 'end',
  protection: PayloadProtection,
): Promise<HistoryAt> {
  const summaries = await store.listCheckpoints(runId);
  const seqs = (): string =>
    summaries.length === 0 ? 'it has none' : `it has ${summaries.map((s) => s.seq).join(', ')}`;
  let base: CheckpointSummary | undefined;
  let upto: number | undefined;
  if (point !== 'end' && point.fromCheckpoint !== undefined) {
    base = summaries.findLast((s) => s.seq === point.fromCheckpoint);
    if (base === undefined)
      throw new NotFoundError(`run ${runId} has no checkpoint ${point.fromCheckpoint} (${seqs()})`);
    upto = base.journalPosition;
  } else if (point !== 'end') {
    upto = point.fromJournalPosition!;
    base = summaries.findLast((s) => s.journalPosition <= upto!);
  } else {
    base = summaries.at(-1);
  }
  let stored: ProtectedCheckpoint | undefined;
  try {
    stored =
      base === undefined ? undefined : ((await store.loadCheckpoint(runId, base.seq)) as ProtectedCheckpoint);
  } catch (err) {
    // A damaged checkpoint (a disk fault, a hand edit): a point given as a checkpoint seq has no
    // stand-in, but any other point is read from an older checkpoint that reads and the journal
    // after it, as the worker resumes. The journal is the truth; a checkpoint only a shortcut.
    const bySeq = point !== 'end' && point.fromCheckpoint !== undefined;
    if (!(err instanceof CheckpointUnreadableError) || bySeq || base === undefined) throw err;
    ({ base, stored } = await olderReadable(store, runId, summaries, base.seq, err));
  }
  if (base !== undefined && stored === undefined)
    throw new NotFoundError(`run ${runId}: checkpoint ${base.seq} is listed but could not be loaded`);
  const opened = stored === undefined ? undefined : openStored(stored, runId, protection);
  const from = opened?.journalPosition ?? 0;
  const records = upto === from ? [] : await transport.read(runId, from, upto);
  if (upto !== undefined && upto !== from && records.at(-1)?.position !== upto) {
    const all = await transport.read(runId, 0);
    const range =
      all.length === 0
        ? 'its journal is empty'
        : `its records run from ${all[0]!.position} to ${all.at(-1)!.position}`;
    throw new NotFoundError(`run ${runId} has no journal record at position ${upto} (${range})`);
  }
  const positioned = records.flatMap((record) =>
    decodeJournalRecord(record.data, runId, protection.codec, record.position).map((entry) => ({
      position: record.position,
      entry,
    })),
  );
  const fenced = filterFencedEntries(positioned, opened?.epoch ?? 0);
  verifyJournalTail(fenced, runId, opened, protection);
  return {
    entries: withoutLinks([...(opened?.entries ?? []), ...fenced.map((p) => p.entry)]),
    journalPosition: records.at(-1)?.position ?? from,
    base,
    lastSeq: Math.max(0, ...summaries.map((s) => s.seq)),
  };
}

/** The newest checkpoint older than `badSeq` that reads; `unreadable` when there is none. */
async function olderReadable(
  store: Store,
  runId: string,
  summaries: readonly CheckpointSummary[],
  badSeq: number,
  unreadable: CheckpointUnreadableError,
): Promise<{ base: CheckpointSummary; stored: ProtectedCheckpoint }> {
  for (const summary of [...summaries].reverse()) {
    if (summary.seq >= badSeq) continue;
    const stored = await store.loadCheckpoint(runId, summary.seq).catch((err: unknown) => {
      if (err instanceof CheckpointUnreadableError) return undefined;
      throw err;
    });
    if (stored !== undefined) return { base: summary, stored: stored as ProtectedCheckpoint };
  }
  throw unreadable;
}

const TERMINAL = new Set<JournalEntry['type']>(['RunCompleted', 'RunFailed', 'RunCancelled']);

/**
 * A fork's prefix: the original's entries in order, without its lease markers (the new run has
 * its own epochs) and without an outcome (a fork taken at the end replays to its own outcome).
 */
export function forkEntries(entries: readonly JournalEntry[]): JournalEntry[] {
  return entries.filter((e) => e.type !== 'LeaseAcquired' && !TERMINAL.has(e.type));
}

/**
 * A retry's history: the run's entries without its outcome (RunFailed) and without the failures
 * it ended on, so those steps run again. "The failures it ended on" are the ActivityFailed
 * entries after the last entry of any other kind (lease markers apart), with their
 * ActivityStarted; a failure the workflow caught and carried on from is followed by later steps,
 * so it stays, and the replay takes the same path as before.
 */
export function retryEntries(entries: readonly JournalEntry[]): JournalEntry[] {
  const kept = entries.filter((e) => !TERMINAL.has(e.type));
  const failedSeqs = new Set<number>();
  for (let i = kept.length - 1; i >= 0; i--) {
    const entry = kept[i]!;
    if (entry.type === 'LeaseAcquired') continue;
    if (entry.type !== 'ActivityFailed') break;
    failedSeqs.add(entry.seq);
  }
  return kept.filter(
    (e) => !((e.type === 'ActivityFailed' || e.type === 'ActivityStarted') && failedSeqs.has(e.seq)),
  );
}

/**
 * The stored form of a checkpoint of `runId` holding `entries`: chain relinked from the run's
 * genesis when the chain is on, then sealed and signed with `protection`.
 */
export function sealCheckpoint(
  checkpoint: Omit<Checkpoint, 'schemaVersion' | 'createdAt'>,
  protection: PayloadProtection,
): Checkpoint {
  let draft: Checkpoint & { chainHead?: string } = {
    ...checkpoint,
    schemaVersion: checkpointSchemaFor(checkpoint.entries),
    createdAt: Date.now(),
  };
  if (protection.hashChain) {
    const { entries, head } = linkEntries(checkpoint.entries, chainGenesis(checkpoint.runId));
    draft = { ...draft, entries, chainHead: head };
  }
  return protectionActive(protection) ? protectCheckpoint(draft, protection) : draft;
}
