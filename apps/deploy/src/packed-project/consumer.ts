/**
 * Type-checked inside the empty project that installed the packed tarballs (see
 * packed-packages.serial.int.spec.ts): a TypeScript user's view of the packages' declarations, resolved
 * through their `exports` `types` conditions. Never run.
 */
import { defineActivity, defineWorkflow } from '@baton/core';
import { Client } from '@baton/client';
import { Worker } from '@baton/worker';
import { natsTransport } from '@baton/transport-nats';
import { redisStore } from '@baton/store-redis';
import { postgresStore } from '@baton/store-postgres';
import { kafkaTransport } from '@baton/transport-kafka';
import { METRIC } from '@baton/telemetry';
import { natsTestUrl } from '@baton/testing/servers';
import { startConsole, type ConsoleServer } from '@baton/console';

const double = defineActivity({
  name: 'double',
  run: async (input: { n: number }) => ({ doubled: input.n * 2 }),
});

export const doubling = defineWorkflow({
  name: 'doubling',
  version: 1,
  run: async (ctx, input: { n: number }) => (await ctx.run(double, input)).doubled,
});

export const worker = new Worker({
  transport: natsTransport({ servers: natsTestUrl(), prefix: 'typed' }),
  store: redisStore({ url: 'redis://127.0.0.1:6379' }),
  workflows: [doubling],
});
export const client = new Client({
  transport: kafkaTransport({ brokers: ['127.0.0.1:9092'] }),
  store: postgresStore({ url: 'postgres://postgres@127.0.0.1:5432/test' }),
});
export const metricNames: string[] = Object.values(METRIC);
// The console and the HTTP API embedded in one's own process, over the client above.
export const server: Promise<ConsoleServer> = startConsole({ client, options: { port: 0 }, api: {} });

// The declarations are real types, not `any`: a wrong option type fails to compile.
// @ts-expect-error servers is a string or a list of strings
natsTransport({ servers: 4222 });
