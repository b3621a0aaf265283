import { describe, expect, it } from 'vitest';

import {
  type BackendError,
  BackendAuthError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  JournalConflictError,
} from '@baton/core/adapter';
import { timedOut, toRedisTransportError } from './errors.js';

const context = { url: 'redis://u:***@127.0.0.1:6379', operation: 'append' };

function replyError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe('toRedisTransportError', () => {
  it('passes BatonErrors through unchanged', () => {
    const conflict = new JournalConflictError('r', 1, 2);
    expect(toRedisTransportError(conflict, context)).toBe(conflict);
  });

  it('tells a refused login from a refused command, both under the code they always had', () => {
    const login = toRedisTransportError(replyError('WRONGPASS invalid username-password pair'), context);
    expect(login).toBeInstanceOf(BackendAuthError);
    expect(login).toMatchObject({ name: 'RedisTransportAuthError', code: 'BATON_REDIS_TRANSPORT_AUTH' });
    expect(login.message).toBe(
      "redis transport: append on redis://u:***@127.0.0.1:6379 was refused: WRONGPASS invalid username-password pair; check the user and password in the URL and the ACL user's permissions (docs/redis-only.md)",
    );
    const command = toRedisTransportError(
      replyError("NOPERM User baton has no permissions to run the 'xadd' command"),
      context,
    );
    expect(command).toBeInstanceOf(BackendPermissionError);
    expect(command).toMatchObject({
      name: 'RedisTransportAuthError',
      code: 'BATON_REDIS_TRANSPORT_AUTH',
      retryable: false,
      resource: 'xadd',
    });
  });

  it('maps every error it is given to a category, under the name and code the transport always used', () => {
    const fixtures: [unknown, abstract new (...args: never[]) => BackendError, string, string, boolean][] = [
      [
        replyError('NOAUTH Authentication required.'),
        BackendAuthError,
        'RedisTransportAuthError',
        'BATON_REDIS_TRANSPORT_AUTH',
        false,
      ],
      [
        replyError("NOPERM this user has no permissions to run the 'evalsha' command"),
        BackendPermissionError,
        'RedisTransportAuthError',
        'BATON_REDIS_TRANSPORT_AUTH',
        false,
      ],
      [
        replyError('connect ECONNREFUSED 127.0.0.1:6379', 'ECONNREFUSED'),
        BackendUnavailableError,
        'RedisTransportUnavailableError',
        'BATON_REDIS_TRANSPORT_UNAVAILABLE',
        true,
      ],
      [
        replyError('Connection is closed.'),
        BackendUnavailableError,
        'RedisTransportUnavailableError',
        'BATON_REDIS_TRANSPORT_UNAVAILABLE',
        true,
      ],
      [
        replyError("READONLY You can't write against a read only replica."),
        BackendUnavailableError,
        'RedisTransportUnavailableError',
        'BATON_REDIS_TRANSPORT_UNAVAILABLE',
        true,
      ],
      [
        replyError('WRONGTYPE Operation against a key holding the wrong kind of value'),
        BackendRequestError,
        'RedisTransportCommandError',
        'BATON_REDIS_TRANSPORT_COMMAND',
        false,
      ],
      [
        'a thrown string',
        BackendRequestError,
        'RedisTransportCommandError',
        'BATON_REDIS_TRANSPORT_COMMAND',
        false,
      ],
    ];
    for (const [thrown, category, name, code, retryable] of fixtures) {
      const err = toRedisTransportError(thrown, context);
      expect(err, String(thrown)).toBeInstanceOf(category);
      expect(err).toMatchObject({ name, code, retryable, backend: 'redis' });
    }
  });

  it('reports an operation without an answer as unavailable', () => {
    const err = timedOut(context, 5_000);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect(err).toMatchObject({ name: 'RedisTransportUnavailableError', retryable: true });
    expect(err.message).toContain('got no answer within 5000 ms (requestTimeoutMs)');
  });
});
