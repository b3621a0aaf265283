#!/usr/bin/env node
/**
 * The demo producer process (`baton-producer`, `npm run producer`): enqueues example
 * `order_fulfilment` runs at a steady rate until BATON_PRODUCER_RUNS is reached or SIGTERM/SIGINT.
 * Configured by environment (see producer.ts); logs are JSON lines (pino) on stdout.
 */
import { pino } from 'pino';
import { runProducer } from './producer.js';

// Level 'info' until the configuration (BATON_LOG_LEVEL included) has been validated.
const logger = pino({ name: 'baton-producer', level: 'info' });
runProducer(process.env, logger).then(
  (code) => process.exit(code),
  (err: unknown) => {
    logger.fatal({ err }, 'producer process failed');
    process.exit(1);
  },
);
