/**
 * The bench's server probes on real, private servers (never the shared ones, whose load is
 * everyone's): the counters a window reports are exactly the work done in it, the CPU is read
 * from the server's processes, and the servers are found by their ports. Speed is measured by
 * `npm run bench`, never asserted here.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { freePort, startPrivateNats, startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import { BenchServers } from './bench-servers.js';
import {
  privatePostgresUnavailable,
  startPrivatePostgres,
  type PrivatePostgres,
} from './private-postgres.js';
import { listenerPid } from './proc-stat.js';
import {
  natsServerProbe,
  postgresServerProbe,
  redisServerProbe,
  ServerWindowMeter,
} from './server-probes.js';

const started: Array<PrivateServer | PrivatePostgres> = [];
afterAll(async () => {
  await Promise.allSettled(started.map((s) => ('dispose' in s ? s.dispose() : s.stop())));
});

const postgresMissing = await privatePostgresUnavailable();

describe('server probes (private servers)', () => {
  it("counts a Redis window's commands exactly and reads the server's CPU two ways", async () => {
    const server = await startPrivateRedis(['--appendonly', 'no']);
    started.push(server);
    // The process found by its port is the one the bench started.
    expect(await listenerPid(server.port)).toBe(server.pid());
    const probe = redisServerProbe({ url: server.url, private: true, pid: server.pid() });
    const redis = new Redis(server.url);
    try {
      const meter = await ServerWindowMeter.begin([{ role: 'store', probe }]);
      for (let i = 0; i < 500; i++) await redis.set(`k${i}`, 'v');
      await meter.end();
      const [window] = meter.windows(100);
      expect(window!.counters.commands).toBe(500);
      expect(window!.perStep.commands).toBe(5);
      expect(window).toMatchObject({
        role: 'store',
        server: 'redis',
        private: true,
        processes: 1,
        unreadable: null,
      });
      expect(Number.isFinite(window!.cpuSeconds)).toBe(true);
      expect(window!.cpuSeconds).toBeGreaterThanOrEqual(0);
      expect(window!.counters.infoCpuSeconds).toBeGreaterThan(0);
      expect(window!.backgroundCpuPerSecond).toBeNull();
    } finally {
      redis.disconnect();
      await probe.close();
    }
  });

  it('reads a nats-server’s messages from its monitoring port', async () => {
    const monitorPort = await freePort();
    const server = await startPrivateNats(['-m', String(monitorPort)]);
    started.push(server);
    const probe = natsServerProbe({
      url: server.url,
      private: true,
      pid: server.pid(),
      monitorUrl: `http://127.0.0.1:${monitorPort}`,
    });
    const nc = await connect({ servers: server.url });
    try {
      const before = await probe.read();
      for (let i = 0; i < 50; i++) nc.publish('bench.probe', 'x');
      await nc.flush();
      const after = await probe.read();
      expect(after.counters.msgsIn! - before.counters.msgsIn!).toBe(50);
      expect(after.processes).toBe(1);
      expect(after.cpuSeconds).toBeGreaterThanOrEqual(before.cpuSeconds);
    } finally {
      await nc.close();
    }
  });

  it.skipIf(postgresMissing !== undefined)(
    "counts PostgreSQL's write transactions and WAL exactly, and sums the cluster's processes",
    async () => {
      const postgres = await startPrivatePostgres({ database: 'probe', label: 'probe' });
      started.push(postgres);
      const probe = postgresServerProbe({
        url: postgres.storeUrl,
        private: true,
        pid: postgres.pid(),
        adminUrl: postgres.adminUrl,
        database: postgres.storeDatabase,
      });
      try {
        const before = await probe.read();
        // A connection opened and closed within the window: its backend's CPU moves to the postmaster.
        const client = new pg.Client({ connectionString: postgres.storeUrl });
        await client.connect();
        await client.query('CREATE TABLE t (v text)');
        for (let i = 0; i < 20; i++) await client.query('INSERT INTO t VALUES ($1)', ['x'.repeat(100)]);
        // Reads are given no transaction id.
        for (let i = 0; i < 5; i++) await client.query('SELECT count(*) FROM t');
        await client.end();
        const after = await probe.read();
        expect(after.counters.transactions! - before.counters.transactions!).toBe(21);
        expect(after.counters.walBytes! - before.counters.walBytes!).toBeGreaterThan(20 * 100);
        // The postmaster, its background processes and the probe's backend at least.
        expect(after.processes).toBeGreaterThanOrEqual(4);
        expect(after.cpuSeconds).toBeGreaterThanOrEqual(before.cpuSeconds);
      } finally {
        await probe.close();
      }
    },
    60_000,
  );

  it('starts private servers, and makes one Redis the bus and the store of the Redis pair', async () => {
    const shared = {
      natsUrl: 'nats://127.0.0.1:1',
      redisUrl: 'redis://127.0.0.1:1',
      postgresUrl: 'postgres://postgres@127.0.0.1:1/test',
      kafkaUrl: 'kafka://127.0.0.1:1',
    };
    const servers = await BenchServers.start({
      mode: 'private',
      kinds: ['redis', 'nats'],
      shared,
      log: () => {},
    });
    try {
      expect(servers.info.map((s) => [s.kind, s.private])).toEqual([
        ['redis', true],
        ['nats', true],
      ]);
      expect(servers.urls.redisUrl).not.toBe(shared.redisUrl);
      expect(servers.urls.postgresUrl).toBe(shared.postgresUrl);
      expect(servers.measured('redis', 'redis').map((m) => m.role)).toEqual(['bus+store']);
      expect(servers.measured('nats', 'redis').map((m) => [m.role, m.probe.kind])).toEqual([
        ['bus', 'nats'],
        ['store', 'redis'],
      ]);
      const redis = new Redis(servers.urls.redisUrl);
      expect(await redis.ping()).toBe('PONG');
      redis.disconnect();
    } finally {
      await servers.stop();
    }
  });
});
