/**
 * The message id of each journal append and the retry counts (append-retry.ts): state of one
 * transport that its context carries, kept apart so the context imports no behaviour.
 */
import { randomBytes } from 'node:crypto';

/** Appends retried after an unknown outcome, and how many had landed the first time. */
export interface AppendRetryStats {
  /** Appends whose first attempt had an unknown outcome and were retried. */
  retried: number;
  /** Of those, appends found to have landed on the first attempt (de-duplicated or read back). */
  landedEarlier: number;
}

/** Message ids unique to one append: a per-process nonce and a counter. */
export class MessageIds {
  private readonly nonce = randomBytes(9).toString('base64url');
  private counter = 0;
  next(): string {
    return `${this.nonce}.${(++this.counter).toString(36)}`;
  }
}
