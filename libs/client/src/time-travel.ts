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
import { ConfigError, NotFoundError } from '@baton/core';
import type { Checkpoint, Store, Transport } from '@baton/core/adapter';
import {
  chainGenesis,
  checkpointSchemaFor,
  linkEntries,
  protectCheckpoint,
  protectionActive,
  readRunHistory,
  type JournalEntry,
  type PayloadProtection,
  type ProtectedCheckpoint,
} from '@baton/core/runtime';

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
  /** The seq of the checkpoint the history was read from, if any. */
  checkpointSeq: number | undefined;
  /** The highest seq the run's checkpoints have (readable or not, this one included), 0 for none. */
  lastSeq: number;
}

/** Before a signed checkpoint is opened: a client lacking the run's signing key gets a named error. */
function requireSigningKey(runId: string, protection: PayloadProtection) {
  return (stored: ProtectedCheckpoint): void => {
    if (stored.signature !== undefined && protection.signing === undefined) {
      throw new ConfigError(
        `run ${runId}: checkpoint ${stored.seq} is signed (key ${stored.signature.keyId}), and a checkpoint written ` +
          "from it must be signed for the workers to accept it: create the Client with the workers' payloadProtection",
      );
    }
  };
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
 * `point` 'end', everything the run journaled. Read by `readRunHistory`, the reader the workers
 * resume with; an unreadable checkpoint is stood in for by an older one that reads, unless the
 * point is that checkpoint. NotFoundError names a seq or position the run does not have.
 */
export async function readHistoryAt(
  store: Store,
  transport: Transport,
  runId: string,
  point: ForkPoint | 'end',
  protection: PayloadProtection,
): Promise<HistoryAt> {
  const history = await readRunHistory({
    store,
    journal: transport.journal,
    runId,
    at:
      point === 'end'
        ? 'end'
        : point.fromCheckpoint !== undefined
          ? { checkpoint: point.fromCheckpoint }
          : { journalPosition: point.fromJournalPosition! },
    protection,
    beforeOpen: requireSigningKey(runId, protection),
    checkTail: async (records, from) => {
      const upto = point === 'end' ? undefined : (point.fromJournalPosition ?? undefined);
      if (upto === undefined || upto === from || records.at(-1)?.position === upto) return;
      const all = await transport.journal.read(runId, 0);
      const range =
        all.length === 0
          ? 'its journal is empty'
          : `its records run from ${all[0]!.position} to ${all.at(-1)!.position}`;
      throw new NotFoundError(`run ${runId} has no journal record at position ${upto} (${range})`);
    },
  });
  return {
    entries: withoutLinks(history.entries),
    journalPosition: history.journalPosition,
    checkpointSeq: history.checkpoint?.seq,
    lastSeq: history.lastSeq,
  };
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
