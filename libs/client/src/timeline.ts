/**
 * A run's timeline: its journal and checkpoints turned into items a person (or the console) reads
 * in order: one per activity (attempts, start, end, duration, outcome, idempotency key, the worker
 * and epoch that ran it), per signal wait, per timer, per update (accepted, then answered), per
 * durable promise (made, then completed or timed out), per change of the run's search attributes,
 * per checkpoint, per lease (who took the run at which epoch, and whether that was a takeover from
 * an owner that stopped mid-run), and the run's end. Data, not text: the CLI prints it, the console
 * draws it.
 *
 * Invariants:
 * 1. A durable promise's token is a secret (docs/promises.md): no item holds it, only its first
 *    characters (`bp_Ab3…`, as the HTTP API's request log cuts it), enough to tell it in
 *    `baton promises list`. The raw journal (`client.history`) still holds it, for operators.
 * 2. An update's arguments and result, and a promise's value, are summaries: one line of JSON cut
 *    to {@link SUMMARY_MAX} characters, a value sealed for a key this client lacks shown as
 *    `protected (key k1)`, never as bytes.
 *
 * Zombie writes (entries below the fence of a later `LeaseAcquired`, which replay drops) are not
 * steps of the run; they are listed as `fenced-write` items so they stay visible.
 */
import type { AttributeChanges, CheckpointSummary } from '@baton/core/adapter';
import {
  filterFencedEntries,
  idempotencyKeyOf,
  isSealedValue,
  protectedLabel,
  type JournalEntry,
  type PayloadRef,
  type PositionedEntry,
} from '@baton/core/runtime';

/** Who ran a step: the epoch of the entry that ended it, and the worker holding that epoch. */
export interface TimelineOwner {
  epoch: number;
  /** The worker whose `LeaseAcquired` opened the epoch; null when the journal does not show it. */
  workerId: string | null;
}

/** What every timeline item has. */
export interface TimelineItemBase {
  /** Journal position of the item's first entry (a checkpoint: the position it covers). */
  position: number;
  /** Time of the item's first event (ms since epoch, the writer's store-clock estimate). */
  at: number;
}

export interface ActivityItem extends TimelineItemBase, TimelineOwner {
  kind: 'activity';
  seq: number;
  name: string;
  /** The key the activity received as `io.idempotencyKey` (the same on every attempt and worker). */
  idempotencyKey: string;
  /** Attempts the recorded outcome took; undefined while no outcome is journaled. */
  attempts: number | undefined;
  /**
   * When it started: journaled (`ActivityStarted`, written before a non-idempotent activity) or,
   * for the others, estimated as the time of the run's previous entry in the same epoch.
   */
  startedAt: number;
  startKnown: 'journaled' | 'estimated';
  /** When its outcome was journaled; undefined while in flight. */
  endedAt: number | undefined;
  /** `endedAt - startedAt`; undefined while in flight. */
  durationMs: number | undefined;
  /**
   * `completed` or `failed`; `in-flight` when it started and no outcome is journaled yet (a later
   * epoch re-runs or reconciles it).
   */
  outcome: 'completed' | 'failed' | 'in-flight';
  /** The error of a failed outcome. */
  error?: { name: string; message: string };
  /** The result came from the activity's `reconcile` hook. */
  reconciled?: boolean;
  /** A resume found the result too old (`maxAgeMs`) and ran the step again. */
  refreshed?: boolean;
}

export interface SignalItem extends TimelineItemBase, TimelineOwner {
  kind: 'signal';
  seq: number;
  name: string;
  /** The wait's deadline, or null for none; undefined when the wait was not journaled. */
  timeoutAt: number | null | undefined;
  outcome: 'received' | 'timed-out' | 'waiting';
  /** When the signal was consumed or the wait timed out. */
  endedAt: number | undefined;
  /** The inbox id of the consumed signal. */
  signalId?: string;
}

export interface TimerItem extends TimelineItemBase, TimelineOwner {
  kind: 'timer';
  seq: number;
  wakeAt: number;
  outcome: 'fired' | 'pending';
  firedAt: number | undefined;
}

/**
 * An update (`client.update` → `ctx.onUpdate`): accepted (journaled once its schema and validators
 * passed; a rejected update is never journaled), then answered. `accepted` while its handler has
 * not settled: the caller is still waiting, or will find the answer kept under its update id.
 */
export interface UpdateItem extends TimelineItemBase, TimelineOwner {
  kind: 'update';
  updateId: string;
  name: string;
  /** The arguments the handler received, summarised (invariant 2); undefined when not journaled. */
  args: string | undefined;
  outcome: 'accepted' | 'completed' | 'failed';
  /** When the answer was journaled. */
  endedAt: number | undefined;
  /** The handler's result, summarised (invariant 2). */
  result?: string;
  /** What the handler threw. */
  error?: { name: string; message: string };
}

/**
 * A durable promise (`ctx.promise`): made at step `seq`, then resolved or rejected from outside by
 * its token, or timed out. `pending` while none of these is journaled.
 */
export interface PromiseItem extends TimelineItemBase, TimelineOwner {
  kind: 'promise';
  seq: number;
  /** The token's first characters and `…` (invariant 1); `baton promises list` shows it whole. */
  tokenHint: string;
  /** The deadline, or null for none; undefined when the promise's creation is not in the journal. */
  timeoutAt: number | null | undefined;
  outcome: 'pending' | 'resolved' | 'rejected' | 'timed-out';
  /** When the completion or the timeout was journaled. */
  endedAt: number | undefined;
  /** The value it was resolved with, summarised (invariant 2). */
  value?: string;
  /** Why it was rejected. */
  error?: { name: string; message: string; code?: string };
}

/** `ctx.setAttributes`: the run's search attributes changed (a value, or null where one was removed). */
export interface AttributesItem extends TimelineItemBase, TimelineOwner {
  kind: 'attributes';
  seq: number;
  attributes: AttributeChanges;
}

export interface CheckpointItem extends TimelineItemBase {
  kind: 'checkpoint';
  seq: number;
  epoch: number;
  status: string;
  sizeBytes: number;
}

/**
 * A new owner took the run's lease. `first` for the first claim; `after-wait` after the run
 * suspended on a timer or signal; `after-retry` after it had failed (client.timeTravel.retry); `takeover`
 * when the previous owner stopped mid-run (a crash, a lost lease or a hand-off): a failover.
 */
export interface LeaseItem extends TimelineItemBase {
  kind: 'lease';
  epoch: number;
  /** Null when the journal has no LeaseAcquired for the epoch (see `unmarked`). */
  workerId: string | null;
  /**
   * True when the epoch shows only in its entries: the first owner of a new run writes no marker
   * on a bus with optimistic append (NATS), so the journal does not name its worker.
   */
  unmarked?: true;
  previous: TimelineOwner | undefined;
  reason: 'first' | 'after-wait' | 'after-retry' | 'takeover';
}

export interface EndItem extends TimelineItemBase, TimelineOwner {
  kind: 'end';
  outcome: 'completed' | 'failed' | 'cancelled';
  /** The failure, or the cancel reason as `{ name: 'Cancelled', message }`. */
  error?: { name: string; message: string };
}

/** An entry a fenced-off owner wrote after a newer owner took the run: replay ignores it. */
export interface FencedWriteItem extends TimelineItemBase, TimelineOwner {
  kind: 'fenced-write';
  entryType: JournalEntry['type'];
  seq?: number;
}

export type TimelineItem =
  | ActivityItem
  | SignalItem
  | TimerItem
  | UpdateItem
  | PromiseItem
  | AttributesItem
  | CheckpointItem
  | LeaseItem
  | EndItem
  | FencedWriteItem;

export interface RunTimeline {
  runId: string;
  /** In journal order; a checkpoint after the entries it covers. */
  items: TimelineItem[];
  /** Every lease epoch the journal shows, with its worker (null when unmarked), oldest first. */
  epochs: TimelineOwner[];
  /** How many lease items are takeovers. */
  failovers: number;
}

/** Entry types after which a run gives up its lease without anything in flight. */
const WAITS = new Set<JournalEntry['type']>(['TimerScheduled', 'SignalWaitStarted']);

/** The longest summary of a value an item holds (invariant 2). */
export const SUMMARY_MAX = 120;

/**
 * A value as one line of JSON of at most `max` characters (cut with `…`), each value inside it
 * sealed for a key this client lacks as `protected (key k1)`; a value stored by reference that could
 * not be read back (its run deleted) as `stored by reference (n bytes)`.
 */
export function valueSummary(value: unknown, ref?: PayloadRef, max = SUMMARY_MAX): string {
  if (value === undefined && ref !== undefined) return `stored by reference (${ref.size} bytes)`;
  if (isSealedValue(value)) return protectedLabel(value);
  let text: string;
  try {
    text =
      JSON.stringify(value, (_key, inner: unknown) =>
        isSealedValue(inner) ? protectedLabel(inner) : inner,
      ) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A token as items show it (invariant 1): its first six characters (`bp_` and three) and `…`. */
export function tokenHint(token: string): string {
  return `${token.slice(0, 6)}…`;
}

/**
 * Builds the timeline of `runId` from its journal as `client.history` returns it and its
 * checkpoints as `client.timeTravel.checkpoints` does. Pure: the same input gives the same timeline.
 */
export function buildTimeline(
  runId: string,
  history: readonly PositionedEntry[],
  checkpoints: readonly CheckpointSummary[] = [],
): RunTimeline {
  const kept = new Set(filterFencedEntries(history));
  // A worker checkpoints a run as `suspended` just before it gives the run up to wait.
  const suspensions = checkpoints.filter((c) => c.status === 'suspended');
  const workers = new Map<number, string>();
  for (const { entry } of history)
    if (entry.type === 'LeaseAcquired') workers.set(entry.epoch, entry.workerId);
  const owner = (epoch: number): TimelineOwner => ({ epoch, workerId: workers.get(epoch) ?? null });

  const items: TimelineItem[] = [];
  const activities = new Map<number, ActivityItem>();
  const signals = new Map<number, SignalItem>();
  /** Opens a signal wait's item (the wait's start, or its end when the start is not in `history`). */
  const signalWait = (
    position: number,
    entry: { at: number; epoch: number; seq: number; name: string },
    timeoutAt: number | null | undefined,
  ): SignalItem => {
    const item: SignalItem = {
      kind: 'signal',
      position,
      at: entry.at,
      ...owner(entry.epoch),
      seq: entry.seq,
      name: entry.name,
      timeoutAt,
      outcome: 'waiting',
      endedAt: undefined,
    };
    signals.set(entry.seq, item);
    items.push(item);
    return item;
  };
  const timers = new Map<number, TimerItem>();
  const updates = new Map<string, UpdateItem>();
  const promises = new Map<number, PromiseItem>();
  /** Opens a promise's item (its creation, or its end when the creation is not in `history`). */
  const promiseItem = (
    position: number,
    entry: { at: number; epoch: number; seq: number },
    token: string | undefined,
    timeoutAt: number | null | undefined,
  ): PromiseItem => {
    const item: PromiseItem = {
      kind: 'promise',
      position,
      at: entry.at,
      ...owner(entry.epoch),
      seq: entry.seq,
      tokenHint: token === undefined ? '-' : tokenHint(token),
      timeoutAt,
      outcome: 'pending',
      endedAt: undefined,
    };
    promises.set(entry.seq, item);
    items.push(item);
    return item;
  };
  /** Whether the run waits on something (a timer, a signal, a promise) that has not ended yet. */
  const waiting = (): boolean =>
    [...signals.values()].some((i) => i.outcome === 'waiting') ||
    [...timers.values()].some((i) => i.outcome === 'pending') ||
    [...promises.values()].some((i) => i.outcome === 'pending');
  let previous: PositionedEntry | undefined;
  let previousOwner: TimelineOwner | undefined;
  let failovers = 0;
  /** Every epoch the kept entries show, with its worker when a LeaseAcquired names it. */
  const epochs = new Map<number, string | null>();
  const lease = ({ position, entry }: PositionedEntry, workerId: string | null): void => {
    const reason = leaseReason(previousOwner, previous, waiting(), suspensions);
    if (reason === 'takeover') failovers++;
    items.push({
      kind: 'lease',
      position,
      at: entry.at,
      epoch: entry.epoch,
      workerId,
      previous: previousOwner,
      reason,
      ...(workerId === null && { unmarked: true }),
    });
    epochs.set(entry.epoch, workerId);
    previousOwner = { epoch: entry.epoch, workerId };
  };

  for (const positioned of history) {
    const { position, entry } = positioned;
    if (!kept.has(positioned)) {
      items.push({
        kind: 'fenced-write',
        position,
        at: entry.at,
        ...owner(entry.epoch),
        entryType: entry.type,
        ...('seq' in entry && { seq: entry.seq }),
      });
      continue;
    }
    // The first owner of a new run writes no LeaseAcquired where the bus appends optimistically
    // (NATS): its epoch shows with its first entry, its worker unknown to the journal.
    if (entry.type !== 'LeaseAcquired' && !epochs.has(entry.epoch)) lease(positioned, null);
    switch (entry.type) {
      case 'LeaseAcquired':
        if (!epochs.has(entry.epoch)) lease(positioned, entry.workerId);
        break;
      case 'ActivityStarted': {
        const item = activityItem(runId, positioned, previous, 'journaled', owner(entry.epoch));
        activities.set(entry.seq, item);
        items.push(item);
        break;
      }
      case 'ActivityCompleted':
      case 'ActivityFailed': {
        let item = activities.get(entry.seq);
        if (item === undefined || item.outcome !== 'in-flight') {
          const refresh = item !== undefined && entry.refreshed === true;
          item = activityItem(runId, positioned, previous, 'estimated', owner(entry.epoch));
          if (refresh) item.refreshed = true;
          activities.set(entry.seq, item);
          items.push(item);
        }
        item.attempts = entry.attempts;
        item.endedAt = entry.at;
        item.durationMs = Math.max(0, entry.at - item.startedAt);
        item.epoch = entry.epoch;
        item.workerId = owner(entry.epoch).workerId;
        if (entry.type === 'ActivityCompleted') {
          item.outcome = 'completed';
          if (entry.reconciled === true) item.reconciled = true;
        } else {
          item.outcome = 'failed';
          item.error = { name: entry.error.name, message: entry.error.message };
        }
        if (entry.refreshed === true) item.refreshed = true;
        break;
      }
      case 'SignalWaitStarted':
        signalWait(position, entry, entry.timeoutAt);
        break;
      case 'SignalReceived':
      case 'SignalTimedOut': {
        const item = signals.get(entry.seq) ?? signalWait(position, entry, undefined);
        item.endedAt = entry.at;
        item.epoch = entry.epoch;
        item.workerId = owner(entry.epoch).workerId;
        if (entry.type === 'SignalReceived') {
          item.outcome = 'received';
          item.signalId = entry.signalId;
        } else item.outcome = 'timed-out';
        break;
      }
      case 'TimerScheduled': {
        const item: TimerItem = {
          kind: 'timer',
          position,
          at: entry.at,
          ...owner(entry.epoch),
          seq: entry.seq,
          wakeAt: entry.wakeAt,
          outcome: 'pending',
          firedAt: undefined,
        };
        timers.set(entry.seq, item);
        items.push(item);
        break;
      }
      case 'TimerFired': {
        const item = timers.get(entry.seq);
        if (item !== undefined) {
          item.outcome = 'fired';
          item.firedAt = entry.at;
        }
        break;
      }
      case 'RunCompleted':
      case 'RunFailed':
      case 'RunCancelled':
        items.push({
          kind: 'end',
          position,
          at: entry.at,
          ...owner(entry.epoch),
          outcome:
            entry.type === 'RunCompleted' ? 'completed' : entry.type === 'RunFailed' ? 'failed' : 'cancelled',
          ...(entry.type === 'RunFailed' && {
            error: { name: entry.error.name, message: entry.error.message },
          }),
          ...(entry.type === 'RunCancelled' && { error: { name: 'Cancelled', message: entry.reason } }),
        });
        break;
      case 'UpdateAccepted': {
        const item: UpdateItem = {
          kind: 'update',
          position,
          at: entry.at,
          ...owner(entry.epoch),
          updateId: entry.updateId,
          name: entry.name,
          args: valueSummary(entry.args, entry.argsRef),
          outcome: 'accepted',
          endedAt: undefined,
        };
        updates.set(entry.updateId, item);
        items.push(item);
        break;
      }
      case 'UpdateCompleted': {
        let item = updates.get(entry.updateId);
        if (item === undefined) {
          item = {
            kind: 'update',
            position,
            at: entry.at,
            ...owner(entry.epoch),
            updateId: entry.updateId,
            name: entry.name,
            args: undefined,
            outcome: 'accepted',
            endedAt: undefined,
          };
          updates.set(entry.updateId, item);
          items.push(item);
        }
        item.endedAt = entry.at;
        item.epoch = entry.epoch;
        item.workerId = owner(entry.epoch).workerId;
        if (entry.error !== undefined) {
          item.outcome = 'failed';
          item.error = { name: entry.error.name, message: entry.error.message };
        } else {
          item.outcome = 'completed';
          item.result = valueSummary(entry.result, entry.resultRef);
        }
        break;
      }
      case 'PromiseCreated':
        promiseItem(position, entry, entry.token, entry.timeoutAt);
        break;
      case 'PromiseCompleted':
      case 'PromiseTimedOut': {
        const item = promises.get(entry.seq) ?? promiseItem(position, entry, undefined, undefined);
        item.endedAt = entry.at;
        item.epoch = entry.epoch;
        item.workerId = owner(entry.epoch).workerId;
        if (entry.type === 'PromiseTimedOut') item.outcome = 'timed-out';
        else if (entry.outcome === 'resolved') {
          item.outcome = 'resolved';
          item.value = valueSummary(entry.value, entry.valueRef);
        } else {
          item.outcome = 'rejected';
          const error = entry.error ?? { name: 'Error', message: 'rejected' };
          item.error = {
            name: error.name,
            message: error.message,
            ...(error.code !== undefined && { code: error.code }),
          };
        }
        break;
      }
      case 'AttributesSet':
        items.push({
          kind: 'attributes',
          position,
          at: entry.at,
          ...owner(entry.epoch),
          seq: entry.seq,
          attributes: entry.attributes,
        });
        break;
      case 'ValueRecorded':
      case 'PatchMarker':
        break;
    }
    previous = positioned;
  }

  for (const c of checkpoints) {
    items.push({
      kind: 'checkpoint',
      position: c.journalPosition,
      at: c.createdAt,
      seq: c.seq,
      epoch: c.epoch,
      status: c.status,
      sizeBytes: c.size,
    });
  }
  // Journal order; a checkpoint after the entries it covers (a stable sort keeps the rest in order).
  const rank = (item: TimelineItem): number => (item.kind === 'checkpoint' ? 1 : 0);
  items.sort((a, b) => a.position - b.position || rank(a) - rank(b));

  return {
    runId,
    items,
    epochs: [...epochs.keys()]
      .sort((a, b) => a - b)
      .map((epoch) => ({ epoch, workerId: epochs.get(epoch) ?? null })),
    failovers,
  };
}

function activityItem(
  runId: string,
  { position, entry }: PositionedEntry,
  previous: PositionedEntry | undefined,
  startKnown: ActivityItem['startKnown'],
  ranBy: TimelineOwner,
): ActivityItem {
  const step = entry as Extract<
    JournalEntry,
    { type: 'ActivityStarted' | 'ActivityCompleted' | 'ActivityFailed' }
  >;
  // An outcome without a start entry: the step began after the run's previous entry of its epoch.
  const startedAt =
    startKnown === 'journaled' || previous === undefined || previous.entry.epoch !== entry.epoch
      ? entry.at
      : previous.entry.at;
  return {
    kind: 'activity',
    position,
    at: startedAt,
    ...ranBy,
    seq: step.seq,
    name: step.name,
    idempotencyKey: idempotencyKeyOf(runId, step.seq),
    attempts: undefined,
    startedAt,
    startKnown,
    endedAt: undefined,
    durationMs: undefined,
    outcome: 'in-flight',
  };
}

/**
 * Why a new owner took the run. After a wait when the previous owner checkpointed the run as
 * `suspended` with everything up to its last entry (what a worker does before it gives a run up
 * to wait), or, where those checkpoints are gone, when its last entry starts a wait, or answers an
 * update while a wait (`waiting`: a timer, a signal or a promise) is open. A durable promise's
 * creation alone does not say the run waits on it (it often runs a step first: sends the token).
 */
function leaseReason(
  previousOwner: TimelineOwner | undefined,
  last: PositionedEntry | undefined,
  waiting: boolean,
  suspensions: readonly CheckpointSummary[],
): LeaseItem['reason'] {
  if (previousOwner === undefined) return 'first';
  if (last === undefined) return 'takeover';
  if (last.entry.type === 'RunFailed') return 'after-retry';
  if (WAITS.has(last.entry.type)) return 'after-wait';
  const suspended = suspensions.some(
    (c) => c.epoch === previousOwner.epoch && c.journalPosition >= last.position,
  );
  if (suspended) return 'after-wait';
  if (last.entry.type === 'UpdateCompleted' && waiting) return 'after-wait';
  return 'takeover';
}
