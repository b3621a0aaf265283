import { describe, expect, it } from 'vitest';
import { redisTransport, resolveRedisTransportOptions } from './index.js';
import { serverSettings } from './connection.js';

const CONFIG = { name: 'ConfigError', code: 'BATON_CONFIG' };

describe('redis transport options', () => {
  it('resolves defaults: local server, baton-bus prefix, 30 s ack wait, stalled check at half of it', () => {
    expect(resolveRedisTransportOptions()).toEqual({
      url: 'redis://127.0.0.1:6379',
      displayUrl: 'redis://127.0.0.1:6379',
      server: {
        kind: 'direct',
        host: '127.0.0.1',
        port: 6379,
        db: 0,
        username: undefined,
        password: undefined,
        tls: false,
      },
      prefix: 'baton-bus',
      ackWaitMs: 30_000,
      pollMs: 50,
      priorityLanes: false,
      duplicateWindowMs: 120_000,
      connectTimeoutMs: 5_000,
      requestTimeoutMs: 5_000,
      waitReplicas: 0,
      waitTimeoutMs: 1_000,
      stalledIntervalMs: 15_000,
    });
  });

  it('masks the password in messages and hands the decoded parts to the client', () => {
    const resolved = resolveRedisTransportOptions({ url: 'rediss://app:p%40ss@redis.internal:6380/2' });
    expect(resolved.displayUrl).toBe('rediss://app:***@redis.internal:6380/2');
    expect(serverSettings(resolved)).toMatchObject({
      host: 'redis.internal',
      port: 6380,
      db: 2,
      username: 'app',
      password: 'p@ss',
      tls: {},
    });
  });

  it('finds the primary through Sentinel with a redis+sentinel:// URL, guarding appends by default', () => {
    const resolved = resolveRedisTransportOptions({
      url: 'rediss+sentinel://app:p%40ss@s1:26379,s2:26380/orders/3',
      sentinelPassword: 'sentinel-secret',
    });
    expect(resolved.displayUrl).toBe('rediss+sentinel://app:***@s1:26379,s2:26380/orders/3');
    expect(resolved.waitReplicas).toBe(1);
    expect(serverSettings(resolved)).toMatchObject({
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
      ],
      name: 'orders',
      role: 'master',
      db: 3,
      username: 'app',
      password: 'p@ss',
      sentinelPassword: 'sentinel-secret',
      enableTLSForSentinelMode: true,
      failoverDetector: true,
    });
    expect(
      resolveRedisTransportOptions({ url: 'redis+sentinel://s1:26379/m', waitReplicas: 0 }).waitReplicas,
    ).toBe(0);
    expect(() => redisTransport({ url: 'redis+sentinel://s1/orders' })).toThrow(
      /redisTransport: url 'redis\+sentinel:\/\/s1\/orders' is not a valid Redis Sentinel URL: sentinel 's1' is not host:port/,
    );
    expect(() => redisTransport({ url: 'redis://h:6379', sentinelPassword: 'x' })).toThrow(
      /sentinelPassword is set but url "redis:\/\/h:6379" is not a redis\+sentinel:\/\/ URL/,
    );
  });

  it('refuses a URL of another scheme, naming it and the schemes it takes, without the password', () => {
    expect(() => redisTransport({ url: 'nats://u:secret@nats:4222' })).toThrow(
      /url "nats:\/\/u:\*\*\*@nats:4222" has scheme 'nats:'; the Redis transport takes redis:\/\/, rediss:\/\/, redis\+sentinel:\/\/ or rediss\+sentinel:\/\//,
    );
    expect(() => redisTransport({ url: 'redis://host:6379/zero' })).toThrow(
      /the path is the database number/,
    );
    expect(() => redisTransport({ url: 'not a url' })).toThrow(expect.objectContaining(CONFIG));
  });

  it('refuses a prefix that could not start a key safely, naming it', () => {
    for (const prefix of ['', 'a:b', 'a*', 'x'.repeat(65)]) {
      expect(() => redisTransport({ prefix })).toThrow(expect.objectContaining(CONFIG));
    }
    expect(() => redisTransport({ prefix: 'a*' })).toThrow(/prefix "a\*" is not allowed/);
    expect(resolveRedisTransportOptions({ prefix: 'team_a-1' }).prefix).toBe('team_a-1');
  });

  it('refuses durations that are not whole numbers or too small, and a poll period not below the ack wait', () => {
    expect(() => redisTransport({ ackWaitMs: 99 })).toThrow(
      /ackWaitMs must be a whole number of at least 100, got 99/,
    );
    expect(() => redisTransport({ requestTimeoutMs: 1.5 })).toThrow(/requestTimeoutMs/);
    expect(() => redisTransport({ ackWaitMs: 1_000, pollMs: 1_000 })).toThrow(
      /pollMs \(1000\) must be below ackWaitMs \(1000\)/,
    );
    expect(resolveRedisTransportOptions({ ackWaitMs: 1_000 }).stalledIntervalMs).toBe(500);
  });
});
