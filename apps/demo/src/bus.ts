/**
 * The demo's bus: the in-memory transport by default (no servers), or with `--bus redis` the Redis
 * transport on a real Redis (`BATON_DEMO_REDIS_URL`, default redis://127.0.0.1:6379) under a prefix
 * of its own, deleted when the demo ends. The store stays in memory either way: the demo shows the
 * bus's part (BullMQ delivery and redelivery, Redis Stream journals) with nothing else to set up.
 */
import { randomBytes } from 'node:crypto';
import { maskUrlSecret, type Transport } from '@baton/core/adapter';
import { memoryTransport } from '@baton/core/memory';
import { deleteRedisTransportKeys, redisTransport } from '@baton/transport-redis';

/** The buses `--bus` takes. */
export const DEMO_BUSES = ['memory', 'redis'] as const;
export type DemoBus = (typeof DEMO_BUSES)[number];

/** The variable naming the Redis of `--bus redis`. */
export const DEMO_REDIS_URL_ENV = 'BATON_DEMO_REDIS_URL';
const DEFAULT_DEMO_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * A short ack wait on either bus, so messages a crashed worker fetched but never acked come back
 * within the demo.
 */
const DEMO_ACK_WAIT_MS = 3_000;

export interface DemoTransport {
  transport: Transport;
  /** How the demo's first line names it. */
  label: string;
  /** Closes the transport and removes what it left on the server. */
  dispose(): Promise<void>;
}

export function demoTransport(
  bus: DemoBus,
  env: Record<string, string | undefined> = process.env,
): DemoTransport {
  if (bus === 'memory') {
    const transport = memoryTransport({ ackWaitMs: DEMO_ACK_WAIT_MS });
    return { transport, label: 'memoryTransport', dispose: () => transport.close() };
  }
  const url = env[DEMO_REDIS_URL_ENV]?.trim() || DEFAULT_DEMO_REDIS_URL;
  const prefix = `baton-demo-${randomBytes(4).toString('hex')}`;
  const transport = redisTransport({ url, prefix, ackWaitMs: DEMO_ACK_WAIT_MS });
  return {
    transport,
    label: `redisTransport (${maskUrlSecret(url)}, prefix ${prefix})`,
    dispose: async () => {
      await transport.close();
      await deleteRedisTransportKeys({ url, prefix }).catch(() => undefined);
    },
  };
}
