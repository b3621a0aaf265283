/**
 * The worker's shared membership (shared-membership.ts) on real stores and a real Kafka broker:
 * the Kafka run queue's partitions are split by it as the worker wires it, one member lists the
 * live workers for the fleet while the others only read the published list, and a dead member's
 * partitions (a reader's, then the lister's own) still move to the survivors.
 *
 * A member "dies" as a killed process would to the others: its store closes (its presence
 * connection drops, nothing is unregistered) and its transport stops reading.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MEMBERSHIP_TURN, type PresenceStore, type Store } from '@baton/core/adapter';
import { dropPostgresSchema, postgresStore } from '@baton/store-postgres';
import { purgeRedisKeyPrefix, redisStore } from '@baton/store-redis';
import { kafkaTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { deleteKafkaTopics } from '@baton/transport-kafka';
import { createKafkaTransport, type KafkaTransport } from '@baton/transport-kafka/testing';
import { SharedMembership, type MembershipStore } from './shared-membership.js';

/** With these ids, every member owns some among four, and among any three: no kill moves nothing. */
const PARTITIONS = 12;
const REFRESH_MS = 100;
const ALL = Array.from({ length: PARTITIONS }, (_, i) => i);

/** Store calls per kind, counted on the way to the real store. */
type Calls = Record<Exclude<keyof MembershipStore, 'watchMembership'>, number>;

/** The real store's membership calls, counted: nothing is answered here. */
function counted(store: Store & { readonly presence: PresenceStore }): {
  store: MembershipStore;
  calls: Calls;
} {
  const calls: Calls = { live: 0, publishMembership: 0, readMembership: 0, takeScanTurn: 0 };
  return {
    calls,
    store: {
      live: () => (calls.live++, store.presence.live()),
      publishMembership: (members) => (calls.publishMembership++, store.presence.publishMembership(members)),
      readMembership: (known, turn) => (calls.readMembership++, store.presence.readMembership(known, turn)),
      takeScanTurn: (scan, worker, turnMs) => (
        calls.takeScanTurn++,
        store.presence.takeScanTurn(scan, worker, turnMs)
      ),
      // Passed through as the store has it (Postgres: readers read when told, and poll now and then).
      ...(store.presence.watchMembership !== undefined && {
        watchMembership: store.presence.watchMembership.bind(store.presence),
      }),
    },
  };
}

interface Member {
  id: string;
  store: Store & { readonly presence: PresenceStore };
  transport: KafkaTransport;
  membership: SharedMembership;
  calls: Calls;
  /** Closes the store (its presence drops as a killed process's would) and stops reading. */
  kill(): Promise<void>;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
}, 60_000);

const members: Member[] = [];
afterEach(async () => {
  await Promise.allSettled(members.splice(0).map((m) => m.kill()));
});

const stores = {
  postgres: () => {
    const schema = `membership_${randomBytes(5).toString('hex')}`;
    cleanups.push(() => dropPostgresSchema({ url: postgresTestUrl(), schema }));
    return () => postgresStore({ url: postgresTestUrl(), schema, poolSize: 2 });
  },
  redis: () => {
    const keyPrefix = `membership-${randomBytes(5).toString('hex')}:`;
    cleanups.push(() => purgeRedisKeyPrefix({ url: redisTestUrl(), keyPrefix }));
    return () => redisStore({ url: redisTestUrl(), keyPrefix });
  },
} as const;

async function member(
  id: string,
  prefix: string,
  openStore: () => Store & { readonly presence: PresenceStore },
): Promise<Member> {
  const store = openStore();
  await store.connect();
  await store.presence.register(id);
  const transport = createKafkaTransport({
    brokers: kafkaTestUrl(),
    prefix,
    partitions: PARTITIONS,
    ownershipRefreshMs: REFRESH_MS,
  });
  await transport.connect();
  const { store: countedStore, calls } = counted(store);
  const membership = new SharedMembership(countedStore, id);
  // As the worker does (worker.ts), before the first fetch.
  transport.runQueue.share(membership);
  // The first fetch starts reading: ownership refreshes every REFRESH_MS from then on.
  await transport.runQueue.fetch({ max: 1, expiresMs: 100 });
  let killed: Promise<void> | undefined;
  const m: Member = {
    id,
    store,
    transport,
    membership,
    calls,
    kill: () => {
      killed ??= (async () => {
        await store.close();
        await transport.close();
      })();
      return killed;
    },
  };
  members.push(m);
  return m;
}

const owned = (m: Member): number[] => m.transport.queueStats().assignedPartitions;
const union = (ms: Member[]): number[] => [...new Set(ms.flatMap(owned))].sort((a, b) => a - b);

/** Polls until every partition has exactly one owner among `ms`; resolves the ms since `since`. */
async function settled(ms: Member[], withinMs: number, since = Date.now()): Promise<number> {
  await expect
    .poll(() => ({ union: union(ms), total: ms.reduce((n, m) => n + owned(m).length, 0) }), {
      timeout: withinMs,
      interval: 20,
    })
    .toEqual({ union: ALL, total: PARTITIONS });
  return Date.now() - since;
}

describe.each(['postgres', 'redis'] as const)('shared membership on %s with Kafka', (kind) => {
  it(
    "lists the fleet from one member only, and still moves a dead member's partitions, the lister's too",
    { timeout: 60_000 },
    async () => {
      const openStore = stores[kind]();
      const prefix = `membership-${randomBytes(5).toString('hex')}`;
      cleanups.push(() => deleteKafkaTopics({ brokers: kafkaTestUrl(), prefix }));
      const fleet: Member[] = [];
      for (const id of ['m-a', 'm-b', 'm-c', 'm-d']) fleet.push(await member(id, prefix, openStore));
      await settled(fleet, 10_000);

      // Over 20 periods: one member lists the fleet every period; the others read the published
      // list and never list it themselves (where every member used to list it every period).
      const before = fleet.map((m) => ({ ...m.calls }));
      await new Promise((resolve) => setTimeout(resolve, 20 * REFRESH_MS));
      const during = fleet.map((m, i) => ({
        id: m.id,
        publishing: m.membership.publishing,
        live: m.calls.live - before[i]!.live,
        readMembership: m.calls.readMembership - before[i]!.readMembership,
      }));
      console.log(`[shared membership, ${kind}] calls over 20 periods: ${JSON.stringify(during)}`);
      const listers = during.filter((d) => d.publishing);
      expect(listers).toHaveLength(1);
      expect(listers[0]!.live).toBeGreaterThanOrEqual(10);
      // A store that tells of new lists (Postgres) is read when it tells and polled every 0.5 to
      // 1.5 periods in a fleet this small (shared-membership.ts, invariant 5); Redis every period.
      const told = fleet[0]!.store.presence.watchMembership !== undefined;
      for (const reader of during.filter((d) => !d.publishing)) {
        expect(reader.live).toBe(0);
        expect(reader.readMembership).toBeGreaterThanOrEqual(told ? 5 : 10);
      }

      // A reader dies: the lister's next listing drops it, the readers read that.
      const lister = fleet.find((m) => m.membership.publishing)!;
      const reader = fleet.find((m) => m !== lister)!;
      expect(owned(reader).length).toBeGreaterThan(0);
      // Timed from the kill on: closing the transport takes a while, the store's presence not.
      const readerKilled = Date.now();
      const readerDying = reader.kill();
      const survivors = fleet.filter((m) => m !== reader);
      const readerGone = await settled(survivors, 10_000, readerKilled);
      await readerDying;
      console.log(`[shared membership, ${kind}] a dead reader's partitions moved in ${readerGone} ms`);

      // The lister dies: its turn runs out, a reader takes it, lists the fleet and publishes.
      expect(owned(lister).length).toBeGreaterThan(0);
      const listerKilled = Date.now();
      const listerDying = lister.kill();
      const rest = survivors.filter((m) => m !== lister);
      const listerGone = await settled(rest, 10_000, listerKilled);
      await listerDying;
      console.log(`[shared membership, ${kind}] a dead lister's partitions moved in ${listerGone} ms`);
      await expect.poll(() => rest.filter((m) => m.membership.publishing).length).toBe(1);
      // The store agrees: the survivors are the live workers.
      const ids = rest.map((m) => m.id).sort();
      expect((await rest[0]!.store.presence.live()).sort()).toEqual(ids);
    },
  );

  it(
    'a lister that stops gracefully publishes the fleet without itself and hands its turn on',
    { timeout: 60_000 },
    async () => {
      const openStore = stores[kind]();
      const prefix = `membership-${randomBytes(5).toString('hex')}`;
      cleanups.push(() => deleteKafkaTopics({ brokers: kafkaTestUrl(), prefix }));
      const fleet: Member[] = [];
      for (const id of ['g-a', 'g-b', 'g-c']) fleet.push(await member(id, prefix, openStore));
      await settled(fleet, 10_000);
      await expect.poll(() => fleet.filter((m) => m.membership.publishing).length).toBe(1);
      const lister = fleet.find((m) => m.membership.publishing)!;
      expect(owned(lister).length).toBeGreaterThan(0);
      // As worker.stop() does: unregister, then leave.
      await lister.store.presence.unregister(lister.id);
      await lister.membership.leave();
      expect(lister.membership.publishing).toBe(false);
      const rest = fleet.filter((m) => m !== lister);
      // Published already, before any turn ran out: the others read it at their next period.
      const published = await rest[0]!.store.presence.readMembership(0, MEMBERSHIP_TURN);
      expect(published.members).toEqual(rest.map((m) => m.id).sort());
      const gone = Date.now();
      await lister.kill();
      await settled(rest, 10_000, gone);
      await expect.poll(() => rest.filter((m) => m.membership.publishing).length).toBe(1);
    },
  );
});
