/**
 * A worker process loads the code of the bus and the store it runs on, and no other adapter's:
 * each registration comes without its client library (AdapterCode), and the tracing SDK and OTLP
 * exporters are imported only when the OTEL_* variables ask for them. Half of a worker's
 * start-up was loading code it never used (docs/performance.md, "Worker start-up").
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, WorkerProcess } from '@baton/testing/crash';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';

const RECORDER = resolve(REPO_ROOT, 'apps/worker/src/loaded-packages.spec-helper.mjs');
/** Workflows that import only @baton/core (the crash suite's write to a Postgres ledger). */
const WORKFLOWS = resolve(REPO_ROOT, 'libs/testing/src/crash/fleet-workflows.ts');
const dir = mkdtempSync(join(tmpdir(), 'baton-start-up-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Packages no worker loads without OTEL_* variables asking for traces or OTLP metrics. */
const TELEMETRY_ON_REQUEST = [
  '@opentelemetry/sdk-node',
  '@opentelemetry/exporter-metrics-otlp-http',
  '@grpc/grpc-js',
];

const PAIRS = [
  {
    name: 'nats+redis',
    bus: natsTestUrl(),
    store: redisTestUrl(),
    loads: ['@nats-io/jetstream', 'ioredis', '@opentelemetry/sdk-metrics'],
    never: ['kafkajs', 'pg', 'bullmq'],
  },
  {
    name: 'kafka+postgres',
    bus: kafkaTestUrl(),
    store: postgresTestUrl(),
    loads: ['kafkajs', 'pg', '@opentelemetry/sdk-metrics'],
    never: ['@nats-io/jetstream', 'ioredis', 'bullmq'],
  },
];

describe('worker start-up', () => {
  it.each(PAIRS)(
    'a worker on $name loads its bus and store and no other adapter',
    { timeout: 60_000 },
    async ({ name, bus, store, loads, never }) => {
      const ns = `su${randomBytes(4).toString('hex')}`;
      const file = join(dir, `${name}.txt`);
      const worker = new WorkerProcess(
        `start-up-${name}`,
        {
          BATON_TRANSPORT_URL: bus,
          BATON_STORE_URL: store,
          ...isolatedEnv('transport', bus, ns),
          ...isolatedEnv('store', store, ns),
          BATON_WORKFLOWS: WORKFLOWS,
          BATON_TEST_LOADED_PACKAGES_FILE: file,
        },
        ['--import', RECORDER],
      );
      try {
        await worker.ready();
        worker.signal('SIGTERM');
        expect((await worker.exited).code).toBe(0);
        const loaded = readFileSync(file, 'utf8').split('\n');
        // What it runs on is there (the recorder sees every package it loads)...
        for (const pkg of loads) expect(loaded, `${pkg} loaded`).toContain(pkg);
        // ...and nothing of the other adapters' or of telemetry nobody asked for.
        for (const pkg of [...never, ...TELEMETRY_ON_REQUEST])
          expect(loaded, `${pkg} not loaded`).not.toContain(pkg);
      } finally {
        worker.signal('SIGKILL');
        await worker.exited;
        await removeIsolated('transport', bus, ns);
        await removeIsolated('store', store, ns);
      }
    },
  );
});
