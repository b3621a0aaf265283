#!/usr/bin/env node
/**
 * The worker process: reads its configuration from the environment, connects to the bus and the
 * store, runs a Worker, and on SIGTERM (eviction, rollout) hands every owned run to another worker
 * before it exits. Logs are JSON lines (pino) on stdout.
 */
import { pino } from 'pino';
import { runWorkerProcess } from './process.js';

// Level 'info' until the configuration (BATON_LOG_LEVEL included) has been validated.
const logger = pino({ name: 'baton-worker', level: 'info' });
runWorkerProcess(process.env, logger).then(
  (code) => process.exit(code),
  (err: unknown) => {
    logger.fatal({ err }, 'worker process failed');
    process.exit(1);
  },
);
