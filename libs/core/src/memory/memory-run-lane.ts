/**
 * One lane of the in-process run queue (memory-transport.ts keeps one per priority level): a FIFO
 * with competing consumers, ack-wait redelivery and nak delays.
 *
 * Invariants:
 * 1. A message is in exactly one of the states ready / in flight / delayed / acked, and sits in
 *    the ready queue at most once (acked messages are skipped there, not spliced out).
 * 2. Only the current delivery of a message may nak it; a late nak from a delivery that already
 *    timed out would otherwise put a second copy in flight.
 * 3. Every byte array is copied on the way in and out, so no caller can change stored data.
 */
import type { Delivery, FetchOptions } from '../adapter/contracts/transport.js';

type MessageState = 'ready' | 'inflight' | 'delayed' | 'acked';

interface StoredMessage {
  data: Uint8Array;
  headers: Record<string, string>;
  deliveries: number;
  state: MessageState;
  /** The ack-wait or nak-delay timer, while one runs. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface Waiter {
  max: number;
  finish(batch: Delivery[]): void;
}

/** A lane's counts for backlog(): waiting (ready or delayed) and delivered but not acked. */
export interface LaneCounts {
  pending: number;
  ackPending: number;
}

export class MemoryRunLane {
  private closed = false;
  private readonly ready: StoredMessage[] = [];
  /** Messages with a running timer, so close() can stop every one. */
  private readonly timed = new Set<StoredMessage>();
  private readonly waiters = new Set<Waiter>();

  constructor(
    private readonly ackWaitMs: number,
    /** Throws once the transport is closed. */
    private readonly assertOpen: (operation: string) => void,
  ) {}

  close(): void {
    this.closed = true;
    for (const message of this.timed) clearTimeout(message.timer);
    this.timed.clear();
    // Waiting fetchers get an empty batch rather than hanging until their expiry.
    for (const waiter of [...this.waiters]) waiter.finish([]);
  }

  enqueue(data: Uint8Array, headers: Record<string, string> | undefined): void {
    this.ready.push({
      data: new Uint8Array(data),
      headers: { ...headers },
      deliveries: 0,
      state: 'ready',
      timer: undefined,
    });
    this.wakeWaiters();
  }

  fetch(options: FetchOptions): Promise<Delivery[]> {
    const { max, expiresMs, signal } = options;
    if (max < 1) return Promise.resolve([]);
    const batch = this.take(max);
    if (batch.length > 0 || expiresMs <= 0 || signal?.aborted) return Promise.resolve(batch);
    return new Promise<Delivery[]>((resolve) => {
      const onAbort = (): void => waiter.finish([]);
      const waiter: Waiter = {
        max,
        finish: (result) => {
          clearTimeout(expiry);
          signal?.removeEventListener('abort', onAbort);
          this.waiters.delete(waiter);
          resolve(result);
        },
      };
      const expiry = setTimeout(() => waiter.finish([]), expiresMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }

  counts(): LaneCounts {
    let pending = 0;
    let ackPending = 0;
    for (const message of this.ready) if (message.state === 'ready') pending++;
    for (const message of this.timed) {
      if (message.state === 'delayed') pending++;
      else if (message.state === 'inflight') ackPending++;
    }
    return { pending, ackPending };
  }

  /** Hands ready messages to waiting fetchers, oldest fetcher first. */
  private wakeWaiters(): void {
    for (const waiter of this.waiters) {
      const batch = this.take(waiter.max);
      if (batch.length === 0) return;
      waiter.finish(batch);
    }
  }

  private take(max: number): Delivery[] {
    const batch: Delivery[] = [];
    while (batch.length < max) {
      const message = this.ready.shift();
      if (message === undefined) break;
      if (message.state !== 'ready') continue;
      batch.push(this.deliver(message));
    }
    return batch;
  }

  private deliver(message: StoredMessage): Delivery {
    message.deliveries += 1;
    message.state = 'inflight';
    const delivery = message.deliveries;
    this.startTimer(message, this.ackWaitMs);
    return {
      data: new Uint8Array(message.data),
      headers: { ...message.headers },
      deliveryCount: delivery,
      ack: async () => {
        this.assertOpen('ack');
        // A late ack from a timed-out delivery still counts: the work it confirms was done.
        this.stopTimer(message);
        message.state = 'acked';
      },
      nak: async (delayMs?: number) => {
        this.assertOpen('nak');
        if (message.state !== 'inflight' || message.deliveries !== delivery) return;
        this.stopTimer(message);
        if (delayMs !== undefined && delayMs > 0) {
          message.state = 'delayed';
          this.startTimer(message, delayMs);
        } else {
          this.makeReady(message);
        }
      },
    };
  }

  private startTimer(message: StoredMessage, delayMs: number): void {
    // Redelivery timers must not keep a finished process alive.
    message.timer = setTimeout(() => {
      this.timed.delete(message);
      message.timer = undefined;
      this.makeReady(message);
    }, delayMs).unref();
    this.timed.add(message);
  }

  private stopTimer(message: StoredMessage): void {
    clearTimeout(message.timer);
    message.timer = undefined;
    this.timed.delete(message);
  }

  private makeReady(message: StoredMessage): void {
    if (this.closed || message.state === 'acked') return;
    message.state = 'ready';
    this.ready.push(message);
    this.wakeWaiters();
  }
}
