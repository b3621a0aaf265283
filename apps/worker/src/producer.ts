/**
 * The demo producer: enqueues `order_fulfilment` runs (see `examples/orders.ts`) at a steady rate
 * through a `Client` on the bus the workers use, so a fleet has work to take over when one of its
 * workers is killed. Configured by environment like the worker process:
 *
 * - the worker's bus variables (BATON_TRANSPORT_URL, BATON_NATS_* / BATON_KAFKA_*), read and
 *   validated by the worker's own code (`producer-config.ts`), and BATON_LOG_LEVEL;
 * - BATON_PRODUCER_RATE runs per second (default 2), BATON_PRODUCER_RUNS in total (default 0 =
 *   until stopped), BATON_PRODUCER_HEARTBEAT_FILE (optional: a file rewritten every few seconds
 *   while enqueues succeed, for a container healthcheck);
 * - the workers' payload protection (BATON_ENCRYPTION_KEYS and the rest): with keys, each input is
 *   sealed before it is sent (docs/integrity.md). Without them, a fleet that requires encryption
 *   dead-letters every start (`unprotected-payload`): the producer has no store to read that from.
 *
 * Lifecycle: validate everything -> connect -> enqueue until the total is reached or SIGTERM/SIGINT
 * -> close -> exit 0. An invalid variable or an unreachable bus ends it with exit code 1 and one
 * `fatal` line naming the variable or the server. A failed enqueue (the bus restarting) is logged
 * and the same order is tried again; its idempotency key keeps a retry from starting a second run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { Client } from '@baton/client';
import { ConfigError } from '@baton/core';
import type { Transport } from '@baton/core/adapter';
import { resolvePayloadProtection, type PayloadProtection } from '@baton/core/runtime';
import { maskUrl, PRODUCER_ENV, readTransportConfig, transportFromEnvConfig, VARIABLES } from '@baton/host';
import { demoOrder, orderFulfilment } from './examples/orders.js';
import { withTimeout } from './timeout.js';

/** The producer's own environment variables (declared with every other in `@baton/host`'s VARIABLES). */
export { PRODUCER_ENV };

/** Every environment variable the producer reads: the VARIABLES rows read by `producer`. */
export const PRODUCER_READS: readonly string[] = VARIABLES.filter((v) => v.readBy.includes('producer')).map(
  (v) => v.name,
);

export const PRODUCER_DEFAULTS = { rate: 2, runs: 0 } as const;
/** Highest accepted rate: beyond it timers are too coarse for a steady pace. */
export const MAX_PRODUCER_RATE = 1_000;
/** How often the progress line is logged. */
export const PROGRESS_INTERVAL_MS = 10_000;
/** How often the heartbeat file is rewritten while enqueues succeed. */
export const HEARTBEAT_INTERVAL_MS = 5_000;
/** How long connecting to the bus may take before start-up fails. */
const CONNECT_TIMEOUT_MS = 15_000;
/** After a stop signal, how long an enqueue in flight may take before the bus is closed under it. */
const STOP_GRACE_MS = 5_000;

type Env = Record<string, string | undefined>;

export interface ProducerConfig {
  /** Runs enqueued per second. */
  rate: number;
  /** Runs to enqueue in total; 0 = until stopped. */
  runs: number;
  heartbeatFile: string | undefined;
  transport: ReturnType<typeof readTransportConfig>;
  /** The workers' keys, to seal each input with (docs/integrity.md). */
  payloadProtection: PayloadProtection;
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** Reads and validates the producer's configuration; throws ConfigError naming the first bad variable. */
export function readProducerConfig(env: Env): ProducerConfig {
  const transport = readTransportConfig(env);

  const rawRate = optional(env, PRODUCER_ENV.rate);
  const rate = rawRate === undefined ? PRODUCER_DEFAULTS.rate : Number(rawRate);
  if (rawRate !== undefined && (!/^\d+(\.\d+)?$/.test(rawRate) || !(rate > 0) || rate > MAX_PRODUCER_RATE)) {
    throw new ConfigError(
      `${PRODUCER_ENV.rate} is '${rawRate}'; it must be a number of runs per second above 0 and at most ` +
        `${MAX_PRODUCER_RATE}, for example 2 or 0.5`,
    );
  }

  const rawRuns = optional(env, PRODUCER_ENV.runs);
  const runs = rawRuns === undefined ? PRODUCER_DEFAULTS.runs : Number(rawRuns);
  if (rawRuns !== undefined && (!/^\d+$/.test(rawRuns) || !Number.isSafeInteger(runs))) {
    throw new ConfigError(
      `${PRODUCER_ENV.runs} is '${rawRuns}'; it must be a whole number of runs (0 = until stopped)`,
    );
  }

  return {
    rate,
    runs,
    heartbeatFile: optional(env, PRODUCER_ENV.heartbeatFile),
    transport,
    payloadProtection: resolvePayloadProtection({}, env),
  };
}

function writeHeartbeatNow(path: string): void {
  try {
    writeFileSync(path, `${Date.now()}\n`);
  } catch (err) {
    throw new ConfigError(
      `${PRODUCER_ENV.heartbeatFile} names ${path}, which cannot be written: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** Resolves after `ms`, or at once when `signal` is aborted. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export interface RunProducerOptions {
  /** Stops the producer like SIGTERM does (for embedding and tests). */
  signal?: AbortSignal;
}

/** Runs the producer until its total is reached or it is stopped; resolves with the exit code. */
export async function runProducer(
  env: Env,
  logger: Logger,
  options: RunProducerOptions = {},
): Promise<number> {
  let config: ProducerConfig;
  let transport: Transport;
  try {
    config = readProducerConfig(env);
    // Inside the check: building the transport reads the credential and CA files the variables name.
    const kafkaLogger = logger.child({ component: 'kafkajs' });
    transport = await transportFromEnvConfig(config.transport, (level, message, extra) =>
      kafkaLogger[level === 'error' ? 'warn' : level](extra, message),
    );
    if (config.heartbeatFile !== undefined) writeHeartbeatNow(config.heartbeatFile);
  } catch (err) {
    const message = (err as Error).message;
    logger.fatal({ err: { message } }, `invalid configuration: ${message}`);
    return 1;
  }
  logger.level = config.transport.logLevel;
  const busUrl = maskUrl(config.transport.config.transportUrl);

  // Stop requests: SIGTERM (docker stop, Kubernetes), SIGINT (Ctrl-C), or the caller's signal.
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) return;
    logger.info({ signal }, 'stopping: no further runs are enqueued');
    stop.abort();
  };
  const onCallerAbort = (): void => stop.abort();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  if (options.signal?.aborted) stop.abort();

  const stopped = new Promise<'stopped'>((resolve) => {
    if (stop.signal.aborted) resolve('stopped');
    else stop.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
  });

  let progressTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  try {
    const client = new Client({ transport, payloadProtection: config.payloadProtection });
    try {
      const connected = withTimeout(`bus ${busUrl}`, client.connect(), CONNECT_TIMEOUT_MS);
      connected.catch(() => undefined); // observed below, or abandoned by a stop
      if ((await Promise.race([connected.then(() => 'connected' as const), stopped])) === 'stopped') {
        logger.info({ enqueued: 0 }, 'producer stopped before it connected');
        return 0;
      }
    } catch (err) {
      logger.fatal({ err }, `start-up failed: ${(err as Error).message}`);
      return 1;
    }

    const { rate, runs } = config;
    const intervalMs = 1_000 / rate;
    // Order ids are unique per producer process, so two producers (or a restarted one) never collide.
    const producerId = randomUUID().slice(0, 8);
    let enqueued = 0;
    let failed = 0;
    let healthy = true;
    logger.info(
      {
        transport: busUrl,
        workflow: `${orderFulfilment.name}@${orderFulfilment.version}`,
        ratePerSecond: rate,
        runs: runs === 0 ? 'until stopped' : runs,
        producerId,
      },
      'producer ready',
    );

    progressTimer = setInterval(() => {
      logger.info({ enqueued, failed, ratePerSecond: rate }, `progress: ${enqueued} runs enqueued`);
    }, PROGRESS_INTERVAL_MS);
    progressTimer.unref();
    const heartbeatFile = config.heartbeatFile;
    if (heartbeatFile !== undefined) {
      heartbeatTimer = setInterval(() => {
        if (!healthy) return;
        writeFile(heartbeatFile, `${Date.now()}\n`).catch((err: unknown) =>
          logger.warn({ err, file: heartbeatFile }, 'writing the heartbeat file failed'),
        );
      }, HEARTBEAT_INTERVAL_MS);
      heartbeatTimer.unref();
    }

    const loop = (async () => {
      let nextAt = Date.now();
      while (!stop.signal.aborted && (runs === 0 || enqueued < runs)) {
        const wait = nextAt - Date.now();
        if (wait > 0) await pause(wait, stop.signal);
        if (stop.signal.aborted) break;
        const n = enqueued + 1;
        const orderId = `${producerId}-${n}`;
        try {
          const run = await client.start(orderFulfilment, demoOrder(orderId, n), {
            idempotencyKey: `order-${orderId}`,
          });
          enqueued = n;
          healthy = true;
          logger.debug({ runId: run.runId, orderId, n }, 'run enqueued');
          nextAt += intervalMs;
          // Fallen behind (a slow bus): keep the pace from now on instead of sending a burst.
          if (Date.now() - nextAt > 1_000) nextAt = Date.now();
        } catch (err) {
          if (stop.signal.aborted) break;
          failed += 1;
          healthy = false;
          logger.warn({ err, orderId }, 'enqueue failed; trying the same order again');
          nextAt = Date.now() + Math.max(intervalMs, 1_000);
        }
      }
    })();

    // A stop waits for the enqueue in flight, but not forever: the bus is then closed under it.
    const stopGrace = stopped.then(() => sleep(STOP_GRACE_MS, undefined, { ref: false }));
    await Promise.race([loop, stopGrace]);
    const reason = stop.signal.aborted ? 'stopped' : 'done';
    logger.info(
      { enqueued, failed },
      reason === 'done'
        ? `producer done: ${enqueued} runs enqueued`
        : `producer stopped: ${enqueued} runs enqueued`,
    );
    return 0;
  } finally {
    clearInterval(progressTimer);
    clearInterval(heartbeatTimer);
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    options.signal?.removeEventListener('abort', onCallerAbort);
    await transport.close().catch((err: unknown) => logger.warn({ err }, 'closing the bus failed'));
    if (config.heartbeatFile !== undefined)
      await rm(config.heartbeatFile, { force: true }).catch(() => undefined);
  }
}
