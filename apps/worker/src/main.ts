#!/usr/bin/env node
/**
 * The worker process: reads its configuration from the environment, connects to the bus and the
 * store, runs a Worker, and on SIGTERM (eviction, rollout) hands every owned run to another worker
 * before it exits. Logs go to stdout: JSON lines (pino), or readable lines at a terminal
 * (BATON_LOG_FORMAT).
 */
import { processLogger } from './log-format.js';
import { runWorkerProcess } from './process.js';

// Level 'info' until the configuration (BATON_LOG_LEVEL included) has been validated; JSON lines,
// or readable ones at a terminal (BATON_LOG_FORMAT, log-format.ts).
const logger = processLogger('baton-worker', process.env);
runWorkerProcess(process.env, logger).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // Only for what no start-up step caught (each of those logs its own line naming the cause).
    logger.fatal({ err }, `worker process failed: ${(err as Error)?.message ?? String(err)}`);
    process.exit(1);
  },
);
