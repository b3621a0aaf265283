/**
 * The transport conformance suite against the shared Kafka broker (infra/kafka, or docker
 * compose's `kafka`): every test gets a transport with a prefix of its own (so its own topics and
 * consumer group), and afterAll deletes them all. Without a broker these tests fail; they never skip.
 */
import { afterAll } from 'vitest';
import { describeTransportConformance } from '@baton/testing';
import { kafkaTestUrl } from '@baton/testing/servers';
import { kafkaTransport } from './index.js';
import { createKafkaTransport } from './kafka-transport.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const ACK_WAIT_MS = 1_000;
const prefixes = testPrefixes(kafkaTestUrl());
afterAll(() => prefixes.cleanUp(), 30_000);

const grouped = (priorityLanes: boolean) =>
  kafkaTransport({
    brokers: kafkaTestUrl(),
    prefix: prefixes.next(),
    partitions: 3,
    ackWaitMs: ACK_WAIT_MS,
    sessionTimeoutMs: 6_000,
    priorityLanes,
  });

describeTransportConformance('kafka', () => grouped(false), {
  ackWaitMs: ACK_WAIT_MS,
  priorityLanes: () => grouped(true),
});

// The same contract with the partitions owned through a membership (what a worker with a
// presence store hands over) instead of a consumer group: a member alone owns every partition.
// (createKafkaTransport is kafkaTransport typed as its class, whose run queue always has `share`.)
const owned = (priorityLanes: boolean) => {
  const transport = createKafkaTransport({
    brokers: kafkaTestUrl(),
    prefix: prefixes.next(),
    partitions: 3,
    ackWaitMs: ACK_WAIT_MS,
    priorityLanes,
  });
  transport.runQueue.share({ memberId: 'solo', members: async () => ['solo'] });
  return transport;
};

describeTransportConformance('kafka (partitions owned by presence)', () => owned(false), {
  ackWaitMs: ACK_WAIT_MS,
  priorityLanes: () => owned(true),
  withoutRunStreams: 'the same journal topic as the suite above, whose run streams section covers it',
});
