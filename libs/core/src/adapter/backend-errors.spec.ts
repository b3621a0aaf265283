/**
 * The categories of backend failure: each carries backend, code and retryable, keeps its cause,
 * defaults retryable by what the category means, and serializes as every BatonError does (under
 * the name the adapter kept).
 */
import { describe, expect, it } from 'vitest';
import {
  BackendAuthError,
  BackendConflictError,
  BackendError,
  BackendNotDurableError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  BackendUnsupportedError,
  type BackendErrorOptions,
} from './backend-errors.js';
import { BatonError, deserializeError, serializeError } from '../shared/errors.js';

const base: BackendErrorOptions = { backend: 'nats', code: 'BATON_NATS_X' };

const categories = [
  { make: (o: BackendErrorOptions) => new BackendUnavailableError('m', o), retryable: true, fixed: false },
  { make: (o: BackendErrorOptions) => new BackendAuthError('m', o), retryable: false, fixed: true },
  { make: (o: BackendErrorOptions) => new BackendPermissionError('m', o), retryable: false, fixed: true },
  { make: (o: BackendErrorOptions) => new BackendUnsupportedError('m', o), retryable: false, fixed: true },
  { make: (o: BackendErrorOptions) => new BackendNotDurableError('m', o), retryable: true, fixed: false },
  { make: (o: BackendErrorOptions) => new BackendConflictError('m', o), retryable: false, fixed: false },
  { make: (o: BackendErrorOptions) => new BackendRequestError('m', o), retryable: false, fixed: false },
];

describe('backend error categories', () => {
  it.each(categories.map((c) => [c.make(base).constructor.name, c] as const))(
    '%s carries backend, code, message and cause, and its retryable default',
    (className, { make, retryable }) => {
      const cause = new Error('socket closed');
      const err = make({ ...base, backend: 'redis', code: 'BATON_REDIS_SOMETHING', cause });
      expect(err).toBeInstanceOf(BackendError);
      expect(err).toBeInstanceOf(BatonError);
      expect(err).toMatchObject({
        name: className,
        backend: 'redis',
        code: 'BATON_REDIS_SOMETHING',
        message: 'm',
        retryable,
        retryAfterMs: undefined,
      });
      expect(err.cause).toBe(cause);
    },
  );

  it('lets the adapter say retryable where the category allows it, never for a refusal to fix by hand', () => {
    for (const { make, retryable, fixed } of categories) {
      for (const asked of [true, false]) {
        expect(make({ ...base, retryable: asked }).retryable).toBe(fixed ? retryable : asked);
      }
    }
  });

  it('keeps the name an adapter gives, so serialized records read as before', () => {
    const err = new BackendUnavailableError('nats transport enqueue failed', {
      backend: 'nats',
      code: 'BATON_NATS_UNAVAILABLE',
      name: 'NatsUnavailableError',
      cause: new Error('ECONNRESET'),
    });
    expect(err.name).toBe('NatsUnavailableError');
    expect(err).toBeInstanceOf(BackendUnavailableError);
    const wire = serializeError(err);
    expect(wire).toMatchObject({
      name: 'NatsUnavailableError',
      code: 'BATON_NATS_UNAVAILABLE',
      retryable: true,
      message: 'nats transport enqueue failed',
      cause: { name: 'Error', message: 'ECONNRESET' },
    });
    // `backend` is not part of the wire form (the code already names the adapter).
    expect(Object.keys(wire).sort()).toEqual(['cause', 'code', 'message', 'name', 'retryable', 'stack']);
    expect(deserializeError(wire)).toMatchObject({
      name: 'NatsUnavailableError',
      code: 'BATON_NATS_UNAVAILABLE',
    });
  });

  it('names what a permission refusal refused, and the version an unsupported server runs', () => {
    const refused = new BackendPermissionError('m', {
      ...base,
      resource: '$JS.API.STREAM.INFO.BATON_RUNS',
      action: 'publish',
    });
    expect(refused).toMatchObject({ resource: '$JS.API.STREAM.INFO.BATON_RUNS', action: 'publish' });
    expect(new BackendPermissionError('m', base)).toMatchObject({ resource: undefined, action: undefined });
    expect(new BackendUnsupportedError('m', { ...base, serverVersion: '2.9.0' }).serverVersion).toBe('2.9.0');
    expect(new BackendUnsupportedError('m', base).serverVersion).toBeUndefined();
  });
});
