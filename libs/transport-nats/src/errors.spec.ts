import { describe, expect, it } from 'vitest';
import { errors as natsErrors } from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';

import {
  BackendAuthError,
  type BackendError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  BackendUnsupportedError,
  JournalConflictError,
} from '@baton/core/adapter';
import { ackInfoOf } from './delivery-info.js';
import { isLeaderless, toNatsError } from './errors.js';

const context = { servers: 'nats://app:***@nats:4222', operation: 'enqueue' };

describe('toNatsError', () => {
  it('passes BatonErrors through unchanged', () => {
    const conflict = new JournalConflictError('r', 1, 2);
    expect(toNatsError(conflict, context)).toBe(conflict);
  });

  it('names the refused subject of a permission violation, found in the cause chain', () => {
    const violation = new natsErrors.PermissionViolationError(
      'Permissions Violation for Publish to "$JS.API.STREAM.INFO.BATON_RUNS"',
      'publish',
      '$JS.API.STREAM.INFO.BATON_RUNS',
    );
    const err = toNatsError(new natsErrors.RequestError('refused', { cause: violation }), context);
    expect(err).toMatchObject({
      name: 'NatsPermissionError',
      code: 'BATON_NATS_PERMISSION',
      backend: 'nats',
      resource: '$JS.API.STREAM.INFO.BATON_RUNS',
      action: 'publish',
      retryable: false,
    });
    expect(err).toBeInstanceOf(BackendPermissionError);
    expect(err.message).toContain("permission to publish to '$JS.API.STREAM.INFO.BATON_RUNS'");
    expect(err.message).toContain('nats://app:***@nats:4222');
    expect(err.cause).toBeInstanceOf(natsErrors.RequestError);
  });

  it('reports a cluster between leaders (10008) as unavailable and retryable', () => {
    const leaderless = new JetStreamApiError({
      code: 503,
      err_code: 10008,
      description: 'JetStream system temporarily unavailable',
    });
    const err = toNatsError(leaderless, context);
    expect(err).toMatchObject({
      name: 'NatsUnavailableError',
      code: 'BATON_NATS_UNAVAILABLE',
      retryable: true,
    });
    expect(err.message).toContain('no leader');
    // connect() waits such an error out (untilElected), through the transport's wrapping too.
    expect(isLeaderless(leaderless)).toBe(true);
    expect(isLeaderless(err)).toBe(true);
    const refused = new JetStreamApiError({
      code: 400,
      err_code: 10058,
      description: 'stream name already in use',
    });
    expect(isLeaderless(refused)).toBe(false);
    expect(isLeaderless(new Error('timeout'))).toBe(false);
  });

  it('reports refused credentials as not retryable, with the fix', () => {
    const err = toNatsError(new natsErrors.AuthorizationError('Authorization Violation'), context);
    expect(err).toMatchObject({ name: 'NatsAuthError', code: 'BATON_NATS_AUTH', retryable: false });
    expect(err.message).toContain('Authorization Violation');
    expect(err.message).toContain('user/password');
  });

  it('reports an unreachable or silent server as unavailable and retryable', () => {
    for (const cause of [
      new natsErrors.ConnectionError('connection refused'),
      new natsErrors.TimeoutError(),
      Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' }),
    ]) {
      expect(toNatsError(cause, context)).toMatchObject({ code: 'BATON_NATS_UNAVAILABLE', retryable: true });
    }
  });

  it('recognises JetStream being disabled on the server', () => {
    const disabled = Object.assign(new Error('jetstream is not enabled'), { name: 'JetStreamNotEnabled' });
    const err = toNatsError(disabled, context);
    expect(err).toMatchObject({ code: 'BATON_NATS_JETSTREAM_DISABLED' });
    expect(err.message).toContain('-js');
  });

  it('reports nothing answering a publish after connect as unavailable (a stream between leaders)', () => {
    const noResponders = Object.assign(new Error('jetstream is not enabled: no stream answers the subject'), {
      name: 'JetStreamNotEnabled',
      cause: new natsErrors.NoRespondersError('baton.runs'),
    });
    expect(toNatsError(noResponders, context)).toMatchObject({
      code: 'BATON_NATS_UNAVAILABLE',
      retryable: true,
    });
    // At connect, where the streams are made, it still means JetStream is off.
    expect(toNatsError(noResponders, { ...context, operation: 'connect' })).toMatchObject({
      code: 'BATON_NATS_JETSTREAM_DISABLED',
    });
  });

  it('maps every error it is given to a category, under the name and code the transport always used', () => {
    const fixtures: [unknown, abstract new (...args: never[]) => BackendError, string, string][] = [
      [
        new natsErrors.RequestError('refused', {
          cause: new natsErrors.PermissionViolationError('Permissions Violation', 'subscription', 'baton.x'),
        }),
        BackendPermissionError,
        'NatsPermissionError',
        'BATON_NATS_PERMISSION',
      ],
      [
        new natsErrors.AuthorizationError('Authorization Violation'),
        BackendAuthError,
        'NatsAuthError',
        'BATON_NATS_AUTH',
      ],
      [
        new JetStreamApiError({ code: 503, err_code: 10009, description: 'not leader' }),
        BackendUnavailableError,
        'NatsUnavailableError',
        'BATON_NATS_UNAVAILABLE',
      ],
      [
        new JetStreamApiError({
          code: 503,
          err_code: 10039,
          description: 'jetstream not enabled for account',
        }),
        BackendUnsupportedError,
        'NatsJetStreamDisabledError',
        'BATON_NATS_JETSTREAM_DISABLED',
      ],
      [
        Object.assign(new Error('getaddrinfo ENOTFOUND nats'), { code: 'ENOTFOUND' }),
        BackendUnavailableError,
        'NatsUnavailableError',
        'BATON_NATS_UNAVAILABLE',
      ],
      [
        new natsErrors.ConnectionError('connection refused'),
        BackendUnavailableError,
        'NatsUnavailableError',
        'BATON_NATS_UNAVAILABLE',
      ],
      [
        new natsErrors.TimeoutError(),
        BackendUnavailableError,
        'NatsUnavailableError',
        'BATON_NATS_UNAVAILABLE',
      ],
      [
        new Error('maximum consumers limit reached'),
        BackendRequestError,
        'NatsRequestError',
        'BATON_NATS_REQUEST',
      ],
      ['a thrown string', BackendRequestError, 'NatsRequestError', 'BATON_NATS_REQUEST'],
    ];
    for (const [thrown, category, name, code] of fixtures) {
      const err = toNatsError(thrown, context);
      expect(err, name).toBeInstanceOf(category);
      expect(err).toMatchObject({ name, code, backend: 'nats' });
    }
  });

  it('keeps the server words of anything else', () => {
    const err = toNatsError(new Error('maximum consumers limit reached'), context);
    expect(err).toMatchObject({ code: 'BATON_NATS_REQUEST' });
    expect(err.message).toBe(
      'nats transport enqueue at nats://app:***@nats:4222 failed: maximum consumers limit reached',
    );
  });
});

describe('ackInfoOf', () => {
  it('reads delivery count and stream sequence from both ack subject forms', () => {
    expect(ackInfoOf('$JS.ACK.BATON_RUNS.baton-workers.3.17.40.1795432515039550571.0')).toEqual({
      deliveryCount: 3,
      streamSequence: 17,
    });
    expect(
      ackInfoOf('$JS.ACK.hub.ACCHASH.BATON_RUNS.baton-workers.2.9.11.1795432515039550571.4.xyz'),
    ).toEqual({
      deliveryCount: 2,
      streamSequence: 9,
    });
  });

  it('refuses a subject that is not a JetStream ack', () => {
    expect(() => ackInfoOf('_INBOX.abc')).toThrow(/not a JetStream ack subject/);
    expect(() => ackInfoOf(undefined)).toThrow(/not a JetStream ack subject/);
    expect(() => ackInfoOf('$JS.ACK.S.C.x.1.1.1.0')).toThrow(/cannot read/);
  });
});
