/**
 * The demo producer on the real NATS server: the runs it reports really are on the run queue, as
 * start messages of `order_fulfilment` v1 with distinct orders; it stops cleanly on SIGTERM; a bad
 * variable ends it at start with one fatal line naming the variable.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeMessage, openValue, resolvePayloadProtection, type StartMessage } from '@baton/core/runtime';
import { deleteNatsStreams, natsTransport } from '@baton/transport-nats';
import { natsTestUrl } from '@baton/testing/servers';
import { orderFulfilment, type OrderInput } from './examples/orders.js';
import { PRODUCER_ENV, readProducerConfig, runProducer } from './producer.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const PRODUCER_MAIN = resolve(REPO_ROOT, 'apps/worker/src/producer-main.ts');

/** This file's own streams on the shared server, removed afterwards. */
const PREFIX = `prod${process.pid}x${Date.now()}`;
const SIGNAL_PREFIX = `${PREFIX}sig`;

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A pino logger whose JSON lines the test can read. */
function capturingLogger(): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as LogLine) },
  );
  return { logger, lines };
}

/** Takes every message on the prefix's run queue (acking each), waiting up to `timeoutMs` for `expected`. */
async function drainRunQueue(prefix: string, expected: number, timeoutMs = 10_000): Promise<StartMessage[]> {
  const transport = natsTransport({ servers: natsTestUrl(), prefix });
  await transport.connect();
  const found: StartMessage[] = [];
  try {
    const deadline = Date.now() + timeoutMs;
    while (found.length < expected && Date.now() < deadline) {
      for (const delivery of await transport.runQueue.fetch({ max: 50, expiresMs: 500 })) {
        const message = decodeMessage(delivery.data);
        if (message.kind === 'start') found.push(message);
        await delivery.ack();
      }
    }
    // Anything beyond the expected count would show up here.
    for (const delivery of await transport.runQueue.fetch({ max: 50, expiresMs: 300 })) {
      const message = decodeMessage(delivery.data);
      if (message.kind === 'start') found.push(message);
      await delivery.ack();
    }
  } finally {
    await transport.close();
  }
  return found;
}

describe('producer on NATS', () => {
  afterAll(async () => {
    await deleteNatsStreams({ servers: natsTestUrl(), prefix: PREFIX });
    await deleteNatsStreams({ servers: natsTestUrl(), prefix: SIGNAL_PREFIX });
  });

  it('enqueues the requested runs, each a start of order_fulfilment v1', { timeout: 30_000 }, async () => {
    const { logger, lines } = capturingLogger();
    const code = await runProducer(
      {
        BATON_TRANSPORT_URL: natsTestUrl(),
        BATON_NATS_PREFIX: PREFIX,
        [PRODUCER_ENV.rate]: '20',
        [PRODUCER_ENV.runs]: '5',
        BATON_LOG_LEVEL: 'debug',
      },
      logger,
    );
    expect(code).toBe(0);

    const reported = lines.filter((l) => l.msg === 'run enqueued').map((l) => l.runId as string);
    expect(reported).toHaveLength(5);
    expect(lines.at(-1)).toMatchObject({ msg: 'producer done: 5 runs enqueued', enqueued: 5, failed: 0 });

    const messages = await drainRunQueue(PREFIX, 5);
    expect(messages.map((m) => m.runId).sort()).toEqual([...reported].sort());
    for (const message of messages) {
      expect(message).toMatchObject({ workflow: orderFulfilment.name, version: orderFulfilment.version });
      const input = message.input as OrderInput;
      expect(input.lines.length).toBeGreaterThan(0);
      expect(message.idempotencyKey).toBe(`order-${input.orderId}`);
    }
    expect(new Set(messages.map((m) => (m.input as OrderInput).orderId)).size).toBe(5);
  });

  it(
    'seals each input with the fleet keys it is given (BATON_ENCRYPTION_KEYS)',
    { timeout: 30_000 },
    async () => {
      const { logger } = capturingLogger();
      const prefix = `${PREFIX}k`;
      const keys = `k1:${randomBytes(32).toString('base64')}`;
      const code = await runProducer(
        {
          BATON_TRANSPORT_URL: natsTestUrl(),
          BATON_NATS_PREFIX: prefix,
          [PRODUCER_ENV.rate]: '20',
          [PRODUCER_ENV.runs]: '2',
          BATON_ENCRYPTION_KEYS: keys,
        },
        logger,
      );
      expect(code).toBe(0);
      const messages = await drainRunQueue(prefix, 2);
      await deleteNatsStreams({ servers: natsTestUrl(), prefix });
      expect(messages).toHaveLength(2);
      const protection = resolvePayloadProtection({ encryptionKeys: keys }, {});
      for (const message of messages) {
        expect(message.input).toMatchObject({ '$baton.sealed': 1, key: 'k1' });
        const input = openValue(message.input, message.runId, 'run input', protection) as OrderInput;
        expect(message.idempotencyKey).toBe(`order-${input.orderId}`);
      }
    },
  );

  it('stops when asked, with exit code 0 and the count so far', { timeout: 30_000 }, async () => {
    const { logger, lines } = capturingLogger();
    const stop = new AbortController();
    const running = runProducer(
      {
        BATON_TRANSPORT_URL: natsTestUrl(),
        BATON_NATS_PREFIX: PREFIX,
        [PRODUCER_ENV.rate]: '50',
      },
      logger,
      { signal: stop.signal },
    );
    await expect.poll(() => lines.some((l) => l.msg === 'producer ready'), { timeout: 10_000 }).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    stop.abort();
    expect(await running).toBe(0);
    const last = lines.at(-1)!;
    expect(last.msg).toMatch(/^producer stopped: \d+ runs enqueued$/);
    expect(last.enqueued as number).toBeGreaterThan(0);
    expect(await drainRunQueue(PREFIX, last.enqueued as number)).toHaveLength(last.enqueued as number);
  });

  it(
    'as a process: keeps its heartbeat file fresh, and on SIGTERM exits 0 and removes it',
    { timeout: 60_000 },
    async () => {
      const heartbeat = join(tmpdir(), `baton-producer-${process.pid}-${Date.now()}.heartbeat`);
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--conditions=@baton/source', PRODUCER_MAIN],
        {
          cwd: REPO_ROOT,
          env: {
            ...process.env,
            BATON_TRANSPORT_URL: natsTestUrl(),
            BATON_NATS_PREFIX: SIGNAL_PREFIX,
            BATON_LOG_LEVEL: 'info',
            [PRODUCER_ENV.rate]: '10',
            [PRODUCER_ENV.heartbeatFile]: heartbeat,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const lines: LogLine[] = [];
      const stderr: string[] = [];
      createInterface({ input: child.stdout }).on('line', (line) => {
        try {
          lines.push(JSON.parse(line) as LogLine);
        } catch {
          stderr.push(line);
        }
      });
      createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      try {
        await expect
          .poll(() => lines.some((l) => l.msg === 'producer ready'), { timeout: 30_000 })
          .toBe(true);
        expect(existsSync(heartbeat)).toBe(true);
        expect(Date.now() - Number(readFileSync(heartbeat, 'utf8'))).toBeLessThan(30_000);
        await new Promise((r) => setTimeout(r, 500));
        child.kill('SIGTERM');
        expect(await exited, stderr.join('\n')).toBe(0);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      expect(
        lines.some((l) => l.msg === 'stopping: no further runs are enqueued' && l.signal === 'SIGTERM'),
      ).toBe(true);
      expect(lines.at(-1)?.msg).toMatch(/^producer stopped: \d+ runs enqueued$/);
      expect(existsSync(heartbeat)).toBe(false);
    },
  );
});

describe('producer configuration', () => {
  const GOOD = { BATON_TRANSPORT_URL: 'nats://127.0.0.1:4222' };

  it.each(['abc', '0', '-1', '1e3', '2 runs', '1001'])(
    'a BATON_PRODUCER_RATE of %j ends the producer at start, naming the variable',
    async (rate) => {
      const { logger, lines } = capturingLogger();
      const code = await runProducer({ ...GOOD, [PRODUCER_ENV.rate]: rate }, logger);
      expect(code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 60 });
      expect(lines[0]!.msg).toContain(`BATON_PRODUCER_RATE is '${rate}'`);
    },
  );

  it('reads rates, totals and defaults', () => {
    expect(readProducerConfig(GOOD)).toMatchObject({ rate: 2, runs: 0, heartbeatFile: undefined });
    expect(
      readProducerConfig({ ...GOOD, [PRODUCER_ENV.rate]: '0.5', [PRODUCER_ENV.runs]: '10' }),
    ).toMatchObject({
      rate: 0.5,
      runs: 10,
    });
  });

  it('names a bad BATON_PRODUCER_RUNS, a missing bus and a bad bus variable', () => {
    expect(() => readProducerConfig({ ...GOOD, [PRODUCER_ENV.runs]: '-5' })).toThrow(
      /BATON_PRODUCER_RUNS is '-5'/,
    );
    expect(() => readProducerConfig({})).toThrow(/BATON_TRANSPORT_URL is not set/);
    expect(() => readProducerConfig({ ...GOOD, BATON_NATS_ACK_WAIT_MS: 'soon' })).toThrow(
      /BATON_NATS_ACK_WAIT_MS is 'soon'/,
    );
  });

  it('refuses a bus it cannot share with the workers, naming the variable', async () => {
    const { logger, lines } = capturingLogger();
    expect(await runProducer({ BATON_TRANSPORT_URL: 'memory:' }, logger)).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toMatch(/^invalid configuration: BATON_TRANSPORT_URL is memory:/);
  });

  it('neither reads nor checks the worker-only variables', () => {
    expect(() =>
      readProducerConfig({ ...GOOD, BATON_CONCURRENCY: 'lots', BATON_STORE_URL: '', BATON_WORKFLOWS: '' }),
    ).not.toThrow();
  });
});
