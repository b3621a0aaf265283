/**
 * The crash workload on a 3-broker Kafka cluster (KRaft; topics with replication factor 3 and
 * min.insync.replicas 2; the shared Redis store), while the broker that matters fails: the leader
 * of most journal partitions in use, found in the cluster's metadata, is SIGKILLed and started
 * again later. Checked from outside, as in the worker crash suite: every run right, none lost, no
 * duplicate effect, no step run again after its completion was durable, every zombie write
 * fenced, nothing dead-lettered.
 *
 * Printed, never asserted: how long journal appends stalled (a probe in this process appends to a
 * run of its own every 50 ms and reports its longest gap), how long the fleet did nothing, and how
 * many runs failed over to another worker.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaCluster, type KafkaCluster, type KafkaNode } from '@baton/testing/clusters';
import { CrashWorld } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import {
  NO_VIOLATIONS,
  appendProbe,
  fleetGapAfter,
  runsMoved,
  violationsWhenReadable,
  warnings,
} from './cluster-workload.spec-helper.js';

/** The broker leading most of `partitions` (ties: the lowest node id). */
function busiestLeader(leaders: Map<number, KafkaNode>, partitions: number[]): KafkaNode {
  const votes = new Map<KafkaNode, number>();
  for (const p of partitions) {
    const leader = leaders.get(p);
    if (leader !== undefined) votes.set(leader, (votes.get(leader) ?? 0) + 1);
  }
  const best = [...votes].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
  if (best === undefined) throw new Error(`no leader known for journal partitions ${partitions.join(', ')}`);
  return best[0];
}

describe('crash suite: a 3-broker Kafka cluster (replication factor 3, min.insync 2) + Redis', () => {
  let cluster: KafkaCluster | undefined;
  let world: CrashWorld | undefined;

  beforeAll(async () => {
    cluster = await startKafkaCluster();
  }, 400_000);
  afterEach(async () => {
    await world?.dispose();
    world = undefined;
  });
  afterAll(async () => {
    await cluster?.stop();
  }, 120_000);

  it(
    'loses nothing when the leader broker of the journal partitions is SIGKILLed, and takes it back when restarted',
    { timeout: 150_000 },
    async () => {
      const c = cluster!;
      const w = await CrashWorld.create(
        crashEnvironment('redis', 'kafka', {
          BATON_KAFKA_REPLICATION_FACTOR: '3',
          BATON_KAFKA_MIN_INSYNC_REPLICAS: '2',
        }),
        { overrides: { transportUrl: c.url }, workerEnv: { BATON_CONCURRENCY: '100' } },
      );
      world = w;
      const prefix = w.env.workerEnv.BATON_KAFKA_PREFIX!;
      const journal = `${prefix}.journal`;
      const workers = await Promise.all([w.fleet.spawn(), w.fleet.spawn(), w.fleet.spawn()]);
      // The first member to join may claim every run before the others hold a partition, and
      // worker 0 would then execute nothing (seen in CI): spread the partitions first.
      await w.untilPartitionsSpread(workers);
      await w.enqueue(60, { steps: 10, minDelayMs: 200, maxDelayMs: 400 });
      await w.waitForExecutions(workers[0]!.pid, 3);

      // Every journal partition is in use with 60 runs on 6 partitions; kill the busiest leader.
      const leaders = await c.partitionLeaders(journal);
      const isr = await c.inSyncReplicas(journal);
      for (const replicas of isr.values()) expect(replicas).toHaveLength(3);
      const victim = busiestLeader(leaders, [...leaders.keys()]);
      const led = [...leaders].filter(([, l]) => l === victim).map(([p]) => p);

      const probe = appendProbe(w);
      await sleep(500);
      const killedAt = Date.now();
      await c.kill(victim);
      // Leadership moves to the two survivors; writes go on with 2 in-sync replicas.
      let movedMs: number | undefined;
      while (movedMs === undefined && Date.now() - killedAt < 30_000) {
        const now = await c.partitionLeaders(journal).catch(() => new Map<number, KafkaNode>());
        if (led.every((p) => now.get(p) !== undefined && now.get(p) !== victim))
          movedMs = Date.now() - killedAt;
        else await sleep(200);
      }
      await sleep(Math.max(0, killedAt + 8_000 - Date.now()));
      await c.start(victim);
      await w.waitForAll(90_000);
      await probe.stop();
      expect(await violationsWhenReadable(w)).toEqual(NO_VIOLATIONS);
      expect(w.fleet.alive).toHaveLength(3);
      console.log(
        `[cluster kafka] SIGKILL of broker ${victim} (leader of journal partitions ${led.join(', ')}; ` +
          `leadership moved after ${movedMs ?? 'more than 30000'} ms): appends stalled at most ` +
          `${probe.longestGapAfter(killedAt - 100)} ms (probe every 50 ms, ${probe.failures.length} probe appends ` +
          `failed), the fleet did nothing for at most ${await fleetGapAfter(w, killedAt)} ms, ` +
          `${await runsMoved(w)} of ${w.runs.length} runs failed over to another worker; workers logged ` +
          `${JSON.stringify(warnings(w))}`,
      );
    },
  );
});
