import { describe, expect, it } from 'vitest';
import { BatonError } from '@baton/core';
import {
  type BackendError,
  BackendAuthError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  FencedWriteError,
} from '@baton/core/adapter';
import { refusedCommand, toStoreError } from './errors.js';

const where = { url: 'redis://u:***@127.0.0.1:6379', operation: 'leases.acquire' };

function replyError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe('redis store errors', () => {
  it('passes Baton errors through unchanged', () => {
    const fenced = new FencedWriteError('r', 1, 'checkpoints.write');
    expect(toStoreError(fenced, where)).toBe(fenced);
  });

  it('names the refused command of a NOPERM reply and how to grant it', () => {
    const cause = replyError("NOPERM this user has no permissions to run the 'evalsha' command");
    const err = toStoreError(cause, where);
    expect(err).toMatchObject({
      name: 'RedisPermissionError',
      code: 'BATON_REDIS_PERMISSION',
      backend: 'redis',
      resource: 'evalsha',
    });
    expect(err).toBeInstanceOf(BackendPermissionError);
    expect(err.message).toContain('+evalsha');
    expect(err.cause).toBe(cause);
    expect(refusedCommand("NOPERM this user has no permissions to run the 'client|list' command")).toBe(
      'client|list',
    );
  });

  it('explains a command refused inside a script', () => {
    const err = toStoreError(
      replyError("ERR The user executing the script can't run this command or subcommand script: abc"),
      where,
    );
    expect(err).toMatchObject({ code: 'BATON_REDIS_PERMISSION' });
    expect(err.message).toMatch(/README lists/);
  });

  it('reports refused credentials as not retryable', () => {
    const err = toStoreError(
      replyError('WRONGPASS invalid username-password pair or user is disabled.'),
      where,
    );
    expect(err).toMatchObject({ name: 'RedisAuthError', code: 'BATON_REDIS_AUTH', retryable: false });
    expect(err.message).toContain('redis://u:***@127.0.0.1:6379');
  });

  it('reports a dropped or refused connection as retryable', () => {
    for (const cause of [
      replyError('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'),
      replyError('Connection is closed.'),
      replyError('Reached the max retries per request limit (which is 0).'),
    ]) {
      expect(toStoreError(cause, where)).toMatchObject({
        name: 'RedisUnavailableError',
        code: 'BATON_REDIS_UNAVAILABLE',
        retryable: true,
      });
    }
  });

  it('maps every error it is given to a category, under the name and code the store always used', () => {
    const fixtures: [unknown, abstract new (...args: never[]) => BackendError, string, string][] = [
      [
        replyError('WRONGPASS invalid username-password pair'),
        BackendAuthError,
        'RedisAuthError',
        'BATON_REDIS_AUTH',
      ],
      [replyError('NOAUTH Authentication required.'), BackendAuthError, 'RedisAuthError', 'BATON_REDIS_AUTH'],
      [
        replyError("NOPERM this user has no permissions to run the 'evalsha' command"),
        BackendPermissionError,
        'RedisPermissionError',
        'BATON_REDIS_PERMISSION',
      ],
      [
        replyError("ERR The user executing the script can't run this command or subcommand script: abc"),
        BackendPermissionError,
        'RedisPermissionError',
        'BATON_REDIS_PERMISSION',
      ],
      [
        replyError('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'),
        BackendUnavailableError,
        'RedisUnavailableError',
        'BATON_REDIS_UNAVAILABLE',
      ],
      [
        replyError('LOADING Redis is loading the dataset in memory'),
        BackendUnavailableError,
        'RedisUnavailableError',
        'BATON_REDIS_UNAVAILABLE',
      ],
      [
        replyError('WRONGTYPE Operation against a key'),
        BackendRequestError,
        'RedisCommandError',
        'BATON_REDIS_COMMAND',
      ],
      ['a thrown string', BackendRequestError, 'RedisCommandError', 'BATON_REDIS_COMMAND'],
    ];
    for (const [thrown, category, name, code] of fixtures) {
      const err = toStoreError(thrown, where);
      expect(err, String(thrown)).toBeInstanceOf(category);
      expect(err).toMatchObject({ name, code, backend: 'redis' });
    }
  });

  it('wraps anything else as a command error that keeps its cause', () => {
    const cause = replyError('WRONGTYPE Operation against a key holding the wrong kind of value');
    const err = toStoreError(cause, where);
    expect(err).toBeInstanceOf(BatonError);
    expect(err).toMatchObject({ name: 'RedisCommandError', code: 'BATON_REDIS_COMMAND', cause });
    expect(err.message).toMatch(
      /^redis store leases\.acquire at redis:\/\/u:\*\*\*@127\.0\.0\.1:6379 failed: WRONGTYPE/,
    );
  });
});
