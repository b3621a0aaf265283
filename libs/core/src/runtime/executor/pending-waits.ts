/**
 * The durable waits a workflow has open: timers (ctx.sleep), signal waits (ctx.waitForSignal) and
 * durable promises (ctx.promise). Decides which can complete now and when the run must next wake.
 *
 * Signal schemas (`defineSignal(name, { schema })`):
 * 1. A wait with a schema completes only with an inbox signal whose payload passes it, and
 *    receives (and journals, in SignalReceived) the schema's output. A payload that fails is
 *    skipped: not consumed, nothing journaled, reported once per execution (host.signalRefused).
 * 2. A skip is decided from the payload and the code's schema alone, so a resume decides it again
 *    the same way: no journal entry is needed for replay, and a wait that completed replays its
 *    journaled value without asking the schema again.
 * 3. A skipped signal does not count as pending when the run suspends (it is passed with the
 *    consumed ids), so a refused payload never keeps a run from suspending.
 *
 * Durable promises (author/promise.ts has the invariants):
 * 4. A promise completes with the inbox entry of its step ({@link promiseSignalId}) whose payload
 *    names its token. An entry under the promises' name that matches no open promise that way
 *    (sent by hand, not by the store) is skipped like a refused signal (invariant 3).
 * 5. Past its deadline with no completion in the inbox, a promise is closed in the store first
 *    (`expire`): a completion that came meanwhile is taken instead of the timeout.
 * 6. With a schema, a resolved value completes the wait with the schema's output, and one the
 *    schema refuses rejects it; either way the outcome is journaled (PromiseCompleted), so a
 *    resume never asks the schema again.
 */
import type { InboxSignal } from '../../adapter/contracts/waits.js';
import {
  InvalidInputError,
  PromiseRejectedError,
  PromiseTimeoutError,
  SignalTimeoutError,
} from '../../author/errors.js';
import { PROMISE_SIGNAL, promiseSignalId, type PromiseDelivery } from '../../author/promise.js';
import { formatIssuePath, type StandardSchemaV1 } from '../../author/standard-schema.js';
import { serializeError, type SerializedError } from '../../shared/errors.js';
import type { NewEntry, RefusedSignal } from './execution-host.js';

export type { RefusedSignal } from './execution-host.js';

export type Settle = { resolve(value: unknown): void; reject(error: unknown): void };
export type Wait = Settle &
  (
    | { kind: 'timer'; wakeAt: number }
    | { kind: 'signal'; name: string; timeoutAt: number | null; schema?: StandardSchemaV1 | undefined }
    | { kind: 'promise'; token: string; timeoutAt: number | null; schema?: StandardSchemaV1 | undefined }
  );

type Verdict = { ok: true; value: unknown } | { ok: false };

/** How an open promise ends (invariants 4 to 6), decided before {@link PendingWaits.takeReady}. */
type PromiseEnd =
  | { outcome: 'resolved'; value: unknown }
  | { outcome: 'rejected'; error: SerializedError }
  | { outcome: 'timed-out' };

/** Closes a promise at its deadline (PromiseStore.expire); its completion when one came first. */
export type ExpirePromise = (token: string) => Promise<PromiseDelivery | undefined>;

/** A wait that can complete: journal `entry`, then call `settle`. */
export interface ReadyWait {
  seq: number;
  wait: Wait;
  entry: NewEntry;
  settle(): void;
}

export class PendingWaits {
  private readonly waits = new Map<number, Wait>();
  /** Each schema's verdict on the inbox signals it has checked, by signal id (invariant 1). */
  private readonly verdicts = new Map<StandardSchemaV1, Map<string, Verdict>>();
  /** Signals some schema refused: left out of the pending ones at suspension (invariant 3). */
  private readonly refused = new Set<string>();
  /** How open promises end, by step, once known (checkPromises), until takeReady journals them. */
  private readonly promiseEnds = new Map<number, PromiseEnd>();

  constructor(
    private readonly runId: string,
    /** Signal ids consumed by earlier waits; each inbox signal completes one wait only. */
    readonly consumed: Set<string>,
  ) {}

  /** What suspension must not count as pending: consumed signals and refused ones. */
  get settledSignalIds(): string[] {
    return [...new Set([...this.consumed, ...this.refused])];
  }

  /**
   * Checks, once each, the unconsumed inbox signals an open wait with a schema could take; calls
   * `onRefused` for each payload a schema refuses. Before {@link takeReady}: a Standard Schema
   * may answer asynchronously, and takeReady decides synchronously.
   */
  async checkSignals(
    inbox: readonly InboxSignal[],
    onRefused: (refusal: RefusedSignal) => void,
  ): Promise<void> {
    // Nothing to judge: no copy and sort of the waits (the common case, a wait for a sleep).
    if (inbox.length === 0) return;
    for (const [seq, wait] of [...this.waits].sort((a, b) => a[0] - b[0])) {
      if (wait.kind !== 'signal' || wait.schema === undefined) continue;
      const schema = wait.schema;
      let verdicts = this.verdicts.get(schema);
      if (verdicts === undefined) this.verdicts.set(schema, (verdicts = new Map()));
      for (const signal of inbox) {
        if (signal.name !== wait.name || this.consumed.has(signal.signalId) || verdicts.has(signal.signalId))
          continue;
        let issues: string[];
        try {
          const result = await schema['~standard'].validate(signal.payload);
          if (result.issues === undefined) {
            verdicts.set(signal.signalId, { ok: true, value: result.value });
            continue;
          }
          issues = result.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
        } catch (err) {
          issues = [`the schema's validate threw: ${err instanceof Error ? err.message : String(err)}`];
        }
        verdicts.set(signal.signalId, { ok: false });
        this.refused.add(signal.signalId);
        onRefused({ name: signal.name, signalId: signal.signalId, seq, issues });
      }
    }
  }

  get size(): number {
    return this.waits.size;
  }

  add(seq: number, wait: Wait): void {
    this.waits.set(seq, wait);
  }

  delete(seq: number): void {
    this.waits.delete(seq);
  }

  /** Rejects and forgets every wait (cancellation). */
  rejectAll(error: unknown): void {
    for (const wait of this.waits.values()) wait.reject(error);
    this.waits.clear();
  }

  get needsInbox(): boolean {
    return [...this.waits.values()].some((w) => w.kind !== 'timer');
  }

  /**
   * Decides how the open promises end that can end now (invariants 4 to 6): those with their
   * completion in `inbox`, and those past their deadline (closed in the store by `expire`, when the
   * host has one). Before {@link takeReady}, like {@link checkSignals}: a schema may answer
   * asynchronously, and so does the store.
   */
  async checkPromises(
    now: number,
    inbox: readonly InboxSignal[],
    expire: ExpirePromise | undefined,
  ): Promise<void> {
    // Most runs wait on no promise: nothing is made for them.
    let open: Map<string, number> | undefined;
    for (const [seq, wait] of this.waits) {
      if (wait.kind === 'promise') (open ??= new Map()).set(promiseSignalId(seq), seq);
    }
    if (open === undefined) return;
    for (const signal of inbox) {
      if (signal.name !== PROMISE_SIGNAL || this.consumed.has(signal.signalId)) continue;
      const seq = open.get(signal.signalId);
      const wait = seq === undefined ? undefined : this.waits.get(seq);
      const delivery = signal.payload as Partial<PromiseDelivery> | null;
      if (seq === undefined || wait?.kind !== 'promise' || delivery?.token !== wait.token) {
        this.refused.add(signal.signalId);
        continue;
      }
      if (!this.promiseEnds.has(seq))
        this.promiseEnds.set(seq, await this.promiseEnd(seq, wait.schema, delivery as PromiseDelivery));
    }
    for (const seq of open.values()) {
      const wait = this.waits.get(seq);
      if (wait?.kind !== 'promise' || this.promiseEnds.has(seq)) continue;
      if (wait.timeoutAt === null || wait.timeoutAt > now) continue;
      const delivery = await expire?.(wait.token);
      this.promiseEnds.set(
        seq,
        delivery === undefined ? { outcome: 'timed-out' } : await this.promiseEnd(seq, wait.schema, delivery),
      );
    }
  }

  /** The end a completion gives the promise of step `seq`: its value checked by `schema` (invariant 6). */
  private async promiseEnd(
    seq: number,
    schema: StandardSchemaV1 | undefined,
    delivery: PromiseDelivery,
  ): Promise<PromiseEnd> {
    if (delivery.outcome === 'rejected') {
      return { outcome: 'rejected', error: delivery.error ?? { name: 'Error', message: 'rejected' } };
    }
    if (schema === undefined) return { outcome: 'resolved', value: delivery.value };
    let issues: string[];
    try {
      const result = await schema['~standard'].validate(delivery.value);
      if (result.issues === undefined) return { outcome: 'resolved', value: result.value };
      issues = result.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
    } catch (err) {
      issues = [`the schema's validate threw: ${err instanceof Error ? err.message : String(err)}`];
    }
    const message =
      `the value of the durable promise of step #${seq} (run ${this.runId}) does not match its schema: ` +
      `${issues.join('; ')}. It was accepted by its JSON Schema form, which cannot say everything the schema checks`;
    const error = new InvalidInputError('', issues, { field: 'value', message });
    return { outcome: 'rejected', error: serializeError(error) };
  }

  /**
   * The waits that complete at `now` given the inbox, in step order: due timers, signal waits
   * with an unconsumed matching signal (consumed here), and signal waits past their timeout.
   */
  takeReady(now: number, inbox: readonly InboxSignal[]): ReadyWait[] {
    const ready: ReadyWait[] = [];
    for (const [seq, wait] of [...this.waits].sort((a, b) => a[0] - b[0])) {
      if (wait.kind === 'promise') {
        const end = this.promiseEnds.get(seq);
        if (end !== undefined) ready.push(this.promiseReady(seq, wait, end));
        continue;
      }
      if (wait.kind === 'timer') {
        if (wait.wakeAt <= now) {
          ready.push({
            seq,
            wait,
            entry: { type: 'TimerFired', seq },
            settle: () => wait.resolve(undefined),
          });
        }
        continue;
      }
      const verdicts = wait.schema === undefined ? undefined : this.verdicts.get(wait.schema);
      let payload: unknown;
      const signal = inbox.find((s) => {
        if (s.name !== wait.name || this.consumed.has(s.signalId)) return false;
        if (verdicts === undefined) {
          payload = s.payload;
          return wait.schema === undefined;
        }
        const verdict = verdicts.get(s.signalId);
        if (verdict?.ok !== true) return false; // refused, or not checked (checkSignals first)
        payload = verdict.value;
        return true;
      });
      if (signal) {
        this.consumed.add(signal.signalId);
        const { signalId } = signal;
        const entry: NewEntry = { type: 'SignalReceived', seq, name: wait.name, signalId, payload };
        ready.push({ seq, wait, entry, settle: () => wait.resolve(payload) });
      } else if (wait.timeoutAt !== null && wait.timeoutAt <= now) {
        const error = new SignalTimeoutError(this.runId, wait.name);
        ready.push({
          seq,
          wait,
          entry: { type: 'SignalTimedOut', seq, name: wait.name },
          settle: () => wait.reject(error),
        });
      }
    }
    for (const { seq } of ready) this.waits.delete(seq);
    return ready;
  }

  /** The ready wait of the promise of step `seq` ending as `end`; its inbox entry counts as consumed. */
  private promiseReady(seq: number, wait: Wait, end: PromiseEnd): ReadyWait {
    this.promiseEnds.delete(seq);
    if (end.outcome === 'timed-out') {
      return {
        seq,
        wait,
        entry: { type: 'PromiseTimedOut', seq },
        settle: () => wait.reject(new PromiseTimeoutError(this.runId, seq)),
      };
    }
    this.consumed.add(promiseSignalId(seq));
    if (end.outcome === 'resolved') {
      const entry: NewEntry = { type: 'PromiseCompleted', seq, outcome: 'resolved', value: end.value };
      return { seq, wait, entry, settle: () => wait.resolve(end.value) };
    }
    const entry: NewEntry = { type: 'PromiseCompleted', seq, outcome: 'rejected', error: end.error };
    return {
      seq,
      wait,
      entry,
      settle: () => wait.reject(new PromiseRejectedError(this.runId, seq, end.error)),
    };
  }

  /** The earliest timer or signal deadline, or null when only open-ended signal waits remain. */
  earliestDeadline(): number | null {
    let earliest: number | null = null;
    for (const w of this.waits.values()) {
      const at = w.kind === 'timer' ? w.wakeAt : w.timeoutAt;
      if (at !== null && (earliest === null || at < earliest)) earliest = at;
    }
    return earliest;
  }

  signalNames(): string[] {
    const names = [...this.waits.values()].flatMap((w) =>
      w.kind === 'signal' ? [w.name] : w.kind === 'promise' ? [PROMISE_SIGNAL] : [],
    );
    return [...new Set(names)];
  }
}
