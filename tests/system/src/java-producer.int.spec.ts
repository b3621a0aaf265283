/**
 * A producer in another language, written from docs/wire-protocol.md alone: the Java producer of
 * examples/java-producer (the JDK, the NATS and the Kafka Java clients, nothing of Baton), built
 * with Maven by examples/java-producer/build.sh (the local ~/.m2; Maven Central on a first build)
 * and run as a process against in-process workers on real NATS + Redis and Kafka + Redis, each pair
 * in a namespace of its own (its prefixes), so the spec runs beside any other.
 *
 * On each bus one invocation starts a run with an idempotency key, starts it again with another
 * input, starts a second run by id, signals the first and cancels the second; a later invocation
 * repeats the keyed start and the signal once the run has finished. The runs end as the messages
 * say (the first start's input, the signal's payload, the cancel's reason), the store holds the
 * two runs and no more, and the run ids and Kafka partitions the Java code computed are the ones
 * Baton computes.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineSignal, defineWorkflow } from '@baton/core';
import { runIdForKey } from '@baton/core/runtime';
import { REPO_ROOT } from '@baton/testing/crash';
import { partitionForKey } from '@baton/transport-kafka';
import {
  IN_PROCESS_PAIRS,
  inProcessNamespace,
  startInProcessWorkers,
  until,
} from './in-process.spec-helper.js';

const BUILD_SCRIPT = resolve(REPO_ROOT, 'examples/java-producer/build.sh');
/** A first build downloads the producer's libraries and Maven's plugins (about 60 MB). */
const FIRST_BUILD_MS = 300_000;

const greeting = defineSignal<string>('greeting');
const wireGreet = defineWorkflow({
  name: 'wire_greet',
  version: 1,
  run: async (ctx, input: { name: string }) => `${await ctx.waitForSignal(greeting)}, ${input.name}`,
});

/** One line the Java producer printed: what it sent and the bus's answer. */
interface SentLine {
  kind: string;
  runId: string;
  to: string;
  duplicate: boolean;
  partition?: number;
  position?: number;
}

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runProcess(file: string, args: string[], timeoutMs: number): Promise<Finished> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd: REPO_ROOT, timeout: timeoutMs, encoding: 'utf8' },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
      },
    );
  });
}

let jar = '';

beforeAll(async () => {
  const built = await runProcess('bash', [BUILD_SCRIPT], FIRST_BUILD_MS);
  expect(built.code, `examples/java-producer/build.sh failed:\n${built.stderr}`).toBe(0);
  jar = built.stdout.trim().split('\n').at(-1)!;
}, FIRST_BUILD_MS + 10_000);

for (const pair of IN_PROCESS_PAIRS.filter((p) => p.name === 'nats+redis' || p.name === 'kafka+redis')) {
  const bus = pair.name.startsWith('kafka') ? 'kafka' : 'nats';

  describe(`a Java producer on ${pair.name}`, () => {
    const ns = inProcessNamespace(pair.factory, 'javaprod');

    /** Runs the Java producer with `commands` on this namespace's bus; its lines, parsed. */
    async function javaProducer(...commands: string[]): Promise<SentLine[]> {
      const env = ns.workerEnv;
      const prefix = bus === 'kafka' ? env.BATON_KAFKA_PREFIX! : env.BATON_NATS_PREFIX!;
      const ran = await runProcess(
        'java',
        ['-jar', jar, bus, env.BATON_TRANSPORT_URL!, prefix, ...commands],
        60_000,
      );
      expect(ran.code, `the Java producer failed:\n${ran.stderr}`).toBe(0);
      return ran.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as SentLine);
    }

    it(
      'enqueues runs the fleet completes: one run per key, the signal delivered, the cancel applied',
      {
        timeout: 60_000,
      },
      async () => {
        await startInProcessWorkers(ns, { workflows: [wireGreet] });
        const key = `order-${bus}-42`;
        const keyed = runIdForKey('wire_greet', key);
        const other = `java-${bus}-cancelled`;

        const sent = await javaProducer(
          ...['start', 'wire_greet', '1', '{"name":"Ada"}', '--key', key],
          ...['start', 'wire_greet', '1', '{"name":"Bob"}', '--key', key],
          ...['start', 'wire_greet', '1', '{"name":"Grace"}', '--run-id', other],
          ...['signal', keyed, 'greeting', '"Hello"', '--signal-id', 'greeting-1'],
          ...['cancel', other, 'withdrawn by the Java producer'],
        );
        expect(sent.map((s) => [s.kind, s.runId])).toEqual([
          ['start', keyed],
          ['start', keyed],
          ['start', other],
          ['signal', keyed],
          ['cancel', other],
        ]);
        const prefix = bus === 'kafka' ? ns.workerEnv.BATON_KAFKA_PREFIX! : ns.workerEnv.BATON_NATS_PREFIX!;
        expect(new Set(sent.map((s) => s.to))).toEqual(new Set([`${prefix}.runs`]));
        if (bus === 'nats') {
          // The stream dropped the repeat by its Nats-Msg-Id.
          expect(sent.map((s) => s.duplicate)).toEqual([false, true, false, false, false]);
        } else {
          // Placed where kafkajs places a record keyed by the run id, so one run's messages keep their order.
          const partitions = Number(ns.workerEnv.BATON_KAFKA_PARTITIONS ?? 12);
          for (const s of sent) expect(s.partition).toBe(partitionForKey(s.runId, partitions));
        }

        await expect(ns.client.result(keyed, { timeoutMs: 30_000 })).resolves.toBe('Hello, Ada');
        await expect(ns.client.result(other, { timeoutMs: 30_000 })).rejects.toMatchObject({
          name: 'CancelledError',
          reason: 'withdrawn by the Java producer',
        });
        expect(await ns.client.describe(keyed)).toMatchObject({
          status: 'completed',
          input: { name: 'Ada' },
          idempotencyKey: key,
        });

        // Once it has finished: the same start and the same signal again change nothing.
        const again = await javaProducer(
          ...['start', 'wire_greet', '1', '{"name":"Eve"}', '--key', key],
          ...['signal', keyed, 'greeting', '"Bye"', '--signal-id', 'greeting-1'],
        );
        expect(again.map((s) => s.runId)).toEqual([keyed, keyed]);
        await until(async () => (await ns.client.fleet.backlog()).total === 0, 'the repeats to be taken');
        const runs = (await ns.client.runs.list({ workflow: 'wire_greet' })).runs;
        expect(runs.map((r) => [r.runId, r.status]).sort()).toEqual(
          [
            [keyed, 'completed'],
            [other, 'cancelled'],
          ].sort(),
        );
        await expect(ns.client.result(keyed)).resolves.toBe('Hello, Ada');
      },
    );
  });
}
