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
 *
 * `client.timeTravel` ({@link TimeTravelApi}) is what an operator calls: a run's kept checkpoints,
 * a fork, a retry (docs/time-travel.md).
 */
import { CHILD_START_DEAD_LETTERED, ConfigError, NotFoundError, RunStateError } from '@baton/core';
import {
  assertRunId,
  type Checkpoint,
  type CheckpointSummary,
  type Store,
  type Transport,
} from '@baton/core/adapter';
import {
  chainGenesis,
  checkpointSchemaFor,
  linkEntries,
  newRunId,
  openValue,
  protectCheckpoint,
  protectionActive,
  readRunHistory,
  resumeMessage,
  sealValue,
  sendRunMessage,
  startMessage,
  type ClaimCheck,
  type JournalEntry,
  type PayloadProtection,
  type ProtectedCheckpoint,
} from '@baton/core/runtime';
import type { FleetProtectionCheck } from './fleet-protection.js';
import type { Outbox } from './outbox.js';
import type { ForkOptions, ForkPoint, RunHandle } from './run-handle.js';
import { requireRun } from './run-lookup.js';

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
    store: store.checkpoints,
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

/** A run's past, as an operator reads it and starts again from it (`client.timeTravel`). */
export class TimeTravelApi {
  constructor(
    private readonly store: (method: string) => Store,
    private readonly transport: Transport,
    private readonly connect: () => Promise<void>,
    private readonly protection: PayloadProtection,
    private readonly claimCheck: ClaimCheck | undefined,
    private readonly outbox: Outbox,
    /** Refuses a fork the live workers could not read (fleet-protection.ts). */
    private readonly fleetProtection: FleetProtectionCheck,
    /** A handle on a run this sub-client started, from the client that owns it. */
    private readonly handle: <O>(runId: string) => RunHandle<O>,
  ) {}

  /**
   * Every kept checkpoint of the run, oldest first: seq, epoch, journal position, status, schema
   * version, time and encoded size. NotFoundError when the store does not know the run.
   */
  async checkpoints(runId: string): Promise<CheckpointSummary[]> {
    const store = this.store('timeTravel.checkpoints');
    await this.connect();
    await requireRun(store, this.transport, runId, 'timeTravel.checkpoints');
    return store.checkpoints.list(runId);
  }

  /**
   * Starts a new run of the same workflow version and input whose history is this run's up to a
   * kept checkpoint or a journal position: the steps before that point replay from it and are not
   * executed again, the steps after it execute. The original run is only read. The new run's
   * first checkpoint (seq 1, epoch 0) holds the prefix (docs/time-travel.md).
   */
  async fork<O = unknown>(runId: string, options: ForkOptions): Promise<RunHandle<O>> {
    const store = this.store('timeTravel.fork');
    const { fromCheckpoint, fromJournalPosition } = options ?? {};
    const method = `client.timeTravel.fork(${runId})`;
    if ((fromCheckpoint === undefined) === (fromJournalPosition === undefined)) {
      throw new ConfigError(
        `${method} needs exactly one of fromCheckpoint (a checkpoint seq, see client.timeTravel.checkpoints) ` +
          'and fromJournalPosition (a journal position, see client.history)',
      );
    }
    const point = fromCheckpoint ?? fromJournalPosition!;
    if (!Number.isSafeInteger(point) || point < 0) {
      const name = fromCheckpoint !== undefined ? 'fromCheckpoint' : 'fromJournalPosition';
      throw new ConfigError(`${method}: ${name} must be a whole number ≥ 0, got ${String(point)}`);
    }
    const newId = options.runId ?? newRunId();
    assertRunId(newId);
    if (newId === runId) throw new ConfigError(`${method}: the fork needs a run id of its own`);
    await this.connect();
    await this.fleetProtection.check(method);
    const original = await requireRun(store, this.transport, runId, 'timeTravel.fork');
    const history = await readHistoryAt(
      store,
      this.transport,
      runId,
      { fromCheckpoint, fromJournalPosition },
      this.protection,
    );
    const prefix = forkEntries(history.entries);
    // The fork keeps the original's references and gets its own copies of the bytes: retention
    // deletes payloads with their run. Copied before the run exists, so no worker misses one.
    await this.claimCheck?.copyPayloads(runId, newId, prefix);
    const checkpoint = sealCheckpoint(
      {
        runId: newId,
        seq: 1,
        // Below the first owner's epoch (1): the seed is never fenced and never confused with its writes.
        epoch: 0,
        // The new run's own journal is empty; its first owner reads all of it.
        journalPosition: 0,
        entries: prefix,
        status: 'running',
      },
      this.protection,
    );
    // The input is sealed for the original run: opened (MissingKeyError naming the key when this
    // client lacks it) and sealed again for the fork.
    const input = openValue(original.input, runId, 'run input', this.protection);
    const { created } = await store.runs.create({
      runId: newId,
      workflow: original.workflow,
      version: original.version,
      input: sealValue(input, newId, 'run input', this.protection),
      idempotencyKey: null,
      checkpoint,
      forkedFrom: {
        runId,
        ...(fromCheckpoint !== undefined
          ? { checkpoint: fromCheckpoint }
          : { journalPosition: fromJournalPosition }),
      },
    });
    if (!created) throw new ConfigError(`${method}: run ${newId} already exists; pick another runId`);
    // The record exists, so the worker that takes this message finds it (not fresh) and replays the seed.
    await sendRunMessage(
      this.transport.runQueue,
      startMessage({
        runId: newId,
        workflow: original.workflow,
        version: original.version,
        ...(await this.outbox.inlineOrRef(newId, input, 'input', `input of run ${newId} (fork of ${runId})`)),
      }),
    );
    return this.handle<O>(newId);
  }

  /**
   * Redrives a failed run from its last checkpoint and journal: its outcome and the activity
   * failures it ended on are dropped, so those steps run again; every step that succeeded is
   * replayed, not executed. RunStateError unless the run is `failed`; of concurrent retries one
   * resumes the run and the others get RunStateError (status `pending` or `running`).
   */
  async retry<O = unknown>(runId: string): Promise<RunHandle<O>> {
    const store = this.store('timeTravel.retry');
    await this.connect();
    const run = await requireRun(store, this.transport, runId, 'timeTravel.retry');
    const method = `client.timeTravel.retry(${runId})`;
    const notFailed = (status: string): RunStateError =>
      new RunStateError(
        runId,
        status,
        `${method}: only a failed run can be retried, and this one is ${status}` +
          (status === 'pending' || status === 'running' ? ' (already retried, or still under way)' : ''),
      );
    if (run.status !== 'failed') throw notFailed(run.status);
    if (run.error?.code === CHILD_START_DEAD_LETTERED) {
      // Reopened, it would run with whatever input its record kept (none, for an unreadable
      // start), for a parent that has already taken its failure.
      throw new RunStateError(
        runId,
        run.status,
        `${method}: this child never ran: ${run.error.message}. It has no history to ` +
          'retry and its parent was told it failed; after the fix, start the parent anew for a new child',
      );
    }
    const lease = await store.leases.get(runId);
    const history = await readHistoryAt(store, this.transport, runId, 'end', this.protection);
    const checkpoint = sealCheckpoint(
      {
        runId,
        // Above every seq the run has, even one that no longer reads (the base may be older then).
        seq: Math.max(history.checkpointSeq ?? 0, history.lastSeq) + 1,
        // The finished lease's epoch: runs.reopen accepts it only while the lease is still there.
        epoch: lease?.epoch ?? 0,
        journalPosition: history.journalPosition,
        entries: retryEntries(history.entries),
        status: 'running',
      },
      this.protection,
    );
    const reopened = await store.runs.reopen(runId, checkpoint);
    if (!reopened.reopened) {
      const now = await store.runs.get(runId);
      throw notFailed(now?.status ?? reopened.status ?? 'unknown');
    }
    // Lost, the message is replaced by the reaper's: the reopened lease is in its queue.
    await sendRunMessage(this.transport.runQueue, resumeMessage(runId, 'retry'));
    return this.handle<O>(runId);
  }
}
