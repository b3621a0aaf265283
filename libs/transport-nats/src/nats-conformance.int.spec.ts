/**
 * The transport conformance suite against the shared NATS server: every test gets a transport
 * with a prefix of its own (so its own streams), and afterAll deletes them all.
 */
import { afterAll } from 'vitest';
import { describeTransportConformance } from '@baton/testing';
import { natsTestUrl } from '@baton/testing/servers';
import { natsTransport } from './index.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const ACK_WAIT_MS = 1_000;
const prefixes = testPrefixes(natsTestUrl());
afterAll(() => prefixes.cleanUp());

const transport = (priorityLanes: boolean) =>
  natsTransport({
    servers: natsTestUrl(),
    prefix: prefixes.next(),
    ackWaitMs: ACK_WAIT_MS,
    storage: 'memory',
    priorityLanes,
  });

describeTransportConformance('nats', () => transport(false), {
  ackWaitMs: ACK_WAIT_MS,
  priorityLanes: () => transport(true),
});
