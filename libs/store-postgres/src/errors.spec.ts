import { describe, expect, it } from 'vitest';

import {
  type BackendError,
  BackendAuthError,
  BackendNotDurableError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  FencedWriteError,
} from '@baton/core/adapter';
import { connectError, operationError, pgError } from './errors.js';
import { resolvePostgresStoreOptions } from './options.js';
import { presenceConflict } from './presence-connection.js';

const options = resolvePostgresStoreOptions({ url: 'postgres://baton:secret@db:5432/app' });

/** A pg error as the driver throws it: the SQLSTATE (or socket code) as `code`. */
function pgFailure(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

type Fixture = [Error, abstract new (...args: never[]) => BackendError, string, boolean];

describe('postgres store errors', () => {
  it('pass BatonErrors through unchanged', () => {
    const fenced = new FencedWriteError('r', 1, 'checkpoints.write');
    expect(connectError(fenced, options)).toBe(fenced);
    expect(operationError('runs.finish', fenced, options)).toBe(fenced);
  });

  it('map every failure to connect to a category, named PostgresStoreError as before', () => {
    const fixtures: Fixture[] = [
      [
        pgFailure('connect ECONNREFUSED 10.0.0.1:5432', 'ECONNREFUSED'),
        BackendUnavailableError,
        'BATON_PG_UNREACHABLE',
        true,
      ],
      [
        pgFailure('Connection terminated due to connection timeout'),
        BackendUnavailableError,
        'BATON_PG_UNREACHABLE',
        true,
      ],
      [
        pgFailure('password authentication failed for user "baton"', '28P01'),
        BackendAuthError,
        'BATON_PG_AUTH_FAILED',
        false,
      ],
      [pgFailure('role "baton" does not exist', '28000'), BackendAuthError, 'BATON_PG_UNKNOWN_ROLE', false],
      [
        pgFailure('permission denied for database app', '42501'),
        BackendPermissionError,
        'BATON_PG_PRIVILEGES',
        false,
      ],
      [
        pgFailure('database "app" does not exist', '3D000'),
        BackendRequestError,
        'BATON_PG_UNKNOWN_DATABASE',
        false,
      ],
      [pgFailure('The server does not support SSL connections'), BackendRequestError, 'BATON_PG_TLS', false],
      [
        pgFailure('too many connections for role "baton"', '53300'),
        BackendRequestError,
        'BATON_PG_CONNECT',
        false,
      ],
    ];
    for (const [thrown, category, code, retryable] of fixtures) {
      const err = connectError(thrown, options);
      expect(err, thrown.message).toBeInstanceOf(category);
      expect(err).toMatchObject({
        name: 'PostgresStoreError',
        code,
        retryable,
        backend: 'postgres',
        cause: thrown,
      });
      expect(err.message).toContain('postgres store at postgres://baton:***@db:5432/app');
      expect(err.message).not.toContain('secret');
    }
  });

  it('map every failed operation to a category: a lost connection is unavailable, keeping its code', () => {
    const fixtures: Fixture[] = [
      [pgFailure('Connection terminated unexpectedly'), BackendUnavailableError, 'BATON_PG_QUERY', true],
      [
        pgFailure('terminating connection due to administrator command', '57P01'),
        BackendUnavailableError,
        'BATON_PG_QUERY',
        true,
      ],
      [pgFailure('deadlock detected', '40P01'), BackendRequestError, 'BATON_PG_QUERY', true],
      [
        pgFailure('canceling statement due to statement timeout', '57014'),
        BackendRequestError,
        'BATON_PG_QUERY',
        true,
      ],
      [
        pgFailure('duplicate key value violates unique constraint', '23505'),
        BackendRequestError,
        'BATON_PG_QUERY',
        false,
      ],
      [
        pgFailure('permission denied for table runs', '42501'),
        BackendPermissionError,
        'BATON_PG_PRIVILEGES',
        false,
      ],
    ];
    for (const [thrown, category, code, retryable] of fixtures) {
      const err = operationError('runs.finish', thrown, options);
      expect(err, thrown.message).toBeInstanceOf(category);
      expect(err).toMatchObject({ name: 'PostgresStoreError', code, retryable, backend: 'postgres' });
    }
    expect(operationError('runs.finish', pgFailure('deadlock detected', '40P01'), options).message).toBe(
      'postgres store: runs.finish failed: deadlock detected (SQLSTATE 40P01)',
    );
  });

  it('make the refusals it raises itself in their categories, under the names they had', () => {
    expect(pgError('notSynchronous', 'no standby')).toBeInstanceOf(BackendNotDurableError);
    expect(pgError('notSynchronous', 'no standby')).toMatchObject({
      name: 'PostgresStoreError',
      code: 'BATON_PG_NOT_SYNCHRONOUS',
      retryable: false,
    });
    expect(presenceConflict('w-1', 500)).toMatchObject({
      name: 'PresenceConflictError',
      code: 'BATON_PG_PRESENCE_CONFLICT',
      retryable: true,
      backend: 'postgres',
    });
  });
});
