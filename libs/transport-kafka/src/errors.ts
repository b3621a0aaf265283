/**
 * Errors of the Kafka transport: each a BatonError with a stable code and the kafkajs error as
 * `cause`. Messages name the brokers (secrets masked), what failed, and what to do.
 */
import { BatonError, type BatonErrorOptions } from '@baton/core';

/** No broker could be reached, or none answered in time. Retryable. */
export class KafkaUnavailableError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_KAFKA_UNAVAILABLE', message, { retryable: true, ...options });
  }
}

/** The brokers refused the SASL credentials. Not retryable. */
export class KafkaAuthError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_KAFKA_AUTH', message, { ...options, retryable: false });
  }
}

/** An ACL refused an operation the transport needs. Not retryable. */
export class KafkaPermissionError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_KAFKA_PERMISSION', message, { ...options, retryable: false });
  }
}

/** A topic exists with a layout the transport cannot use. Not retryable. */
export class KafkaTopicConflictError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_KAFKA_TOPIC_CONFLICT', message, { ...options, retryable: false });
  }
}

/** Any other failed request. Retryable when kafkajs says so. */
export class KafkaRequestError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_KAFKA_REQUEST', message, options);
  }
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

export interface ErrorContext {
  brokers: string;
  operation: string;
}

/** Maps a kafkajs error to a BatonError naming the brokers and the operation; BatonErrors pass. */
export function toKafkaError(err: unknown, context: ErrorContext): BatonError {
  if (err instanceof BatonError) return err;
  const inner = innermost(err);
  const outer = (err ?? {}) as KafkaJsErrorShape;
  const detail = inner.message ?? outer.message ?? String(err);
  const where = `kafka transport (${context.brokers}): ${context.operation}`;
  const options = { cause: err };
  if (inner.name === 'KafkaJSSASLAuthenticationError' || inner.type === 'SASL_AUTHENTICATION_FAILED') {
    return new KafkaAuthError(
      `${where}: the brokers refused the SASL credentials (${detail}); check user, password and mechanism`,
      options,
    );
  }
  if (inner.type !== undefined && /AUTHORIZATION_FAILED$/.test(inner.type)) {
    return new KafkaPermissionError(
      `${where}: refused by an ACL (${inner.type}); grant the user Read/Write/Describe on the prefix's topics, Create on the cluster (or create the topics beforehand), and Read on the consumer group`,
      options,
    );
  }
  const isUnavailable =
    UNAVAILABLE.has(inner.name ?? '') ||
    UNAVAILABLE.has(outer.name ?? '') ||
    /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|Connection timeout|Closed connection/i.test(detail);
  if (isUnavailable) {
    return new KafkaUnavailableError(
      `${where}: no broker answered (${detail}); is Kafka running and reachable?`,
      options,
    );
  }
  return new KafkaRequestError(`${where} failed: ${detail}`, {
    ...options,
    retryable: inner.retriable ?? outer.retriable ?? false,
  });
}
