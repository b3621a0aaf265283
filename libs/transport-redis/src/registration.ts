/**
 * The Redis transport as the worker process knows it (`@baton/core/adapter`'s
 * AdapterRegistration): `redis://`, `rediss://` and `redis(s)+sentinel://` URLs in
 * BATON_TRANSPORT_URL, the
 * BATON_REDIS_BUS_* variables, and the key prefix shown in the `worker ready` line. The Redis
 * store serves the same schemes in BATON_STORE_URL: the kind of variable picks which. This module
 * (the package's `/registration` export) imports none of the transport's code (BullMQ, ioredis):
 * `load()` does (AdapterCode).
 */
import {
  AdapterCode,
  switchSetting,
  textSetting,
  wholeNumberSetting,
  type AdapterRegistration,
} from '@baton/core/adapter';
import { resolveRedisTransportOptions } from './options.js';
import type { RedisBusCode } from './code.js';

export type { RedisBusCode } from './code.js';

/** The package's code, loaded when a process picks this transport. */
export const redisBusCode = new AdapterCode<RedisBusCode>(
  'the Redis transport',
  async () => (await import('./code.js')).redisBusAdapterCode,
);

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

/** What listing and deleting the prefix's keys need: the server, the prefix, the sentinels' password. */
function adminOptions(url: string, { prefix, sentinelPassword }: RedisBusSettings) {
  return {
    url,
    ...(prefix !== undefined && { prefix }),
    ...(sentinelPassword !== undefined && { sentinelPassword }),
  };
}

export const redisBusRegistration: AdapterRegistration<'redisBus', 'transport', RedisBusSettings> = {
  name: 'redisBus',
  kind: 'transport',
  schemes: ['redis', 'rediss', 'redis+sentinel', 'rediss+sentinel'],
  variables: {
    prefix: {
      ...textSetting(
        'BATON_REDIS_BUS_PREFIX',
        "with `BATON_TRANSPORT_URL=redis://…`: first segment of every key of the Redis transport (`<prefix>:runs:*` the BullMQ queue, `<prefix>:journal:<runId>`, `<prefix>:dlq`); one per installation; never the same as the store's `BATON_REDIS_KEY_PREFIX` ([docs/redis-only.md](docs/redis-only.md))",
        'prefix',
      ),
      default: '`baton-bus`',
    },
    ackWaitMs: {
      ...wholeNumberSetting(
        'BATON_REDIS_BUS_ACK_WAIT_MS',
        "a fetched run message neither acked nor nakked is delivered again after this (the BullMQ job's lock duration; BullMQ's stalled-job check redelivers it)",
        100,
        'ackWaitMs',
      ),
      default: '`30000`',
    },
    pollMs: {
      ...wholeNumberSetting(
        'BATON_REDIS_BUS_POLL_MS',
        'how often an idle worker asks the empty BullMQ queue for a job (one script call per period)',
        1,
        'pollMs',
      ),
      default: '`50`',
    },
    priorityLanes: {
      ...switchSetting(
        'BATON_REDIS_BUS_PRIORITY_LANES',
        "`true`: the worker keeps and reads the run queue's priority lanes (BullMQ queues `runs-high`, `runs-low` beside `runs`), and a producer may start runs at `high` or `low`; off, such a start is refused with a `ConfigError`. Turn it on for the workers, then the producers ([docs/priorities.md](docs/priorities.md))",
        'priorityLanes',
      ),
      default: '`false`',
    },
    waitReplicas: {
      ...wholeNumberSetting(
        'BATON_REDIS_BUS_WAIT_REPLICAS',
        'replicas that must confirm each journal append, group record and dead letter of the Redis transport (`WAIT`) before it counts: the number of replicas when a replica may be promoted, so a failover never loses a step a worker went on from ([docs/redis-only.md](docs/redis-only.md))',
        0,
        'waitReplicas',
      ),
      default: '`1` with `redis+sentinel://`, else `0`',
    },
    waitTimeoutMs: {
      ...wholeNumberSetting(
        'BATON_REDIS_BUS_WAIT_TIMEOUT_MS',
        "how long such a write waits for its replicas before it fails (retryable); below the transport's request timeout (5000)",
        1,
        'waitTimeoutMs',
      ),
      default: '`1000`',
    },
    sentinelPassword: {
      ...textSetting(
        'BATON_REDIS_BUS_SENTINEL_PASSWORD',
        "the sentinels' own password with a `redis+sentinel://` transport URL (the URL's password is the data nodes')",
        'sentinelPassword',
      ),
      secret: true,
    },
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
  // The prefix as the transport resolves it: unset is the default installation's (`baton-bus`).
  installation: {
    list: async (url, settings) =>
      (await redisBusCode.load()).listRedisTransportKeys(adminOptions(url, settings)),
    drop: async (url, settings) => {
      await (await redisBusCode.load()).deleteRedisTransportKeys(adminOptions(url, settings));
    },
  },
  isolation: {
    // `<id>-bus`, not `<id>`: a Redis store isolated as `<id>:` on the same server then shares no
    // key with it, and removing the store's `<id>:*` leaves the transport's keys alone.
    settings: (id) => ({ prefix: `${id}-bus` }),
  },
  describeNamespace: (url, { prefix }) => ({
    transportPrefix: resolveRedisTransportOptions({ url, ...(prefix !== undefined && { prefix }) }).prefix,
  }),
};
