// Runs in an empty project that installed Baton's packed tarballs (apps/deploy/src/
// packed-packages.serial.int.spec.ts copies it there). Plain `node`, no custom conditions: every import
// below resolves through the installed packages' `exports` to their dist, as in a user's project.
//
// It runs one workflow to completion on NATS + Redis and one on NATS + Postgres, then prints one
// JSON line for the spec to check. Servers and the prefix come from the environment.
import { defineActivity, defineWorkflow } from '@baton/core';
import { Client } from '@baton/client';
import { Worker } from '@baton/worker';
import { natsTransport } from '@baton/transport-nats';
import { kafkaTransport } from '@baton/transport-kafka';
import { redisStore } from '@baton/store-redis';
import { postgresStore } from '@baton/store-postgres';
import { METRIC } from '@baton/telemetry';
import { severableStore } from '@baton/testing/severable';
import { natsTestUrl } from '@baton/testing/servers';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; the spec passes it`);
  return value;
};
const prefix = env('SMOKE_PREFIX');

const double = defineActivity({
  name: 'double',
  run: async (input) => ({ doubled: input.n * 2 }),
});

const packedSmoke = defineWorkflow({
  name: 'packed_smoke',
  version: 1,
  run: async (ctx, input) => {
    const first = await ctx.run(double, { n: input.n });
    const second = await ctx.run(double, { n: first.doubled });
    return { n: input.n, quadrupled: second.doubled, runId: ctx.runId };
  },
});

/** Starts a worker and a client on the pair, runs one workflow, stops everything. */
async function runOnce(label, transport, store) {
  const worker = new Worker({ transport, store, workflows: [packedSmoke], leaseMs: 2_000, fetchWaitMs: 100 });
  await worker.start();
  try {
    const client = new Client({ transport, store });
    const handle = await client.start(packedSmoke, { n: 21 }, { idempotencyKey: `${label}-1` });
    const result = await handle.result({ timeoutMs: 30_000 });
    const description = await client.describe(handle.runId);
    return { result, status: description.status };
  } finally {
    await worker.stop();
    await Promise.allSettled([transport.close(), store.close()]);
  }
}

const natsUrl = env('SMOKE_NATS_URL');
const runs = {
  'nats+redis': await runOnce(
    'nats-redis',
    natsTransport({ servers: natsUrl, prefix: `${prefix}-r` }),
    redisStore({ url: env('SMOKE_REDIS_URL'), keyPrefix: `${prefix}:` }),
  ),
  'nats+postgres': await runOnce(
    'nats-postgres',
    natsTransport({ servers: natsUrl, prefix: `${prefix}-p` }),
    postgresStore({ url: env('SMOKE_POSTGRES_URL'), schema: prefix.replace(/-/g, '_') }),
  ),
};

// The packages this script does not run a workflow on still load and export what they promise.
const loaded = {
  kafkaTransport: typeof kafkaTransport,
  METRIC: typeof METRIC,
  severableStore: typeof severableStore,
  natsTestUrl: typeof natsTestUrl,
  testingMain: import.meta.resolve('@baton/testing'),
};

console.log(JSON.stringify({ runs, loaded }));
