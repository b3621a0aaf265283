/**
 * The crash workload on a 3-node NATS JetStream cluster (streams with 3 replicas, the shared
 * Redis store), while the node that matters fails: the journal stream's leader is SIGKILLed and
 * started again later, frozen for 10 s (SIGSTOP, then SIGCONT: a hung host), and cut off the network
 * for 10 s (every node runs in a network namespace of its own behind a bridge; the leader's link
 * goes down, then up: a partition). Checked from outside,
 * as in the worker crash suite: every run right, none lost, no duplicate effect, no step run again
 * after its completion was durable, every zombie write fenced, nothing dead-lettered.
 *
 * Printed, never asserted: how long journal appends stalled (a probe in this process appends to a
 * run of its own every 50 ms and reports its longest gap), and how many runs failed over (ran on
 * more than one worker, or resumed after a failed append on the same one).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startNatsCluster, type NatsCluster, type NatsNode } from '@baton/testing/clusters';
import { CrashWorld } from '@baton/testing/crash';
import { redisTestUrl } from '@baton/testing/servers';
import { largePayloadsFromConfig, loadAdapterCode, readConfig, storeFromConfig } from '@baton/host';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import {
  NO_VIOLATIONS,
  appendProbe,
  fleetGapAfter,
  runsMoved,
  violationsWhenReadable,
  warnings,
} from './cluster-workload.spec-helper.js';

/** Ports of this spec's own cluster (the task's private range; infra's default cluster uses 14222-4). */
const PORTS = { clientPort: 14225, routePort: 14325, httpPort: 14425 };

describe('crash suite: a 3-node NATS JetStream cluster (replicas 3) + Redis', () => {
  let cluster: NatsCluster | undefined;
  let world: CrashWorld | undefined;

  beforeAll(async () => {
    cluster = await startNatsCluster({ ...PORTS, network: 'namespaces' });
  }, 90_000);
  afterEach(async () => {
    await world?.dispose();
    world = undefined;
  });
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  async function loadedWorld(): Promise<{
    w: CrashWorld;
    prefix: string;
    journal: string;
    leader: NatsNode;
  }> {
    const c = cluster!;
    const w = await CrashWorld.create(crashEnvironment('redis', 'nats', { BATON_NATS_REPLICAS: '3' }), {
      overrides: { transportUrl: c.url },
      workerEnv: { BATON_CONCURRENCY: '100' },
    });
    world = w;
    const prefix = w.env.workerEnv.BATON_NATS_PREFIX!;
    const journal = `${prefix.toUpperCase()}_JOURNAL`;
    const workers = await Promise.all([w.fleet.spawn(), w.fleet.spawn(), w.fleet.spawn()]);
    await w.enqueue(60, { steps: 10, minDelayMs: 200, maxDelayMs: 400 });
    await w.waitForExecutions(workers[0]!.pid, 3);
    const leader = await c.streamLeader(journal);
    if (leader === undefined) throw new Error(`no leader found for stream ${journal}`);
    return { w, prefix, journal, leader };
  }

  /** Waits until most nodes name a leader of `stream` other than `old`; how long after `since`. */
  async function election(stream: string, old: NatsNode, since: number) {
    for (;;) {
      const leader = await cluster!.streamLeader(stream);
      if (leader !== undefined && leader !== old) return { leader, ms: Date.now() - since };
      if (Date.now() - since > 30_000) throw new Error(`no new leader of ${stream} within 30 s`);
      await sleep(100);
    }
  }

  async function report(
    label: string,
    w: CrashWorld,
    faultAt: number,
    probe: { failures: string[]; longestGapAfter(since: number): number },
  ) {
    console.log(
      `[cluster nats] ${label}: appends stalled at most ${probe.longestGapAfter(faultAt - 100)} ms ` +
        `(probe every 50 ms, ${probe.failures.length} probe appends failed), the fleet did nothing for at most ` +
        `${await fleetGapAfter(w, faultAt)} ms, ${await runsMoved(w)} of ${w.runs.length} runs ` +
        `failed over to another worker; workers logged ${JSON.stringify(warnings(w))}`,
    );
  }

  it(
    'loses nothing when the journal stream leader is SIGKILLed, and takes it back when restarted',
    { timeout: 150_000 },
    async () => {
      const { w, journal, leader } = await loadedWorld();
      const probe = appendProbe(w);
      await sleep(500);
      const killedAt = Date.now();
      await cluster!.kill(leader);
      // A new leader is elected among the two survivors before the node comes back.
      const elected = await election(journal, leader, killedAt);
      await sleep(Math.max(0, killedAt + 8_000 - Date.now()));
      await cluster!.start(leader);
      await w.waitForAll(90_000);
      await probe.stop();
      expect(await violationsWhenReadable(w)).toEqual(NO_VIOLATIONS);
      expect(w.fleet.alive).toHaveLength(3);
      await report(
        `SIGKILL of journal leader n${leader} (n${elected.leader} leads after ${elected.ms} ms)`,
        w,
        killedAt,
        probe,
      );
    },
  );

  /**
   * The journal leader stops answering for 10 s while it keeps running (`freeze`: SIGSTOP, it
   * keeps its sockets; `cut`: its network link goes down), then comes back (`thaw`, `heal`).
   */
  async function leaderAway(fault: 'freeze' | 'cut', label: string) {
    const { w, journal, leader } = await loadedWorld();
    const probe = appendProbe(w);
    await sleep(500);
    const awayAt = Date.now();
    await cluster![fault](leader);
    let elected: { leader: NatsNode; ms: number } | undefined;
    try {
      // The two others elect a leader meanwhile (printed; the run checks do not need it).
      elected = await Promise.race([election(journal, leader, awayAt), sleep(10_000).then(() => undefined)]);
      await sleep(Math.max(0, awayAt + 10_000 - Date.now()));
    } finally {
      await cluster![fault === 'freeze' ? 'thaw' : 'heal'](leader);
    }
    await w.waitForAll(90_000);
    await probe.stop();
    expect(await violationsWhenReadable(w)).toEqual(NO_VIOLATIONS);
    expect(w.fleet.alive).toHaveLength(3);
    const during = elected ? `n${elected.leader} leads after ${elected.ms} ms` : 'no new leader meanwhile';
    await report(`${label} journal leader n${leader} for 10 s (${during})`, w, awayAt, probe);
  }

  // On CI (4380f14) four runs failed here with NonDeterminismError: a resume read its tail through
  // a consumer placed on the thawed server, whose copy still lacked the newest records, and ran a
  // completed step again. Reads now confirm the tail with the leader (journal-reader.ts; the
  // transport's cluster spec reproduces the stale read on its own).
  it(
    'loses nothing when the journal stream leader is frozen for 10 s and then continued',
    { timeout: 150_000 },
    () => leaderAway('freeze', 'SIGSTOP of'),
  );

  it(
    'loses nothing when the journal stream leader is cut off the network for 10 s and then healed',
    { timeout: 150_000 },
    () => leaderAway('cut', 'network partition of'),
  );

  it(
    'loses nothing when the run queue stream leader is SIGKILLed while a producer starts more runs',
    { timeout: 150_000 },
    async () => {
      const { w, prefix } = await loadedWorld();
      const queue = `${prefix.toUpperCase()}_RUNS`;
      const leader = await cluster!.streamLeader(queue);
      if (leader === undefined) throw new Error(`no leader found for stream ${queue}`);
      const killedAt = Date.now();
      await cluster!.kill(leader);
      // A producer goes on starting runs through the election, with no retry of its own: the
      // client tries a start that fails as unavailable again (retryUnavailableMs, 30 s), with the
      // same run id and message id, so each call resolves and none starts a run twice.
      let longestStart = 0;
      for (let i = 0; i < 20; i++) {
        const began = Date.now();
        await w.enqueue(1, { steps: 10, minDelayMs: 200, maxDelayMs: 400 });
        longestStart = Math.max(longestStart, Date.now() - began);
      }
      const elected = await election(queue, leader, killedAt);
      await sleep(Math.max(0, killedAt + 8_000 - Date.now()));
      await cluster!.start(leader);
      await w.waitForAll(90_000);
      expect(await violationsWhenReadable(w)).toEqual(NO_VIOLATIONS);
      expect(w.runs).toHaveLength(80);
      expect(w.fleet.alive).toHaveLength(3);
      console.log(
        `[cluster nats] SIGKILL of run queue leader n${leader} (n${elected.leader} leads after ${elected.ms} ms): ` +
          `20 starts during the election took at most ${longestStart} ms (the client retrying), the fleet did ` +
          `nothing for at most ${await fleetGapAfter(w, killedAt)} ms, ${await runsMoved(w)} of ${w.runs.length} ` +
          `runs failed over; workers logged ${JSON.stringify(warnings(w))}`,
      );
    },
  );

  it('creates the large-payload object store bucket with BATON_NATS_REPLICAS copies too', async () => {
    const bucket = `cluster_${Date.now().toString(36)}`;
    const config = readConfig({
      BATON_TRANSPORT_URL: cluster!.url,
      BATON_STORE_URL: redisTestUrl(),
      BATON_WORKFLOWS: 'unused-here',
      BATON_NATS_REPLICAS: '3',
      BATON_PAYLOAD_REF_LOCATION: 'nats-object-store',
      BATON_PAYLOAD_REF_BUCKET: bucket,
    });
    await loadAdapterCode(config);
    // The store is only the fallback location here; it is never connected.
    const store = storeFromConfig(config);
    const { separate } = largePayloadsFromConfig(config, store);
    if (separate === undefined) throw new Error('no object payload store was configured');
    await separate.connect();
    try {
      expect(await cluster!.streamReplicas(`OBJ_${bucket}`)).toBe(3);
    } finally {
      await separate.close();
      await store.close();
    }
  });
});
