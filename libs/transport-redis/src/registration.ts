/**
 * The Redis transport as the worker process knows it (`@baton/core/adapter`'s
 * AdapterRegistration): `redis://`, `rediss://` and `redis(s)+sentinel://` URLs in
 * BATON_TRANSPORT_URL, the
 * BATON_REDIS_BUS_* variables, and the key prefix shown in the `worker ready` line. The Redis
 * store serves the same schemes in BATON_STORE_URL: the kind of variable picks which. This module
 * (the package's `/registration` export) imports none of the transport's code (BullMQ, ioredis):
 * `load()` does (AdapterCode).
 */
import { ConfigError } from '@baton/core';
import {
  AdapterCode,
  switchSetting,
  textSetting,
  wholeNumberSetting,
  type AdapterRegistration,
} from '@baton/core/adapter';
import type { deleteRedisTransportKeys } from './admin.js';
import { resolveRedisTransportOptions } from './options.js';
import type { redisTransport } from './redis-transport.js';

/** What the registration needs of the package's code; index.ts provides it. */
export interface RedisBusCode {
  redisTransport: typeof redisTransport;
  deleteRedisTransportKeys: typeof deleteRedisTransportKeys;
}

/** The package's code, loaded when a process picks this transport. */
export const redisBusCode = new AdapterCode<RedisBusCode>('the Redis transport', () => import('./index.js'));

/** The settings the BATON_REDIS_BUS_* variables give. */
export interface RedisBusSettings {
  prefix?: string;
  ackWaitMs?: number;
  pollMs?: number;
  priorityLanes?: boolean;
  waitReplicas?: number;
  waitTimeoutMs?: number;
  sentinelPassword?: string;
}

export const redisBusRegistration: AdapterRegistration<'redisBus', 'transport', RedisBusSettings> = {
  name: 'redisBus',
  kind: 'transport',
  schemes: ['redis', 'rediss', 'redis+sentinel', 'rediss+sentinel'],
  variables: {
    prefix: textSetting(
      'BATON_REDIS_BUS_PREFIX',
      'first segment of every key of the Redis transport (<prefix>:runs:*, <prefix>:journal:<runId>, <prefix>:dlq); one per installation; default baton-bus',
      'prefix',
    ),
    ackWaitMs: wholeNumberSetting(
      'BATON_REDIS_BUS_ACK_WAIT_MS',
      "an unacked run message is delivered again after this (the BullMQ job's lock duration); default 30000",
      100,
      'ackWaitMs',
    ),
    pollMs: wholeNumberSetting(
      'BATON_REDIS_BUS_POLL_MS',
      'how often an idle worker asks the empty queue for a job; default 50',
      1,
      'pollMs',
    ),
    priorityLanes: switchSetting(
      'BATON_REDIS_BUS_PRIORITY_LANES',
      'true: keep and read the run queue priority lanes (BullMQ queues runs-high and runs-low), so runs may start at high or low priority; on the workers first, then the producers; default false',
      'priorityLanes',
    ),
    waitReplicas: wholeNumberSetting(
      'BATON_REDIS_BUS_WAIT_REPLICAS',
      'replicas that must confirm each journal append, group record and dead letter (WAIT) before it counts; the number of replicas when a replica may be promoted; default 1 with redis+sentinel://, else 0',
      0,
      'waitReplicas',
    ),
    waitTimeoutMs: wholeNumberSetting(
      'BATON_REDIS_BUS_WAIT_TIMEOUT_MS',
      'how long such a write waits for its replicas before it fails (retryable); default 1000',
      1,
      'waitTimeoutMs',
    ),
    sentinelPassword: textSetting(
      'BATON_REDIS_BUS_SENTINEL_PASSWORD',
      "the sentinels' own password with a redis+sentinel:// transport URL (the URL's password is the data nodes')",
      'sentinelPassword',
    ),
  },
  urlOption: 'url',
  load: () => redisBusCode.load(),
  create: (
    url,
    { prefix, ackWaitMs, pollMs, priorityLanes, waitReplicas, waitTimeoutMs, sentinelPassword },
  ) =>
    redisBusCode.get().redisTransport({
      url,
      ...(priorityLanes !== undefined && { priorityLanes }),
      ...(sentinelPassword !== undefined && { sentinelPassword }),
      ...(waitReplicas !== undefined && { waitReplicas }),
      ...(waitTimeoutMs !== undefined && { waitTimeoutMs }),
      ...(prefix !== undefined && { prefix }),
      ...(ackWaitMs !== undefined && { ackWaitMs }),
      ...(pollMs !== undefined && { pollMs }),
    }),
  isolation: {
    // `<id>-bus`, not `<id>`: a Redis store isolated as `<id>:` on the same server then shares no
    // key with it, and removing the store's `<id>:*` leaves the transport's keys alone.
    settings: (id) => ({ prefix: `${id}-bus` }),
    remove: async (url, { prefix, sentinelPassword }) => {
      // Without a prefix this would name the default installation's keys: refuse.
      if (prefix === undefined) throw new ConfigError('redisBusRegistration.isolation.remove needs a prefix');
      await (
        await redisBusCode.load()
      ).deleteRedisTransportKeys({
        url,
        prefix,
        ...(sentinelPassword !== undefined && { sentinelPassword }),
      });
    },
  },
  describeNamespace: (url, { prefix }) => ({
    transportPrefix: resolveRedisTransportOptions({ url, ...(prefix !== undefined && { prefix }) }).prefix,
  }),
};
