import { describe, expect, it } from 'vitest';
import { partitionForKey, resolveKafkaOptions } from './index.js';

describe('kafka transport options', () => {
  it('defaults to a local broker and the baton prefix', () => {
    const o = resolveKafkaOptions();
    expect(o.brokers).toEqual(['127.0.0.1:9092']);
    expect(o.prefix).toBe('baton');
    expect(o.partitions).toBe(12);
    expect(o.tls).toBe(false);
    expect(o.sasl).toBeUndefined();
  });

  it('leaves the journal retention to the broker unless given, and refuses a bad one', () => {
    expect(resolveKafkaOptions().journalRetentionMs).toBeUndefined();
    expect(resolveKafkaOptions({ journalRetentionMs: 30 * 86_400_000 }).journalRetentionMs).toBe(
      30 * 86_400_000,
    );
    expect(() => resolveKafkaOptions({ journalRetentionMs: -1 })).toThrow(/journalRetentionMs/);
  });

  it('takes min.insync.replicas up to the replication factor, and refuses more', () => {
    expect(resolveKafkaOptions().minInsyncReplicas).toBeUndefined();
    expect(resolveKafkaOptions({ replicationFactor: 3, minInsyncReplicas: 2 }).minInsyncReplicas).toBe(2);
    expect(() => resolveKafkaOptions({ replicationFactor: 2, minInsyncReplicas: 3 })).toThrow(
      /minInsyncReplicas \(3\) must not exceed replicationFactor \(2\)/,
    );
    expect(() => resolveKafkaOptions({ minInsyncReplicas: 0 })).toThrow(/minInsyncReplicas/);
  });

  it('reads several hosts, credentials and parameters from a URL', () => {
    const o = resolveKafkaOptions({
      brokers: 'kafkas://svc:p%40ss@a:9093,b:9093?sasl=scram-sha-512&prefix=acme&partitions=6',
    });
    expect(o.brokers).toEqual(['a:9093', 'b:9093']);
    expect(o.tls).toBe(true);
    expect(o.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'svc', password: 'p@ss' });
    expect(o.prefix).toBe('acme');
    expect(o.partitions).toBe(6);
    expect(o.displayBrokers).not.toContain('p@ss');
  });

  it('lets explicit options win over the URL', () => {
    const o = resolveKafkaOptions({ brokers: 'kafka://h:1?prefix=url', prefix: 'explicit', partitions: 2 });
    expect(o.prefix).toBe('explicit');
    expect(o.partitions).toBe(2);
  });

  it.each([
    [{ brokers: 'nats://h:4222' }, /scheme nats/],
    [{ brokers: 'kafka://h' }, /not host:port/],
    [{ brokers: 'kafka://user@h:9092' }, /user without a password/],
    [{ brokers: 'kafka://u:p@h:9092?sasl=gssapi' }, /SASL mechanism 'gssapi'/],
    [{ brokers: 'kafka://h:9092?sasl=plain' }, /no credentials/],
    [{ brokers: 'kafka://h:9092?color=blue' }, /unknown URL parameter 'color'/],
    [{ brokers: 'kafka://h:9092?tls=yes' }, /tls=yes/],
    [{ prefix: 'bad prefix' }, /prefix 'bad prefix'/],
    [{ partitions: 0 }, /partitions must be/],
    [{ sessionTimeoutMs: 3_000, heartbeatIntervalMs: 2_000 }, /at most a third/],
    [{ replicationFactor: 0 }, /replicationFactor/],
    [{ brokers: [] }, /brokers is empty/],
  ])('refuses %j with a message naming the problem', (options, message) => {
    expect(() => resolveKafkaOptions(options)).toThrow(message);
  });

  it('never shows a URL password in an error', () => {
    expect(() => resolveKafkaOptions({ brokers: 'kafka://u:secret@h' })).toThrow(/u:\*\*\*@h/);
  });
});

describe('partitionForKey', () => {
  it('is stable and spreads keys over every partition', () => {
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 800; i++) {
      const p = partitionForKey(`run-${i}`, 8);
      expect(p).toBe(partitionForKey(`run-${i}`, 8));
      counts[p]!++;
    }
    expect(Math.min(...counts)).toBeGreaterThan(50);
  });
});
