/**
 * Starts during a rollout, on real worker processes (NATS + Redis, Kafka + Postgres): three
 * workers on v1 code (`route_order@1`) are replaced one by one by workers on v2 code (versions 1
 * and 2), while v1 and v2 starts keep arriving, as in a Kubernetes rolling update whose producer
 * deployed first. Checked from outside:
 *
 * - v2 starts sent before any worker had v2 are put back, dead-lettered `unknown-workflow` after
 *   the grace (BATON_MISSING_VERSION_GRACE_MS, short here), and redriven by the first v2 worker
 *   when it starts, with no operator;
 * - no start sent while a v2 worker is live is ever dead-lettered;
 * - every run completes with its version's output, once (one `run-completed` across the fleet);
 * - the dead-letter queue is empty at the end.
 *
 * It prints the put-backs per run (from the workers' `run-put-back` debug lines) for
 * docs/versioning.md.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import type { CrashEnvironment, LogLine } from '@baton/testing/crash';
import { REPO_ROOT, WorkerProcess } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const V1_CODE = resolve(REPO_ROOT, 'libs/testing/src/crash/routing-workflows-v1.ts');
const V2_CODE = resolve(REPO_ROOT, 'libs/testing/src/crash/routing-workflows-v2.ts');
const V2_ONLY_CODE = resolve(REPO_ROOT, 'libs/testing/src/crash/routing-workflows-v2-only.ts');
const WORKFLOW = 'route_order';
/** How long an early v2 start waits for a v2 worker before it is dead-lettered. */
const GRACE_MS = 1_500;
const ACTIVITY_MS = 300;

let env: CrashEnvironment | undefined;
let client: Client | undefined;
const processes: WorkerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.alive) p.signal('SIGKILL');
    await p.exited;
  }
  await env?.transport.close();
  await env?.store.close();
  await env?.dispose();
  env = undefined;
  client = undefined;
});

/** What the Kafka run queue logs when this member's partitions change (group, or presence). */
const PARTITION_LOGS = new Set(['kafka run-queue partitions assigned', 'kafka run-queue partitions owned']);

function spawnWorker(id: string, code: string): WorkerProcess {
  const worker = new WorkerProcess(id, {
    ...env!.workerEnv,
    BATON_LEASE_MS: '2000',
    BATON_HEARTBEAT_MS: '500',
    BATON_WORKFLOWS: code,
    BATON_WORKER_ID: id,
    BATON_MISSING_VERSION_GRACE_MS: String(GRACE_MS),
    BATON_LOG_LEVEL: 'debug',
  });
  processes.push(worker);
  return worker;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Started {
  runId: string;
  version: 1 | 2;
  n: number;
}

describe.each([
  ['nats', 'redis'],
  ['kafka', 'postgres'],
] as const)('starts during a rolling update (%s + %s, worker processes)', (bus, storeKind) => {
  it(
    'sends every v2 start to a live v2 worker, redrives the early ones by itself, and completes every run once',
    { timeout: 120_000 },
    async () => {
      env = await crashEnvironment(storeKind, bus)(`vr${randomBytes(5).toString('hex')}`, {});
      await env.transport.connect();
      await env.store.connect();
      client = new Client({ transport: env.transport, store: env.store });
      const started: Started[] = [];
      let n = 0;
      const start = async (version: 1 | 2): Promise<Started> => {
        const input = { n: n++, ms: ACTIVITY_MS };
        const handle = await client!.start({ name: WORKFLOW, version }, input);
        const s = { runId: handle.runId, version, n: input.n };
        started.push(s);
        return s;
      };

      const old = ['v1-a', 'v1-b', 'v1-c'].map((id) => spawnWorker(id, V1_CODE));
      await Promise.all(old.map((w) => w.ready()));
      for (let i = 0; i < 6; i++) await start(1);

      // The producer is on v2 before any worker is: these wait, then are dead-lettered.
      const early = await Promise.all([start(2), start(2), start(2)]);
      await until('the early v2 starts dead-lettered', async () => {
        const letters = (await client!.deadLetters.list()).letters;
        return letters.filter((l) => l.code === 'unknown-workflow').length === early.length
          ? true
          : undefined;
      });

      // The rolling update: a v2 worker joins (maxSurge 1), then an old one gets SIGTERM.
      let firstV2Ready = false;
      const sentWithV2Live: Started[] = [];
      for (let i = 0; i < 3; i++) {
        const fresh = spawnWorker(`v2-${i}`, V2_CODE);
        await fresh.ready();
        firstV2Ready = true;
        for (let k = 0; k < 5; k++) {
          sentWithV2Live.push(await start(2));
          await start(1);
        }
        old[i]!.signal('SIGTERM');
        const exit = await old[i]!.exited;
        expect(exit.code, old[i]!.describe()).toBe(0);
        for (let k = 0; k < 5; k++) sentWithV2Live.push(await start(2));
        await sleep(200);
      }
      expect(firstV2Ready).toBe(true);

      // Every run completes with its own version's output.
      for (const s of started) {
        const result = await client.result(s.runId, { timeoutMs: 60_000 });
        expect(result).toBe(`v${s.version}:${s.n}:${ACTIVITY_MS}`);
      }

      // A worker logs `run-completed` after the store says completed, and its stdout reaches this
      // process later still: wait for every run's line before reading the logs.
      const fleetLogs = (): Array<LogLine & { worker: string }> =>
        processes.flatMap((p) => p.logs.map((l) => ({ ...l, worker: p.name })));
      await until(
        'a run-completed line of every run',
        async () => {
          const logged = new Set(
            fleetLogs()
              .filter((l) => l.msg === 'run-completed')
              .map((l) => l.runId),
          );
          return started.every((s) => logged.has(s.runId)) ? true : undefined;
        },
        10_000,
      ).catch(() => undefined); // the checks below name the run whose line never came
      const logs = fleetLogs();
      // Dead letters: only the early starts, never one sent while a v2 worker was live.
      const deadLettered = logs.filter((l) => l.msg === 'message dead-lettered').map((l) => l.runId);
      expect(new Set(deadLettered)).toEqual(new Set(early.map((s) => s.runId)));
      for (const s of sentWithV2Live) expect(deadLettered).not.toContain(s.runId);
      // The early ones were redriven by a v2 worker by itself.
      const redriven = logs
        .filter((l) => l.msg === 'dead-letters-redriven')
        .flatMap((l) => l.runIds as string[]);
      expect(new Set(redriven)).toEqual(new Set(early.map((s) => s.runId)));
      expect((await client.deadLetters.list()).letters).toEqual([]);

      // Each run completed once across the fleet (leases stay the authority).
      const completions = new Map<string, number>();
      for (const l of logs.filter((x) => x.msg === 'run-completed')) {
        completions.set(l.runId as string, (completions.get(l.runId as string) ?? 0) + 1);
      }
      for (const s of started) expect(completions.get(s.runId), s.runId).toBe(1);
      // A v2 run only ever ran on a v2 worker.
      const v2Runs = new Set(started.filter((s) => s.version === 2).map((s) => s.runId));
      const v2Claims = logs.filter((l) => l.msg === 'run-claimed' && v2Runs.has(l.runId as string));
      for (const c of v2Claims) expect(c.worker, c.runId as string).toMatch(/^v2-/);

      // Put-backs per run, for the docs.
      const putBacks = logs.filter((l) => l.msg === 'run-put-back');
      const perRun = new Map<string, number>();
      for (const l of putBacks) perRun.set(l.runId as string, (perRun.get(l.runId as string) ?? 0) + 1);
      const live = sentWithV2Live.map((s) => perRun.get(s.runId) ?? 0);
      const toHolder = putBacks.filter((l) => l.toHolder === true).length;
      console.log(
        `[${bus}+${storeKind}] ${started.length} runs (${sentWithV2Live.length} v2 starts with a v2 worker live, ` +
          `${early.length} before): put-backs ${putBacks.length} (${toHolder} toward a live holder); ` +
          `per v2 start sent with a v2 worker live: mean ${(live.reduce((a, b) => a + b, 0) / live.length).toFixed(2)}, ` +
          `max ${Math.max(...live)}, put back at all ${live.filter((c) => c > 0).length}/${live.length}`,
      );
    },
  );
});

describe('a fleet that stays mixed on Kafka (kafka + postgres, worker processes)', () => {
  it(
    'passes the runs of a version the partition owner lacks on to a worker that has it, with no rebalance',
    { timeout: 120_000 },
    async () => {
      env = await crashEnvironment('postgres', 'kafka')(`vk${randomBytes(5).toString('hex')}`, {});
      await env.transport.connect();
      await env.store.connect();
      client = new Client({ transport: env.transport, store: env.store });
      // A has no version of route_wait; B has only version 2. Their ids split the 6 partitions 4/2
      // (the live workers' rendezvous hashing, BATON_KAFKA_PARTITION_OWNERSHIP=presence), so most
      // wakes land on A and must be passed on.
      const a = spawnWorker('mixed-a0', V1_CODE);
      const b = spawnWorker('mixed-b0', V2_ONLY_CODE);
      await Promise.all([a.ready(), b.ready()]);
      // The group settled: A and B hold the 6 partitions between them, so no rebalance is due.
      const held = (w: WorkerProcess): number[] =>
        (w.logs.findLast((l) => PARTITION_LOGS.has(l.msg as string))?.partitions as number[]) ?? [];
      await until('both members holding partitions', async () => {
        const [pa, pb] = [held(a), held(b)];
        return pa.length > 0 &&
          pb.length > 0 &&
          new Set([...pa, ...pb]).size === 6 &&
          pa.length + pb.length === 6
          ? true
          : undefined;
      });
      const heldA = held(a);
      const runs: string[] = [];
      for (let i = 0; i < 20; i++)
        runs.push((await client.start({ name: 'route_wait', version: 2 }, i)).runId);
      await until('every run waiting for its signal', async () => {
        for (const runId of runs)
          if ((await env!.store.runs.get(runId))?.status !== 'suspended') return undefined;
        return true;
      });
      // Each signal's wake is keyed by its run: about half land on A's partitions.
      for (const runId of runs) await client.signal(runId, 'go', 'ok');
      for (const [i, runId] of runs.entries()) {
        expect(await client.result(runId, { timeoutMs: 60_000 })).toBe(`waited:${i}:ok`);
      }
      const putBacks = a.logs.filter((l) => l.msg === 'run-put-back');
      // A passed wakes of runs under way (not only starts) on toward B.
      expect(putBacks.some((l) => l.start === false && l.toHolder === true)).toBe(true);
      expect(putBacks.every((l) => l.toHolder === true)).toBe(true);
      // B logs `run-completed` after the store says completed; its stdout arrives later still.
      await until(
        "B's run-completed line of every run",
        async () =>
          b.logs.filter((l) => l.msg === 'run-completed').length >= runs.length ? true : undefined,
        10_000,
      ).catch(() => undefined); // the check below says how many came
      expect(b.logs.filter((l) => l.msg === 'run-completed')).toHaveLength(runs.length);
      expect(a.logs.filter((l) => l.msg === 'run-claimed')).toEqual([]);
      // No rebalance happened on the way: each member still holds what it held before the runs.
      expect(a.logs.filter((l) => PARTITION_LOGS.has(l.msg as string)).at(-1)?.partitions).toEqual(heldA);
      expect((await client.deadLetters.list()).letters).toEqual([]);
      const perRun = new Map<string, number>();
      for (const l of putBacks) perRun.set(l.runId as string, (perRun.get(l.runId as string) ?? 0) + 1);
      // The wakes travel once the group is settled (the starts may meet the first join's rebalance).
      const wakes = putBacks.filter((l) => l.start === false);
      const wakesPerRun = new Map<string, number>();
      for (const l of wakes)
        wakesPerRun.set(l.runId as string, (wakesPerRun.get(l.runId as string) ?? 0) + 1);
      console.log(
        `[kafka+postgres, mixed] ${runs.length} runs: put-backs (passed on) ${putBacks.length}, ` +
          `max per run ${Math.max(0, ...perRun.values())}; of the wakes: ${wakes.length} for ` +
          `${wakesPerRun.size} runs, max per run ${Math.max(0, ...wakesPerRun.values())}`,
      );
    },
  );
});
