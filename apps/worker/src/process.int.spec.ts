/**
 * The worker process refuses bad configuration and unreachable servers at start-up: it exits 1
 * with a log line naming the variable or the server, never hangs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteNatsStreams } from '@baton/transport-nats';
import { CRASH_WORKFLOW_MODULE, WorkerProcess } from '@baton/testing/crash';
import { natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { dropPostgresSchema } from '@baton/store-postgres';
import { purgeRedisKeyPrefix } from '@baton/store-redis';
import { BAD_CONFIGURATIONS } from './bad-configurations.spec-helper.js';

/** Its own streams on the shared server, removed afterwards (a start that fails after the bus connected created them). */
const PREFIX = `proc${process.pid}x${Date.now()}`;

const GOOD = {
  BATON_NATS_PREFIX: PREFIX,
  BATON_TRANSPORT_URL: natsTestUrl(),
  BATON_STORE_URL: redisTestUrl(),
  BATON_WORKFLOWS: CRASH_WORKFLOW_MODULE,
};

async function failedStart(env: Record<string, string>): Promise<{ code: number | null; fatal: string }> {
  const worker = new WorkerProcess('misconfigured', env);
  const exit = await worker.exited;
  const fatal = worker.logs
    .filter((l) => l.level >= 60)
    .map((l) => l.msg)
    .join('\n');
  return { code: exit.code, fatal: fatal || worker.describe() };
}

describe('worker process start-up', () => {
  afterAll(() => deleteNatsStreams({ servers: natsTestUrl(), prefix: PREFIX }));

  it('exits 1 naming a missing variable', { timeout: 30_000 }, async () => {
    const { code, fatal } = await failedStart({ ...GOOD, BATON_STORE_URL: '' });
    expect(code).toBe(1);
    expect(fatal).toMatch(/BATON_STORE_URL is not set/);
  });

  // The variables the adapters and the Worker check (not readConfig): once, each, in a real process.
  const checkedByAdapters = new Set([
    'BATON_HEARTBEAT_MS',
    'BATON_NATS_PREFIX',
    'BATON_KAFKA_PREFIX',
    'BATON_KAFKA_SASL_MECHANISM',
    'BATON_POSTGRES_SCHEMA',
    'BATON_PAYLOAD_REF_BUCKET',
  ]);
  it.each(
    BAD_CONFIGURATIONS.filter((row) => checkedByAdapters.has(row.variable)).map(
      (r) => [r.variable, r] as const,
    ),
  )(
    'exits 1 with one fatal line naming %s, its value and what is expected',
    { timeout: 30_000 },
    async (_name, row) => {
      const worker = new WorkerProcess('misconfigured', { ...GOOD, BATON_HTTP_PORT: '0', ...row.env });
      const exit = await worker.exited;
      const fatal = worker.logs.filter((l) => l.level >= 60).map((l) => l.msg);
      expect(exit.code).toBe(1);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]).toContain(row.variable);
      expect(fatal[0]).toMatch(row.says);
      expect(fatal[0]).not.toMatch(/worker process failed/);
      if (row.hides !== undefined) expect(worker.describe()).not.toContain(row.hides);
    },
  );

  it('exits 1 naming a malformed value', { timeout: 30_000 }, async () => {
    const { code, fatal } = await failedStart({ ...GOOD, BATON_CONCURRENCY: '-3' });
    expect(code).toBe(1);
    expect(fatal).toMatch(/BATON_CONCURRENCY is '-3'/);
  });

  it('exits 1 naming a workflow module that does not load', { timeout: 30_000 }, async () => {
    const { code, fatal } = await failedStart({ ...GOOD, BATON_WORKFLOWS: './no/such/module.js' });
    expect(code).toBe(1);
    expect(fatal).toMatch(/BATON_WORKFLOWS: module '\.\/no\/such\/module\.js' could not be loaded/);
  });

  it('exits 1 naming an unreachable bus instead of hanging', { timeout: 60_000 }, async () => {
    const { code, fatal } = await failedStart({ ...GOOD, BATON_TRANSPORT_URL: 'nats://127.0.0.1:1' });
    expect(code).toBe(1);
    expect(fatal).toMatch(/127\.0\.0\.1:1/);
  });

  it('exits 1 naming an unreachable store instead of hanging', { timeout: 60_000 }, async () => {
    const { code, fatal } = await failedStart({ ...GOOD, BATON_STORE_URL: 'redis://127.0.0.1:1' });
    expect(code).toBe(1);
    expect(fatal).toMatch(/127\.0\.0\.1:1/);
  });

  it('exits 1 naming BATON_HTTP_PORT when its port is taken', { timeout: 30_000 }, async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as AddressInfo).port);
      const { code, fatal } = await failedStart({
        ...GOOD,
        BATON_HTTP_HOST: '127.0.0.1',
        BATON_HTTP_PORT: port,
      });
      expect(code).toBe(1);
      expect(fatal).toMatch(new RegExp(`cannot serve /healthz on 127\\.0\\.0\\.1:${port}.*BATON_HTTP_PORT`));
    } finally {
      taken.close();
    }
  });

  it(
    "logs the bus prefix and the Postgres schema it uses in 'worker ready', and no password",
    {
      timeout: 60_000,
    },
    async () => {
      const schema = `${PREFIX}_ready`;
      const url = new URL(postgresTestUrl());
      url.password = 'ready-secret-pw';
      const worker = new WorkerProcess('ready', {
        ...GOOD,
        BATON_HTTP_PORT: '0',
        BATON_STORE_URL: url.toString(),
        BATON_POSTGRES_SCHEMA: schema,
      });
      try {
        await worker.ready();
        const ready = worker.logs.find((l) => l.msg === 'worker ready');
        expect(ready).toMatchObject({ transportPrefix: PREFIX, postgresSchema: schema });
        expect(JSON.stringify(ready)).not.toContain('ready-secret-pw');
      } finally {
        worker.signal('SIGTERM');
        await worker.exited;
        await dropPostgresSchema({ url: postgresTestUrl(), schema }).catch(() => undefined);
      }
    },
  );

  it('logs the Redis key prefix it uses in worker ready', { timeout: 60_000 }, async () => {
    const keyPrefix = `${PREFIX}:ready:`;
    const worker = new WorkerProcess('ready', {
      ...GOOD,
      BATON_HTTP_PORT: '0',
      BATON_REDIS_KEY_PREFIX: keyPrefix,
    });
    try {
      await worker.ready();
      expect(worker.logs.find((l) => l.msg === 'worker ready')).toMatchObject({
        transportPrefix: PREFIX,
        redisKeyPrefix: keyPrefix,
      });
    } finally {
      worker.signal('SIGTERM');
      await worker.exited;
      await purgeRedisKeyPrefix({ url: redisTestUrl(), keyPrefix }).catch(() => undefined);
    }
  });

  it('exits 1 naming a store URL with bad credentials', { timeout: 60_000 }, async () => {
    const { code, fatal } = await failedStart({
      ...GOOD,
      BATON_STORE_URL: 'postgres://nobody_baton@127.0.0.1:5432/test',
    });
    expect(code).toBe(1);
    expect(fatal).toMatch(/nobody_baton/);
  });
});
