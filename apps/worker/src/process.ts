/**
 * The worker process's lifecycle, apart from `main.ts` so tests can read it:
 * configure -> connect -> run until SIGTERM/SIGINT -> drain (hand every run off) -> close -> exit.
 *
 * Invariants:
 * 1. Nothing connects before the whole configuration is valid.
 * 2. On a signal the worker stops claiming and hands off every owned run before the connections
 *    close; past `shutdownTimeoutMs` the process exits anyway (its leases then expire and other
 *    workers' reapers resume the runs).
 * 3. A failed start exits with code 1 and a log line naming the cause, never a hang.
 * 4. The HTTP server (/healthz, /readyz, /metrics) listens before anything connects, so probes
 *    answer during start-up, and closes last, after the hand-off.
 */
import type { Logger } from 'pino';
import type { AnyWorkflowDefinition } from '@baton/core';
import { describePayloadProtection, payloadKeyFingerprints } from '@baton/core/runtime';
import type { AdapterLogHook } from '@baton/core/adapter';
import { Worker } from '@baton/worker';
import {
  ENV,
  largePayloadsFromConfig,
  loadAdapterCode,
  loadWorkflows,
  maskUrl,
  namespacesInUse,
  namingVariables,
  readConfig,
  registrationFor,
  storeFromConfig,
  transportFromConfig,
  type WorkerAppConfig,
} from '@baton/host';
import { WorkerHttpServer } from './http-server.js';
import { startTelemetry } from './telemetry.js';
import { logEvent } from './event-log.js';
import { withTimeout } from './timeout.js';

/** How long connect() of the bus or the store may take before start-up fails. */
const CONNECT_TIMEOUT_MS = 15_000;

/** Runs the worker until a signal; resolves with the exit code. */
export async function runWorkerProcess(env: NodeJS.ProcessEnv, logger: Logger): Promise<number> {
  let config;
  let workflows;
  try {
    config = readConfig(env);
    workflows = await loadWorkflows(config.workflowModules);
  } catch (err) {
    logger.fatal(
      { err: { message: (err as Error).message } },
      `invalid configuration: ${(err as Error).message}`,
    );
    return 1;
  }
  logger.level = config.logLevel;

  // Only the chosen bus's and store's code, read while the rest starts; awaited before they are built.
  const adapterCode = loadAdapterCode(config);
  adapterCode.catch(() => undefined); // reported where it is awaited
  // Before any Worker exists: its metric instruments bind to the provider registered here.
  const telemetry = await startTelemetry(env, 'baton-worker');
  // The probes answer from the moment the server listens; the Worker is built after it.
  const probed: { worker?: Worker } = {};
  const http = new WorkerHttpServer({
    ...config.http,
    source: { health: () => probed.worker?.health() },
    serveMetrics: (req, res) => telemetry.serveMetrics(req, res),
  });
  let httpPort: number;
  try {
    httpPort = await http.listen();
  } catch (err) {
    logger.fatal(
      { err },
      `cannot serve /healthz on ${config.http.host}:${config.http.port}: ${(err as Error).message}; ` +
        `set ${ENV.httpPort} to a free port (0 picks one), and ${ENV.httpHost} to an address of this host`,
    );
    await telemetry.shutdown().catch(() => undefined);
    return 1;
  }

  // The bus's client library's own lines (kafkajs), under the component its registration names.
  const busLogger = logger.child({
    component: registrationFor('transport', config.transportUrl)?.logComponent ?? 'transport',
  });
  // The adapters and the Worker check their own options: a mistake there is a configuration
  // error too, reported like readConfig's (one fatal line naming the BATON_* variable).
  let built;
  try {
    await adapterCode;
    built = buildWorker(env, config, workflows, logger, (level, message, extra) =>
      busLogger[level === 'error' ? 'warn' : level](extra, message),
    );
  } catch (err) {
    logger.fatal(
      { err: { message: (err as Error).message } },
      `invalid configuration: ${(err as Error).message}`,
    );
    await Promise.allSettled([http.close(), telemetry.shutdown()]);
    return 1;
  }
  const { transport, store, largePayloads, worker } = built;
  const closeAll = async (): Promise<void> => {
    await Promise.allSettled([transport.close(), store.close(), largePayloads.separate?.close()]);
    await Promise.allSettled([http.close(), telemetry.shutdown()]);
  };

  probed.worker = worker;
  try {
    await withTimeout(`bus ${maskUrl(config.transportUrl)}`, transport.connect(), CONNECT_TIMEOUT_MS);
    await withTimeout(`store ${maskUrl(config.storeUrl)}`, store.connect(), CONNECT_TIMEOUT_MS);
    if (largePayloads.separate) {
      const where = `payload store ${largePayloads.separate.location} (bucket ${largePayloads.separate.bucket})`;
      await withTimeout(where, largePayloads.separate.connect(), CONNECT_TIMEOUT_MS);
    }
    await worker.start();
  } catch (err) {
    logger.fatal({ err }, `start-up failed: ${(err as Error).message}`);
    await closeAll();
    return 1;
  }
  logger.info(
    {
      workerId: worker.workerId,
      pid: process.pid,
      transport: maskUrl(config.transportUrl),
      store: maskUrl(config.storeUrl),
      // Which data this pod reads: the bus prefix, and the Redis key prefix or Postgres schema.
      ...namespacesInUse(config),
      workflows: workflows.map((w) => `${w.name}@${w.version}`),
      concurrency: worker.options.concurrency,
      leaseMs: worker.options.leaseMs,
      httpPort,
      tracing: telemetry.tracing,
      // Key ids and settings only, never key material.
      payloadProtection: describePayloadProtection(config.payloadProtection),
      // Compare across pods: one id with different material fails every read of the other's data.
      keyFingerprints: payloadKeyFingerprints(config.payloadProtection),
      largePayloads: {
        thresholdBytes: worker.options.claimCheck.thresholdBytes,
        location: worker.options.claimCheck.payloads.location,
      },
    },
    'worker ready',
  );

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  const owned = worker.ownedRuns.length;
  logger.info({ signal, ownedRuns: owned }, 'draining: handing owned runs to other workers');
  const hardStop = setTimeout(() => {
    logger.error({ shutdownTimeoutMs: config.shutdownTimeoutMs }, 'drain took too long; exiting anyway');
    process.exit(1);
  }, config.shutdownTimeoutMs);
  hardStop.unref();
  await worker.stop();
  await closeAll();
  clearTimeout(hardStop);
  logger.info({ handedOff: owned }, 'worker process exiting');
  return 0;
}

/** The adapters and the Worker from the configuration; a ConfigError names the BATON_* variable. */
function buildWorker(
  env: NodeJS.ProcessEnv,
  config: WorkerAppConfig,
  workflows: AnyWorkflowDefinition[],
  logger: Logger,
  busLog: AdapterLogHook,
) {
  const transport = namingVariables('transport', env, () => transportFromConfig(config, busLog));
  const store = namingVariables('store', env, () => storeFromConfig(config));
  const largePayloads = namingVariables('payloads', env, () => largePayloadsFromConfig(config, store));
  const worker = namingVariables(
    'worker',
    env,
    () =>
      new Worker({
        transport,
        store,
        workflows,
        ...Object.fromEntries(Object.entries(config.tuning).filter(([, v]) => v !== undefined)),
        logger: logger.child({ component: 'worker' }),
        onEvent: (event, run) => logEvent(logger, event, run),
        payloadProtection: config.payloadProtection,
        largePayloads: largePayloads.options,
      }),
  );
  return { transport, store, largePayloads, worker };
}
