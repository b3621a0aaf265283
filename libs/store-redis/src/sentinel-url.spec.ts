import { describe, expect, it } from 'vitest';
import { redisRegistration, redisStore, resolveRedisStoreOptions } from './index.js';

function configError(make: () => unknown): Error {
  try {
    make();
  } catch (err) {
    expect(err).toMatchObject({ name: 'ConfigError', code: 'BATON_CONFIG' });
    return err as Error;
  }
  throw new Error('expected a ConfigError');
}

describe('redis+sentinel:// URLs', () => {
  it("reads the sentinels, the master name, the database and the data nodes' credentials", () => {
    const resolved = resolveRedisStoreOptions({
      url: 'redis+sentinel://app:p%40ss@10.0.0.1:26379,sentinel-b:26380,[::1]:26381/orders/2',
    });
    expect(resolved).toMatchObject({
      displayUrl: 'redis+sentinel://app:***@10.0.0.1:26379,sentinel-b:26380,[::1]:26381/orders/2',
      db: 2,
      username: 'app',
      password: 'p@ss',
      tls: undefined,
      sentinel: {
        masterName: 'orders',
        password: undefined,
        sentinels: [
          { host: '10.0.0.1', port: 26379 },
          { host: 'sentinel-b', port: 26380 },
          { host: '::1', port: 26381 },
        ],
      },
    });
  });

  it('turns the replication guard on by default (one replica, 1 s) and lets options tune it', () => {
    const url = 'redis+sentinel://127.0.0.1:26380/baton';
    expect(resolveRedisStoreOptions({ url })).toMatchObject({ waitReplicas: 1, waitTimeoutMs: 1_000, db: 0 });
    expect(resolveRedisStoreOptions({ url, waitReplicas: 0 })).toMatchObject({ waitReplicas: 0 });
    expect(
      resolveRedisStoreOptions({ url: 'redis://127.0.0.1', waitReplicas: 2, waitTimeoutMs: 50 }),
    ).toMatchObject({
      waitReplicas: 2,
      waitTimeoutMs: 50,
    });
  });

  it("rediss+sentinel:// turns TLS on; sentinelPassword is the sentinels' own", () => {
    expect(
      resolveRedisStoreOptions({ url: 'rediss+sentinel://h:26379/m', sentinelPassword: 's3cret' }),
    ).toMatchObject({ tls: {}, sentinel: { password: 's3cret', masterName: 'm' } });
  });

  it.each([
    ['redis+sentinel://', 'names no sentinel'],
    ['redis+sentinel://h:26379', 'names no master'],
    ['redis+sentinel://h:26379/', 'names no master'],
    ['redis+sentinel://h/m', "sentinel 'h' is not host:port"],
    ['redis+sentinel://h:26379,,g:1/m', "sentinel '' is not host:port"],
    ['redis+sentinel://h:99999/m', 'outside 1-65535'],
    ['redis+sentinel://h:26379/m/x', "'x' is not a database number"],
    ['redis+sentinel://h:26379/m/1/2', 'more than a master name'],
    ['redis+sentinel://h:26379/m?db=1', 'query strings'],
  ])('rejects %s, saying what is wrong and the expected form', (url, reason) => {
    const err = configError(() => redisStore({ url }));
    expect(err.message).toContain(reason);
    expect(err.message).toContain('expected redis+sentinel://');
  });

  it('masks the password of a malformed Sentinel URL', () => {
    const err = configError(() => redisStore({ url: 'redis+sentinel://app:hunter2@h/m' }));
    expect(err.message).not.toContain('hunter2');
    expect(err.message).toContain('app:***@');
  });

  it('refuses a sentinelPassword without a Sentinel URL, and a negative waitReplicas', () => {
    expect(configError(() => redisStore({ url: 'redis://h', sentinelPassword: 'x' })).message).toContain(
      'not a redis+sentinel:// URL',
    );
    expect(configError(() => redisStore({ waitReplicas: -1 })).message).toContain('waitReplicas is -1');
    expect(configError(() => redisStore({ waitTimeoutMs: 0 })).message).toContain('waitTimeoutMs is 0');
  });

  it("is served by the worker process's registration, with its variables", () => {
    expect(redisRegistration.schemes).toContain('redis+sentinel');
    expect(redisRegistration.schemes).toContain('rediss+sentinel');
    expect(redisRegistration.variables.waitReplicas.parse('2', 'BATON_REDIS_WAIT_REPLICAS')).toBe(2);
    expect(() => redisRegistration.variables.waitTimeoutMs.parse('0', 'BATON_REDIS_WAIT_TIMEOUT_MS')).toThrow(
      /BATON_REDIS_WAIT_TIMEOUT_MS/,
    );
  });
});
