/**
 * Group commit across runs with worker processes: every worker puts the steps of many runs into
 * one record of its own log and records each run's pointer in the store, fenced by expected
 * position. A fleet left to the default groups every run with Redis (checked on nats+redis and
 * kafka+redis, whose crash suites run in group mode by default); on NATS + Postgres, whose default
 * is per run, the whole crash suite runs here with BATON_JOURNAL=group (SIGKILL mid-step, zombies
 * frozen past their lease, a NATS restart): the journal a resume reads is the pointers the store
 * accepted, so a fenced worker's entries are never replayed.
 *
 * And the zombie group commit is most exposed to: a worker frozen (SIGSTOP) between a flush's
 * group record, which landed on the bus, and its store call recording the runs' pointers, which is
 * held on its way (a relay in front of the store stops passing its traffic) until other workers
 * took the runs over. Its record stays on the bus named by no pointer, and nothing in it is replayed.
 */
import { createServer, connect as tcpConnect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { CrashWorld, describeCrashSuite, type CrashEnvironmentFactory } from '@baton/testing/crash';
import { layoutFor } from '@baton/transport-nats';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { NO_VIOLATIONS } from './cluster-workload.spec-helper.js';

const GROUP = { BATON_JOURNAL: 'group' };

/**
 * `suite`: run the whole crash suite here. With Redis group commit is the default, so
 * The crash matrix's nats+redis and kafka+redis pairs run it in group mode already; Postgres defaults to per run.
 * `midFlush`: the mid-flush zombie, which reads the NATS stream to find its record.
 */
const pairs: Array<{
  name: string;
  env: CrashEnvironmentFactory;
  suite: boolean;
  midFlush: boolean;
  outages: Array<'nats' | 'redis'>;
}> = [
  // Left to the default, which groups with Redis: the checks below show that it does.
  { name: 'nats+redis', env: crashEnvironment('redis', 'nats'), suite: false, midFlush: true, outages: [] },
  {
    name: 'kafka+redis',
    env: crashEnvironment('redis', 'kafka'),
    suite: false,
    midFlush: false,
    outages: [],
  },
  // The suite restarts private NATS and Redis servers only; Postgres stays up.
  {
    name: 'nats+postgres',
    env: crashEnvironment('postgres', 'nats', GROUP),
    suite: true,
    midFlush: true,
    outages: ['nats'],
  },
];

/** A TCP relay in front of a server whose traffic can be held (nothing passes, either way) and let go, in order. */
async function holdableRelay(target: URL) {
  const sockets = new Set<Socket>();
  let held = false;
  const queue: Array<[Socket, Buffer]> = [];
  const forward = (from: Socket, to: Socket) =>
    from.on('data', (chunk: Buffer) => (held ? queue.push([to, chunk]) : to.write(chunk)));
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    hold: () => void (held = true),
    release: () => {
      held = false;
      for (const [to, chunk] of queue.splice(0)) to.write(chunk);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

for (const { name, env, suite, midFlush, outages } of pairs) {
  // The SIGTERM hand-off is crash-sigterm.serial.int.spec.ts's, on nats+redis in group mode (its default).
  if (suite) describeCrashSuite(`${name}, group journal`, env, { outages });

  describe(`group journal on ${name}`, () => {
    it(
      'journals every run through pointers in the store, none on a journal of its own',
      { timeout: 90_000 },
      async () => {
        const w = await CrashWorld.create(env);
        try {
          await Promise.all([w.fleet.spawn(), w.fleet.spawn()]);
          await w.enqueue(30, { steps: 5, minDelayMs: 10, maxDelayMs: 40 });
          await w.waitForAll(60_000);
          expect(await w.violations()).toEqual(NO_VIOLATIONS);
          const index = w.env.store.journalIndex!;
          for (const { runId } of w.runs) {
            const { grouped, pointers } = await index.readPointers(runId, 0);
            expect({ runId, grouped }).toEqual({ runId, grouped: true });
            expect(pointers.length).toBeGreaterThan(0);
          }
        } finally {
          await w.dispose();
        }
      },
    );
  });

  describe.runIf(midFlush)(`group journal on ${name}: a zombie frozen mid-flush`, () => {
    it(
      'refuses the pointers of a flush held past the lease and replays none of its record',
      { timeout: 120_000 },
      async () => {
        const w = await CrashWorld.create(env, {
          workerEnv: { BATON_CONCURRENCY: '20', BATON_LEASE_MS: '1500', BATON_REAP_INTERVAL_MS: '200' },
        });
        const relay = await holdableRelay(new URL(w.env.workerEnv.BATON_STORE_URL!));
        const nc = await connect({ servers: w.env.workerEnv.BATON_TRANSPORT_URL });
        try {
          const zombie = await w.fleet.spawn({ BATON_STORE_URL: relay.url });
          await w.enqueue(10, { steps: 10, minDelayMs: 150, maxDelayMs: 250 });
          // A few steps of every run are journaled through pointers by then.
          await w.waitForExecutions(zombie.pid, 30);
          // The next flush's record goes to the bus; its store call waits in the relay. Then freeze.
          relay.hold();
          await sleep(300);
          zombie.signal('SIGSTOP');
          const stoppedAt = Date.now();
          const survivor = await w.fleet.spawn();
          await w.waitForExecutions(survivor.pid, 5);
          await sleep(Math.max(0, stoppedAt + 4_000 - Date.now()));
          // The held calls reach the store now, after the survivor fenced every run; then the zombie wakes.
          relay.release();
          await sleep(500);
          zombie.signal('SIGCONT');
          await w.waitForAll(60_000);
          await sleep(1_000);

          expect(zombie.alive).toBe(true);
          expect(await w.violations()).toEqual(NO_VIOLATIONS);

          // The zombie's log (it ran alone at first, so the first run's first pointer is in it) holds
          // a record no pointer names: the frozen flush's, on the bus and fenced out of every journal.
          const index = w.env.store.journalIndex!;
          const pointers = (await Promise.all(w.runs.map((r) => index.readPointers(r.runId, 0)))).flatMap(
            (p) => p.pointers,
          );
          const zombieLog = (await index.readPointers(w.runs[0]!.runId, 0)).pointers[0]!.log;
          const named = new Set(pointers.filter((p) => p.log === zombieLog).map((p) => p.record));
          const prefix = w.env.workerEnv.BATON_NATS_PREFIX!;
          const layout = layoutFor(prefix);
          const subject = `${layout.journalSubjects.slice(0, -1)}g.${zombieLog}`;
          const jsm = await jetstreamManager(nc);
          const unnamed: number[] = [];
          for (let seq = 1; ;) {
            const message = await jsm.direct
              .getMessage(layout.journalStream, { seq, next_by_subj: subject })
              .catch(() => null);
            if (message === null) break;
            if (!named.has(message.seq)) unnamed.push(message.seq);
            seq = message.seq + 1;
          }
          console.log(
            `[crash suite] group journal zombie mid-flush: ${named.size} records of its log named, ${unnamed.length} never named`,
          );
          expect(named.size).toBeGreaterThan(0);
          expect(unnamed.length).toBeGreaterThan(0);
        } finally {
          await nc.close();
          await relay.close();
          await w.dispose();
        }
      },
    );
  });
}
