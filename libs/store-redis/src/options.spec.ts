import { describe, expect, it } from 'vitest';
import { DEFAULT_CONNECT_TIMEOUT_MS, maskUrl, redisStore, resolveRedisStoreOptions } from './index.js';

const CONFIG = { name: 'ConfigError', code: 'BATON_CONFIG' };

function configError(make: () => unknown): Error {
  try {
    make();
  } catch (err) {
    expect(err).toMatchObject(CONFIG);
    return err as Error;
  }
  throw new Error('expected a ConfigError');
}

describe('redis store options', () => {
  it('resolves defaults: local Redis, baton: prefix, 5 s connect timeout, no TLS', () => {
    expect(resolveRedisStoreOptions()).toEqual({
      displayUrl: 'redis://127.0.0.1:6379',
      host: '127.0.0.1',
      port: 6379,
      db: 0,
      username: undefined,
      password: undefined,
      tls: undefined,
      keyPrefix: 'baton:',
      connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
      presenceGraceMs: 5_000,
      sentinel: undefined,
      waitReplicas: 0,
      waitTimeoutMs: 1_000,
    });
  });

  it('reads user, password and database from the URL; rediss:// turns TLS on', () => {
    const resolved = resolveRedisStoreOptions({ url: 'rediss://app:p%40ss@redis.internal:6380/3' });
    expect(resolved).toMatchObject({
      displayUrl: 'rediss://app:***@redis.internal:6380/3',
      host: 'redis.internal',
      port: 6380,
      db: 3,
      username: 'app',
      password: 'p@ss',
      tls: {},
    });
  });

  it('lets the username and password options override the URL, and tls options turn TLS on', () => {
    const resolved = resolveRedisStoreOptions({
      url: 'redis://app:old@127.0.0.1',
      username: 'ops',
      password: 'new',
      tls: { servername: 'redis.internal' },
    });
    expect(resolved).toMatchObject({
      username: 'ops',
      password: 'new',
      tls: { servername: 'redis.internal' },
    });
  });

  it('rejects a malformed URL, naming it with the password masked and the expected form', () => {
    const err = configError(() => redisStore({ url: 'redis://app:hunter2@:6379/x y' }));
    expect(err.message).toContain("'redis://app:***@:6379/x y'");
    expect(err.message).toContain('redis://[user:password@]host[:port][/db]');
    expect(err.message).not.toContain('hunter2');
  });

  it('rejects URLs of another scheme, with a path that is no database, or with a query', () => {
    expect(configError(() => redisStore({ url: 'http://127.0.0.1:6379' })).message).toMatch(
      /url 'http:\/\/127\.0\.0\.1:6379'.*scheme is 'http'/,
    );
    expect(configError(() => redisStore({ url: 'redis://127.0.0.1/cache' })).message).toMatch(
      /'\/cache' is not a database number/,
    );
    expect(configError(() => redisStore({ url: 'redis://127.0.0.1?db=2' })).message).toMatch(/query/);
    expect(configError(() => redisStore({ url: 'localhost:6379' })).message).toMatch(/scheme is 'localhost'/);
  });

  it('rejects a bad option, naming it and the fix', () => {
    expect(configError(() => redisStore({ connectTimeoutMs: 0 })).message).toMatch(
      /connectTimeoutMs is 0; use a positive whole number/,
    );
    expect(configError(() => redisStore({ presenceGraceMs: -1 })).message).toMatch(
      /presenceGraceMs is -1; use a non-negative whole number/,
    );
    expect(configError(() => redisStore({ keyPrefix: '' })).message).toMatch(/keyPrefix is empty/);
    expect(
      configError(() => redisStore({ keyprefix: 'x:' } as Parameters<typeof redisStore>[0])).message,
    ).toMatch(/unknown option 'keyprefix'; the options are url, keyPrefix/);
    expect(
      configError(() => redisStore({ password: 42 } as unknown as Parameters<typeof redisStore>[0])).message,
    ).toBe('redisStore: password must be a string, got number');
    expect(
      configError(() => redisStore({ tls: true } as unknown as Parameters<typeof redisStore>[0])).message,
    ).toMatch(/tls must be an object/);
  });

  it('masks passwords, even in URLs no parser accepts', () => {
    expect(maskUrl('redis://u:secret@host:6379/0')).toBe('redis://u:***@host:6379/0');
    expect(maskUrl('redis://:secret@host')).toBe('redis://:***@host');
    expect(maskUrl('redis://u:se#c@r/et@host')).toBe('redis://u:***@host');
    expect(maskUrl('redis://user@host')).toBe('redis://user@host');
    expect(maskUrl('redis://host:6379')).toBe('redis://host:6379');
  });
});
