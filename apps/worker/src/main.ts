/**
 * The worker process: reads its configuration from the environment, connects to the bus and the
 * store, runs a Worker, and on SIGTERM (eviction, rollout) hands every owned run to another worker
 * before it exits. Logs are JSON lines (pino) on stdout.
 */
import { pino } from 'pino';
import { runWorkerProcess } from './process.js';

const logger = pino({ name: 'baton-worker', level: process.env.BATON_LOG_LEVEL || 'info' });
runWorkerProcess(process.env, logger).then(
  (code) => process.exit(code),
  (err: unknown) => {
    logger.fatal({ err }, 'worker process failed');
    process.exit(1);
  },
);
