#!/usr/bin/env node
/**
 * The demo producer process (`baton-producer`, `npm run producer`): enqueues example
 * `order_fulfilment` runs at a steady rate until BATON_PRODUCER_RUNS is reached or SIGTERM/SIGINT.
 * Configured by environment (see producer.ts); logs are JSON lines (pino) on stdout.
 */
import { pino } from 'pino';
import { runProducer } from './producer.js';
import { startTelemetry } from './telemetry.js';

// Level 'info' until the configuration (BATON_LOG_LEVEL included) has been validated.
const logger = pino({ name: 'baton-producer', level: 'info' });
// With OTEL_* set, each enqueue is a `baton.enqueue` span whose context the runs carry, so the
// workers' spans join the producer's trace (docs/operations.md).
const telemetry = await startTelemetry(process.env, 'baton-producer');
runProducer(process.env, logger).then(
  async (code) => {
    await telemetry.shutdown().catch(() => undefined);
    process.exit(code);
  },
  (err: unknown) => {
    logger.fatal({ err }, 'producer process failed');
    process.exit(1);
  },
);
