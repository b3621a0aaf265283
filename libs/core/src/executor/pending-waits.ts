/**
 * The durable waits a workflow has open: timers (ctx.sleep) and signal waits
 * (ctx.waitForSignal). Decides which can complete now and when the run must next wake.
 */
import type { InboxSignal } from '../contracts/store.js';
import { SignalTimeoutError } from '../errors.js';
import type { NewEntry } from './execution-host.js';

export type Settle = { resolve(value: unknown): void; reject(error: unknown): void };
export type Wait = Settle &
  ({ kind: 'timer'; wakeAt: number } | { kind: 'signal'; name: string; timeoutAt: number | null });

/** A wait that can complete: journal `entry`, then call `settle`. */
export interface ReadyWait {
  seq: number;
  wait: Wait;
  entry: NewEntry;
  settle(): void;
}

export class PendingWaits {
  private readonly waits = new Map<number, Wait>();

  constructor(
    private readonly runId: string,
    /** Signal ids consumed by earlier waits; each inbox signal completes one wait only. */
    readonly consumed: Set<string>,
  ) {}

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
    return [...this.waits.values()].some((w) => w.kind === 'signal');
  }

  /**
   * The waits that complete at `now` given the inbox, in step order: due timers, signal waits
   * with an unconsumed matching signal (consumed here), and signal waits past their timeout.
   */
  takeReady(now: number, inbox: readonly InboxSignal[]): ReadyWait[] {
    const ready: ReadyWait[] = [];
    for (const [seq, wait] of [...this.waits].sort((a, b) => a[0] - b[0])) {
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
      const signal = inbox.find((s) => s.name === wait.name && !this.consumed.has(s.signalId));
      if (signal) {
        this.consumed.add(signal.signalId);
        const { signalId, payload } = signal;
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
    return [...new Set([...this.waits.values()].flatMap((w) => (w.kind === 'signal' ? [w.name] : [])))];
  }
}
