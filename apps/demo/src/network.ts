/**
 * The network between one worker "process" and the external systems.
 *
 * The demo's workers share one Node process, so a crashed worker's activity code would keep
 * running and could still reach the fake systems after the "crash", which a SIGKILLed pod never
 * does. Each worker therefore calls the outside world through its own link, and the crash cuts
 * that link together with the worker's transport and store: a request already delivered still
 * takes effect, but its reply is lost, exactly the in-doubt case idempotency keys exist for.
 */

import { setTimeout as sleep } from 'node:timers/promises';

/** A promise that never settles: what a dead process waits on. */
const hang = (): Promise<never> => new Promise<never>(() => undefined);

/** Waits `ms`, or rejects with the signal's reason as soon as it is aborted. */
export async function delay(ms: number, signal?: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch((err: unknown) => {
    throw signal?.aborted ? signal.reason : err;
  });
}

/** Latency of one direction of a call, in ms; a round trip then takes 20-150 ms. */
export type LatencyFn = () => number;

const defaultLatency: LatencyFn = () => 10 + Math.random() * 65;

/**
 * When each request left its worker, per idempotency key, across the whole fleet: the outside
 * world's record that lets the demo prove no step ran again after its result was journaled.
 */
export class RequestLog {
  private readonly sent = new Map<string, number[]>();

  record(idempotencyKey: string, at: number): void {
    const times = this.sent.get(idempotencyKey);
    if (times) times.push(at);
    else this.sent.set(idempotencyKey, [at]);
  }

  /** How many requests with this key left a worker strictly after `at`. */
  sentAfter(idempotencyKey: string, at: number): number {
    return (this.sent.get(idempotencyKey) ?? []).filter((t) => t > at).length;
  }
}

/** One worker's connection to the outside world; `sever()` is its half of the crash. */
export class NetworkLink {
  private cut = false;

  constructor(
    private readonly log: RequestLog,
    private readonly latency: LatencyFn = defaultLatency,
  ) {}

  /** Cuts the link: calls not yet delivered never are, replies not yet received never arrive. */
  sever(): void {
    this.cut = true;
  }

  get severed(): boolean {
    return this.cut;
  }

  /**
   * Sends a request: it travels, `apply` runs on the remote system, the reply travels back.
   * Aborting `signal` while the reply travels leaves the effect applied: the caller cannot know.
   */
  async call<T>(signal: AbortSignal, idempotencyKey: string, apply: () => T): Promise<T> {
    if (this.cut) return hang();
    this.log.record(idempotencyKey, Date.now());
    await delay(this.latency(), signal);
    if (this.cut) return hang();
    const reply = apply();
    await delay(this.latency(), signal);
    if (this.cut) return hang();
    return reply;
  }
}
