/**
 * Bounded retries of the transport's admin and read paths. Right after a topic is created, or
 * while a partition's leadership moves, a broker answers for a while with errors kafkajs marks
 * `retriable` (NOT_LEADER_FOR_PARTITION, LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION): they
 * heal on their own, so such a call is tried again with backoff, within a fixed time budget, and
 * then fails with an error that says it kept failing and what to check.
 *
 * Only reads and idempotent admin calls go through here: an append or an enqueue is never resent
 * (a resent produce could write a record twice).
 */
import * as timers from 'node:timers/promises';
import { kafkaRequestFailed, toKafkaError } from './errors.js';

export interface RetryPolicy {
  /** Time after the first attempt past which no new attempt starts. */
  budgetMs: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

/** What reads and admin calls use: leader elections after a topic's creation take seconds. */
export const KAFKA_READ_RETRY: RetryPolicy = { budgetMs: 10_000, firstDelayMs: 50, maxDelayMs: 1_000 };

/** Broker errors that heal without anyone acting, whatever flag the wrapping error carries. */
const TRANSIENT_TYPES = new Set([
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
  'LEADER_NOT_AVAILABLE',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'REPLICA_NOT_AVAILABLE',
  'NOT_CONTROLLER',
  'REQUEST_TIMED_OUT',
]);

interface ErrorLink {
  retriable?: unknown;
  type?: unknown;
  originalError?: unknown;
  cause?: unknown;
}

/**
 * True when kafkajs marks the error, or an error it wraps (`originalError`, `cause`: kafkajs wraps
 * the error its own retries gave up on), retriable, or its broker error type is a transient one.
 */
export function isRetriableKafkaError(err: unknown): boolean {
  let current = err as ErrorLink | undefined;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    if (current.retriable === true) return true;
    if (typeof current.type === 'string' && TRANSIENT_TYPES.has(current.type)) return true;
    current = (current.originalError ?? current.cause) as ErrorLink | undefined;
  }
  return false;
}

export interface RetryContext {
  /** The brokers as shown in messages (secrets masked). */
  brokers: string;
  operation: string;
  policy?: RetryPolicy;
  /** Waits between attempts; tests pass one that does not. @defaultValue setTimeout */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/**
 * Runs `work`, again after a retriable error with doubling delays while the budget lasts. A
 * non-retriable error is thrown at once, unchanged; a retriable one that outlasts the budget
 * becomes a BackendRequestError (code BATON_KAFKA_REQUEST) naming the operation, the attempts and the time spent.
 */
export async function withKafkaRetries<T>(context: RetryContext, work: () => Promise<T>): Promise<T> {
  const policy = context.policy ?? KAFKA_READ_RETRY;
  const sleep = context.sleep ?? ((ms: number) => timers.setTimeout(ms));
  const now = context.now ?? Date.now;
  const started = now();
  let delay = policy.firstDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isRetriableKafkaError(err)) throw err;
      const elapsed = now() - started;
      if (elapsed + delay > policy.budgetMs) {
        const last = toKafkaError(err, { brokers: context.brokers, operation: context.operation });
        throw kafkaRequestFailed(
          `${last.message} (still failing after ${attempt} attempts over ${elapsed} ms; the broker ` +
            "kept answering with a retriable error: check that the topic's partitions have leaders " +
            '(kafka-topics --describe) and the brokers are healthy, then try again)',
          { cause: err, retryable: true },
        );
      }
      await sleep(delay);
      delay = Math.min(delay * 2, policy.maxDelayMs);
    }
  }
}
