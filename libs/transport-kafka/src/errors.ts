/**
 * The Kafka transport's side of the backend error categories (@baton/core/adapter): toKafkaError
 * maps what kafkajs throws to one of them, and the functions below make the ones the transport
 * raises itself. Each keeps the code and the name the transport's own error classes had (stored
 * run records and alerts carry them) and the kafkajs error as `cause`. Messages name the brokers
 * (secrets masked), what failed, and what to do.
 */
import { BatonError, type BatonErrorOptions } from '@baton/core';
import {
  BackendAuthError,
  BackendConflictError,
  BackendNotDurableError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
} from '@baton/core/adapter';

/** Each condition's code and name, as the transport's classes had them. */
const KINDS = {
  unavailable: { code: 'BATON_KAFKA_UNAVAILABLE', name: 'KafkaUnavailableError' },
  auth: { code: 'BATON_KAFKA_AUTH', name: 'KafkaAuthError' },
  permission: { code: 'BATON_KAFKA_PERMISSION', name: 'KafkaPermissionError' },
  topicConflict: { code: 'BATON_KAFKA_TOPIC_CONFLICT', name: 'KafkaTopicConflictError' },
  request: { code: 'BATON_KAFKA_REQUEST', name: 'KafkaRequestError' },
} as const;

function kind(key: keyof typeof KINDS, options?: BatonErrorOptions) {
  return { ...options, ...KINDS[key], backend: 'kafka' };
}

/** A topic exists with a layout the transport cannot use. Not retryable. */
export function kafkaTopicConflict(message: string, options?: BatonErrorOptions): BackendConflictError {
  return new BackendConflictError(message, kind('topicConflict', options));
}

/** Any other failed request. Retryable when kafkajs says so (`options.retryable`). */
export function kafkaRequestFailed(message: string, options?: BatonErrorOptions): BackendRequestError {
  return new BackendRequestError(message, kind('request', options));
}

interface KafkaJsErrorShape {
  name?: string;
  message?: string;
  type?: string;
  retriable?: boolean;
  cause?: unknown;
  originalError?: unknown;
}

/** The innermost kafkajs error: retries wrap the error that made them give up. */
function innermost(err: unknown): KafkaJsErrorShape {
  let current = err as KafkaJsErrorShape;
  for (let i = 0; i < 5; i++) {
    const next = (current?.originalError ?? current?.cause) as KafkaJsErrorShape | undefined;
    if (next === undefined || next === null || typeof next !== 'object') break;
    current = next;
  }
  return current ?? {};
}

const UNAVAILABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSConnectionClosedError',
  'KafkaJSNonRetriableError',
]);

/** Broker answers refusing a write for too few in-sync replicas (acks=all, min.insync.replicas). */
const NOT_DURABLE: ReadonlySet<string> = new Set(['NOT_ENOUGH_REPLICAS', 'NOT_ENOUGH_REPLICAS_AFTER_APPEND']);

export interface ErrorContext {
  brokers: string;
  operation: string;
}

/**
 * Maps a kafkajs error to the backend category for it (a BackendRequestError when none fits),
 * naming the brokers and the operation; BatonErrors pass.
 */
export function toKafkaError(err: unknown, context: ErrorContext): BatonError {
  if (err instanceof BatonError) return err;
  const inner = innermost(err);
  const outer = (err ?? {}) as KafkaJsErrorShape;
  const detail = inner.message ?? outer.message ?? String(err);
  const where = `kafka transport (${context.brokers}): ${context.operation}`;
  const options = { cause: err };
  if (inner.name === 'KafkaJSSASLAuthenticationError' || inner.type === 'SASL_AUTHENTICATION_FAILED') {
    return new BackendAuthError(
      `${where}: the brokers refused the SASL credentials (${detail}); check user, password and mechanism`,
      kind('auth', options),
    );
  }
  if (inner.type !== undefined && /AUTHORIZATION_FAILED$/.test(inner.type)) {
    return new BackendPermissionError(
      `${where}: refused by an ACL (${inner.type}); grant the user Read/Write/Describe on the prefix's topics, Create on the cluster (or create the topics beforehand), and Read on the consumer group`,
      kind('permission', options),
    );
  }
  const isUnavailable =
    UNAVAILABLE.has(inner.name ?? '') ||
    UNAVAILABLE.has(outer.name ?? '') ||
    /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|Connection timeout|Closed connection/i.test(detail);
  if (isUnavailable) {
    return new BackendUnavailableError(
      `${where}: no broker answered (${detail}); is Kafka running and reachable?`,
      kind('unavailable', options),
    );
  }
  const request = kind('request', { ...options, retryable: inner.retriable ?? outer.retriable ?? false });
  // Fewer in-sync replicas than min.insync.replicas: the broker would not keep the record as
  // required. Same code, message and retryable as any failed request; its category says why.
  if (inner.type !== undefined && NOT_DURABLE.has(inner.type)) {
    return new BackendNotDurableError(`${where} failed: ${detail}`, request);
  }
  return new BackendRequestError(`${where} failed: ${detail}`, request);
}
