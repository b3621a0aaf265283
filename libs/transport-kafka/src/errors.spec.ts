import { describe, expect, it } from 'vitest';

import {
  type BackendError,
  BackendAuthError,
  BackendNotDurableError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  JournalConflictError,
} from '@baton/core/adapter';
import { toKafkaError } from './errors.js';

const context = { brokers: 'kafka-1:9092', operation: 'append' };

/** A kafkajs error as it reaches the transport: `type` and `retriable` on protocol errors. */
function kafkaJsError(
  name: string,
  message: string,
  fields: { type?: string; retriable?: boolean } = {},
): Error {
  return Object.assign(new Error(message), { name, ...fields });
}

describe('toKafkaError', () => {
  it('passes BatonErrors through unchanged', () => {
    const conflict = new JournalConflictError('r', 1, 2);
    expect(toKafkaError(conflict, context)).toBe(conflict);
  });

  it('reads the innermost error of a kafkajs retry that gave up', () => {
    const inner = kafkaJsError('KafkaJSSASLAuthenticationError', 'SASL PLAIN authentication failed');
    const wrapped = Object.assign(kafkaJsError('KafkaJSNonRetriableError', 'gave up'), {
      originalError: inner,
    });
    const err = toKafkaError(wrapped, context);
    expect(err).toBeInstanceOf(BackendAuthError);
    expect(err).toMatchObject({
      name: 'KafkaAuthError',
      code: 'BATON_KAFKA_AUTH',
      backend: 'kafka',
      retryable: false,
    });
    expect(err.message).toBe(
      'kafka transport (kafka-1:9092): append: the brokers refused the SASL credentials ' +
        '(SASL PLAIN authentication failed); check user, password and mechanism',
    );
    expect(err.cause).toBe(wrapped);
  });

  it('maps every error it is given to a category, under the name and code the transport always used', () => {
    const fixtures: [unknown, abstract new (...args: never[]) => BackendError, string, string, boolean][] = [
      [
        kafkaJsError('KafkaJSProtocolError', 'SASL failed', { type: 'SASL_AUTHENTICATION_FAILED' }),
        BackendAuthError,
        'KafkaAuthError',
        'BATON_KAFKA_AUTH',
        false,
      ],
      [
        kafkaJsError('KafkaJSProtocolError', 'Not authorized', { type: 'TOPIC_AUTHORIZATION_FAILED' }),
        BackendPermissionError,
        'KafkaPermissionError',
        'BATON_KAFKA_PERMISSION',
        false,
      ],
      [
        kafkaJsError('KafkaJSConnectionError', 'connect ECONNREFUSED 127.0.0.1:9092'),
        BackendUnavailableError,
        'KafkaUnavailableError',
        'BATON_KAFKA_UNAVAILABLE',
        true,
      ],
      [
        kafkaJsError('KafkaJSRequestTimeoutError', 'Request produce timed out'),
        BackendUnavailableError,
        'KafkaUnavailableError',
        'BATON_KAFKA_UNAVAILABLE',
        true,
      ],
      [
        kafkaJsError('KafkaJSProtocolError', 'not enough replicas', {
          type: 'NOT_ENOUGH_REPLICAS',
          retriable: true,
        }),
        BackendNotDurableError,
        'KafkaRequestError',
        'BATON_KAFKA_REQUEST',
        true,
      ],
      [
        kafkaJsError('KafkaJSProtocolError', 'leader moved', {
          type: 'NOT_LEADER_FOR_PARTITION',
          retriable: true,
        }),
        BackendRequestError,
        'KafkaRequestError',
        'BATON_KAFKA_REQUEST',
        true,
      ],
      [
        kafkaJsError('KafkaJSProtocolError', 'invalid topic', {
          type: 'INVALID_TOPIC_EXCEPTION',
          retriable: false,
        }),
        BackendRequestError,
        'KafkaRequestError',
        'BATON_KAFKA_REQUEST',
        false,
      ],
      ['a thrown string', BackendRequestError, 'KafkaRequestError', 'BATON_KAFKA_REQUEST', false],
    ];
    for (const [thrown, category, name, code, retryable] of fixtures) {
      const err = toKafkaError(thrown, context);
      expect(err, name).toBeInstanceOf(category);
      expect(err).toMatchObject({ name, code, retryable, backend: 'kafka' });
    }
  });

  it('keeps the words of the broker in any other failure', () => {
    const err = toKafkaError(
      kafkaJsError('KafkaJSProtocolError', 'not enough replicas', { type: 'NOT_ENOUGH_REPLICAS' }),
      context,
    );
    expect(err.message).toBe('kafka transport (kafka-1:9092): append failed: not enough replicas');
  });
});
