/**
 * Stream replicas on a real 3-node JetStream cluster of this spec's own (infra/clusters/nats via
 * @baton/testing/clusters, ports 14228-14230): `replicas: 3` creates every stream with three
 * copies and the transport works on them (reads of a replicated journal go to the leader);
 * replicas given explicitly scale streams that exist with fewer; replicas the cluster cannot place
 * fail connect() naming the stream and the fix; a read of a run's journal sees every record even
 * when its reading consumer is placed on a follower still catching up after a freeze.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { NATS_NODES, startNatsCluster, type NatsCluster } from '@baton/testing/clusters';
import { natsTransport } from './nats-transport.js';
import { layoutFor } from './layout.js';

describe('nats transport on a 3-node JetStream cluster', () => {
  let cluster: NatsCluster | undefined;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const prefix = (): string => `r${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    cluster = await startNatsCluster({ clientPort: 14228, routePort: 14328, httpPort: 14428 });
    nc = await connect({ servers: cluster.url.split(',') });
    jsm = await jetstreamManager(nc);
  }, 90_000);
  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  }, 60_000);

  async function replicasOf(stream: string): Promise<{ configured: number; followers: number }> {
    const info = await jsm.streams.info(stream);
    return { configured: info.config.num_replicas, followers: info.cluster?.replicas?.length ?? 0 };
  }

  it('creates every stream with 3 replicas and appends, reads and fences on them', async () => {
    const p = prefix();
    const transport = natsTransport({ servers: cluster!.url, prefix: p, replicas: 3 });
    await transport.connect();
    try {
      const layout = layoutFor(p);
      for (const stream of [layout.runsStream, layout.journalStream, layout.deadLetterStream]) {
        expect(await replicasOf(stream)).toEqual({ configured: 3, followers: 2 });
      }
      const first = await transport.journal.append({
        runId: 'run-1',
        data: new Uint8Array([1]),
        expectedLastPosition: 0,
      });
      const second = await transport.journal.append({
        runId: 'run-1',
        data: new Uint8Array([2]),
        expectedLastPosition: first,
      });
      const stale = await transport.journal
        .append({ runId: 'run-1', data: new Uint8Array([3]), expectedLastPosition: first })
        .catch((e: unknown) => e);
      expect(stale).toMatchObject({ code: 'BATON_JOURNAL_CONFLICT' });
      const records = await transport.journal.read('run-1', 0);
      expect(records.map((r) => [r.position, [...r.data]])).toEqual([
        [first, [1]],
        [second, [2]],
      ]);
    } finally {
      await transport.close();
    }
  });

  it('scales streams that exist with 1 replica to 3 when replicas is given', async () => {
    const p = prefix();
    const single = natsTransport({ servers: cluster!.url, prefix: p });
    await single.connect();
    await single.close();
    expect(await replicasOf(layoutFor(p).journalStream)).toMatchObject({ configured: 1 });
    const replicated = natsTransport({ servers: cluster!.url, prefix: p, replicas: 3 });
    await replicated.connect();
    await replicated.close();
    expect(await replicasOf(layoutFor(p).journalStream)).toMatchObject({ configured: 3 });
  });

  it('fails connect() naming the stream and the fix when the cluster cannot place 5 replicas', async () => {
    // Refused placement is waited out for leaderWaitMs (a node just back may not count yet); a
    // cluster too small stays refused, and connect() says so when the wait is over.
    const transport = natsTransport({
      servers: cluster!.url,
      prefix: prefix(),
      replicas: 5,
      leaderWaitMs: 2_000,
    });
    const started = Date.now();
    const err = await transport.connect().catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    await transport.close();
    expect(err).toMatchObject({ code: 'BATON_NATS_STREAM_CONFLICT' });
    expect((err as Error).message).toMatch(/needs 5 replicas, but the cluster cannot place them/);
    expect((err as Error).message).toMatch(/at least 5 servers/);
  });

  // A reading consumer has one replica, and the cluster places it on any server holding the stream:
  // a follower that was frozen while the run's records were written answers from its own copy,
  // which lacks the newest records until it has caught up. A resume that read such a tail would
  // run a completed step again (issue 22: NonDeterminismError after the journal leader froze).
  it('reads every record of a run even when its reading consumer lands on a follower catching up', async () => {
    const p = prefix();
    const setUp = natsTransport({ servers: cluster!.url, prefix: p, replicas: 3 });
    await setUp.connect();
    await setUp.close();
    const leader = await cluster!.streamLeader(layoutFor(p).journalStream);
    if (leader === undefined) throw new Error('the journal stream has no leader');
    const follower = NATS_NODES.find((n) => n !== leader)!;
    // Connected to the leader, so that the frozen follower is never this client's server.
    const leaderUrl = cluster!.url.split(',')[leader - 1]!;
    const transport = natsTransport({ servers: leaderUrl, prefix: p, replicas: 3 });
    await transport.connect();
    const count = 1_500;
    let thawed = false;
    try {
      await cluster!.freeze(follower);
      let last = 0;
      for (let i = 0; i < count; i++) {
        last = await transport.journal.append({
          runId: 'lagging',
          data: new Uint8Array(512),
          expectedLastPosition: last,
        });
      }
      await cluster!.thaw(follower);
      thawed = true;
      // Many readers at once, right after the thaw: about a third of their consumers land on it.
      const reads = await Promise.all(Array.from({ length: 30 }, () => transport.journal.read('lagging', 0)));
      const lengths = reads.map((records) => records.length);
      expect(lengths).toEqual(lengths.map(() => count));
      expect(reads[0]!.at(-1)!.position).toBe(last);
    } finally {
      if (!thawed) await cluster!.thaw(follower);
      await transport.close();
    }
  }, 120_000);

  it('connect() waits for a cluster that has no meta leader to elect one, instead of failing', async () => {
    const p = prefix();
    const [survivor, ...down] = NATS_NODES;
    const survivorUrl = cluster!.url.split(',')[survivor! - 1]!;
    await Promise.all(down.map((n) => cluster!.kill(n)));
    const restarted: Promise<void>[] = [];
    try {
      // One node of three: no majority, so no meta leader; JetStream answers 10008 to everything.
      // A generous wait: what is checked is that connect() waits rather than fails; on a loaded
      // machine the node's restart and the elections take longer than the default 20 s.
      const transport = natsTransport({ servers: survivorUrl, prefix: p, replicas: 3, leaderWaitMs: 90_000 });
      let settled: 'connected' | Error | undefined;
      const connecting = transport.connect().then(
        () => (settled = 'connected'),
        (err: unknown) => (settled = err as Error),
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(settled).toBeUndefined();
      // Both back: 3 replicas need three peers, and a stream created while the meta leader does
      // not count one yet is refused placement for a moment, which connect() also waits out.
      restarted.push(cluster!.start(down[0]!));
      await restarted[0];
      restarted.push(cluster!.start(down[1]!));
      await restarted[1];
      await connecting;
      expect(settled).toBe('connected');
      try {
        expect(
          await transport.journal.append({
            runId: 'after-election',
            data: new Uint8Array([1]),
            expectedLastPosition: 0,
          }),
        ).toBeGreaterThan(0);
      } finally {
        await transport.close();
      }
    } finally {
      await Promise.allSettled(restarted);
      for (const n of down) await cluster!.start(n).catch(() => undefined);
    }
  }, 120_000);
});
