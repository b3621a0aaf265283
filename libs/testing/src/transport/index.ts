/**
 * The conformance suite every {@link Transport} must pass. Each adapter calls it from its own
 * spec, so no suite can silently stop running:
 *
 * ```ts
 * describeTransportConformance('nats', () => natsTransport({ servers, prefix: `t${randomUUID()}` }), {
 *   ackWaitMs: 1_000,
 * });
 * ```
 *
 * Waits are real time because a real bus cannot be driven by fake timers; no test asserts how fast
 * anything is, only what happens.
 */
import { describe, it } from 'vitest';
import type { Transport } from '@baton/core/adapter';
import { describeLifecycle, useFixture } from '../conformance-helpers.js';
import { describeBacklogConformance } from './backlog.js';
import { describeDeadLetterConformance } from './dead-letters.js';
import { describeGroupLogConformance } from './group-log.js';
import { describeJournalConformance } from './journal.js';
import { describePriorityConformance } from './priorities.js';
import { describeQueueConformance } from './queue.js';
import { describeRunStreamConformance } from './run-streams.js';

/** Options of {@link describeTransportConformance}. */
export interface TransportConformanceOptions {
  /**
   * The ack wait the factory's transports were configured with; redelivery tests wait on it.
   * @defaultValue 300
   */
  ackWaitMs?: number;
  /**
   * Why the transport has no group log (group commit across runs), when it has none: the section
   * is then listed as skipped under that reason instead of run. A transport with one passes nothing.
   */
  withoutGroupLog?: string;
  /** Why the transport has no run streams, when it has none: the section is listed as skipped. */
  withoutRunStreams?: string;
  /**
   * For a bus whose priority lanes are opt-in (NATS, Kafka: `priorityLanes`): a factory like the
   * main one with the lanes on. The priorities section then runs on its transports, and the main
   * factory's (lanes off) must refuse a start at `high` or `low` and carry `normal` as before.
   * Left out, the main factory's transports have the lanes (memory).
   */
  priorityLanes?: () => Promise<Transport> | Transport;
}

/**
 * Registers the transport conformance suite under `transport conformance: <name>`. `factory` is
 * called once per test and must return a transport that shares no queue, journal or dead letters
 * with earlier ones (a unique stream/topic prefix); the suite connects it first and closes it after.
 */
export function describeTransportConformance(
  name: string,
  factory: () => Promise<Transport> | Transport,
  options: TransportConformanceOptions = {},
): void {
  const ackWaitMs = options.ackWaitMs ?? 300;
  describe(`transport conformance: ${name}`, () => {
    const transport = useFixture(factory);

    describeLifecycle(factory);

    describeQueueConformance(transport, ackWaitMs);
    describePriorityConformance(options.priorityLanes ?? factory, options.priorityLanes && transport);
    describeJournalConformance(transport);
    if (options.withoutGroupLog === undefined) describeGroupLogConformance(transport);
    else describe.skip(`group log: ${options.withoutGroupLog}`, () => it.skip('not implemented'));
    describeDeadLetterConformance(transport);
    describeBacklogConformance(transport, factory);
    if (options.withoutRunStreams === undefined) describeRunStreamConformance(transport);
    else describe.skip(`run streams: ${options.withoutRunStreams}`, () => it.skip('not implemented'));
  });
}
