/**
 * What a run that continues as new hands its successor (docs/continue-as-new.md, "What is carried
 * over"): the signals it never took and the update requests it never accepted. Called by the
 * session's finish after the run's end is journaled and before the successor's start is sent.
 *
 * Invariants:
 * 1. The mark comes first (`runs.continueAs`, fenced by the session's epoch): from then on the store
 *    keeps nothing new for the run and answers with the successor, so the inbox and the pending
 *    requests read after it are all there is to carry.
 * 2. Carried: the signals of the workflow's own names whose ids the run's journal does not show
 *    taken (SignalReceived), and the update requests it did not accept. Not carried: Baton's own
 *    signals (a durable promise's completion, a child's end: steps of this run, `carriesOver`).
 *    An update this run accepted is answered before the run ends (docs/updates.md); one found
 *    pending anyway is answered here, failed with code BATON_CONTINUED_AS_NEW, never run twice.
 * 3. A sealed value is bound to its run (docs/integrity.md): each carried payload or argument is
 *    opened for the run and sealed again for the successor.
 * 4. The successor's record is created (`runs.create`, idempotent by run id and key, with the input
 *    its start message carries) before anything is carried to it, so nothing waits for the start
 *    message; only a run with something to carry does it, the others keep the fast first claim.
 * 5. Each item keeps its id (signal id, update id), so the end replayed after a crash carries
 *    nothing twice. A successor that answers with a successor of its own has run and continued
 *    already, so an earlier attempt carried everything to it before its start was sent: the carry
 *    stops there and follows no further (that successor carried on what it did not take).
 */
import type { RunRecord, Store } from '@baton/core/adapter';
import {
  carriesOver,
  CONTINUED_AS,
  openValue,
  sealUpdateOutcome,
  sealValue,
  type ContinuedAsNew,
  type JournalEntry,
  type PayloadProtection,
} from '@baton/core/runtime';
import type { ResolvedWorkerOptions } from '../options.js';
import { enqueueWake } from './run-messages.js';
import { successorKey } from './run-links.js';

type CarryOptions = Pick<
  ResolvedWorkerOptions,
  'store' | 'transport' | 'logger' | 'payloadProtection' | 'faults'
>;

/** The error an update gets that this run accepted and never answered (invariant 2). */
export const CONTINUED_AS_NEW_CODE = 'BATON_CONTINUED_AS_NEW';

/** `value`, sealed for `from`, sealed again for `to` (invariant 3); a value not sealed is sealed as a new one would be. */
export function resealFor(
  value: unknown,
  from: string,
  to: string,
  purpose: 'signal payload' | 'update args',
  protection: PayloadProtection,
): unknown {
  return sealValue(openValue(value, from, purpose, protection), to, purpose, protection);
}

/** Carries what `run` never took to the successor its end names (see the module's invariants). */
export async function carryToSuccessor(
  options: CarryOptions,
  run: RunRecord,
  epoch: number,
  entries: readonly JournalEntry[],
  result: ContinuedAsNew,
): Promise<void> {
  const { store, payloadProtection: protection } = options;
  const next = result[CONTINUED_AS];
  await store.runs.continueAs(run.runId, epoch, next.runId);
  await options.faults?.('continue-marked', { runId: run.runId, epoch });
  const [inbox, pending] = await Promise.all([
    store.signals.read(run.runId),
    store.updates.pending(run.runId),
  ]);
  const taken = new Set<string>();
  const accepted = new Set<string>();
  for (const entry of entries) {
    if (entry.type === 'SignalReceived') taken.add(entry.signalId);
    else if (entry.type === 'UpdateAccepted') accepted.add(entry.updateId);
  }
  const signals = inbox.filter((signal) => carriesOver(signal.name) && !taken.has(signal.signalId));
  const updates = pending.filter((request) => !accepted.has(request.updateId));
  await answerStranded(
    options,
    run.runId,
    epoch,
    next.runId,
    pending.filter((r) => accepted.has(r.updateId)),
  );
  if (signals.length === 0 && updates.length === 0) return;

  await store.runs.create({
    runId: next.runId,
    workflow: next.workflow,
    version: next.version,
    input: sealValue(next.input, next.runId, 'run input', protection),
    idempotencyKey: successorKey(run),
    traceparent: run.traceparent ?? null,
  });
  let carriedSignals = 0;
  for (const signal of signals) {
    const answer = await store.signals.deliver(next.runId, {
      signalId: signal.signalId,
      name: signal.name,
      payload: resealFor(signal.payload, run.runId, next.runId, 'signal payload', protection),
    });
    if (answer.continuedAs !== undefined) return alreadyCarried(options, run.runId, next.runId);
    if (answer.wake) await enqueueWake(options.transport.runQueue, next.runId, 'signal');
    carriedSignals++;
  }
  for (const request of updates) {
    const answer = await store.updates.request(next.runId, {
      updateId: request.updateId,
      name: request.name,
      args: resealFor(request.args, run.runId, next.runId, 'update args', protection),
    });
    if (answer.continuedAs !== undefined) return alreadyCarried(options, run.runId, next.runId);
    if (answer.wake) await enqueueWake(options.transport.runQueue, next.runId, 'update');
  }
  options.logger.info(
    { runId: run.runId, successor: next.runId, signals: carriedSignals, updates: updates.length },
    'carried what the run had not taken to its successor',
  );
}

/** Invariant 5: the successor has continued itself, so an earlier attempt carried everything to it. */
function alreadyCarried(options: CarryOptions, runId: string, successor: string): void {
  options.logger.debug(
    { runId, successor },
    'the successor has continued as new already; what this run had not taken reached it before',
  );
}

/** Invariant 2: an update this run accepted and never answered fails, naming the continuation. */
async function answerStranded(
  options: CarryOptions,
  runId: string,
  epoch: number,
  successor: string,
  stranded: ReadonlyArray<{ updateId: string; name: string }>,
): Promise<void> {
  for (const request of stranded) {
    const error = {
      name: 'ContinuedAsNewError',
      code: CONTINUED_AS_NEW_CODE,
      message:
        `run ${runId} continued as new (as run ${successor}) before it answered update '${request.name}' ` +
        `(id ${request.updateId}); send it again to run ${successor}`,
    };
    await options.store.updates.settle(runId, epoch, {
      updateId: request.updateId,
      name: request.name,
      outcome: sealUpdateOutcome({ status: 'failed', error }, runId, options.payloadProtection),
    });
    options.logger.warn({ runId, successor, updateId: request.updateId }, error.message);
  }
}

/** What {@link deliverAlongChain} found. */
export type ChainDelivery =
  /** Delivered (or a repeat) at `runId`, the run the message was sent to or one of its successors. */
  | { kind: 'delivered'; runId: string; wake: boolean; hops: number }
  /** `runId` has finished (and did not continue, or the signal is Baton's own): nothing kept. */
  | { kind: 'dropped'; runId: string }
  /** The store does not know `runId` (the addressed run, or a successor not created yet). */
  | { kind: 'unknown'; runId: string; hops: number }
  /** `runId` is carrying its inbox over to `successor`: deliver again shortly. */
  | { kind: 'handing-over'; runId: string; successor: string }
  /** The chain from the addressed run is longer than `maxHops` continuations. */
  | { kind: 'too-long'; runId: string; hops: number };

/**
 * Delivers a signal to `runId` or, when that run has continued as new, along its chain to the first
 * run that keeps it (invariant 4 of core's continue-as-new.ts). `payload` is as the store keeps it
 * for `runId` (sealed for it when values are sealed); it is sealed again for each successor. A
 * run of the chain whose inbox already holds the signal id answers as a repeat, so a message
 * delivered twice lands once. Each step waits until the run before has recorded its end: until
 * then it is still carrying what it held, and a signal that went on earlier could overtake those.
 */
export async function deliverAlongChain(
  store: Store,
  protection: PayloadProtection,
  signal: { runId: string; signalId: string; name: string; payload: unknown },
  maxHops: number,
): Promise<ChainDelivery> {
  let runId = signal.runId;
  let payload = signal.payload;
  for (let hops = 0; ; hops++) {
    const answer = await store.signals.deliver(runId, {
      signalId: signal.signalId,
      name: signal.name,
      payload,
    });
    if (!answer.found) return { kind: 'unknown', runId, hops };
    const successor = answer.continuedAs;
    if (successor === undefined || !carriesOver(signal.name)) {
      if (answer.dropped === true || successor !== undefined) return { kind: 'dropped', runId };
      return { kind: 'delivered', runId, wake: answer.wake, hops };
    }
    if (answer.dropped !== true) return { kind: 'handing-over', runId, successor };
    if (hops + 1 > maxHops) return { kind: 'too-long', runId: signal.runId, hops: hops + 1 };
    payload = resealFor(payload, runId, successor, 'signal payload', protection);
    runId = successor;
  }
}
