/**
 * The transport conformance suite against the shared Redis: every test gets a transport with a
 * prefix of its own (so its own queue, streams and dead letters), and afterAll deletes them all.
 * The group log section runs too: this transport has one.
 */
import { afterAll } from 'vitest';
import { describeTransportConformance } from '@baton/testing';
import { redisTestUrl } from '@baton/testing/servers';
import { redisTransport } from './index.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const ACK_WAIT_MS = 1_000;
const prefixes = testPrefixes(redisTestUrl());
afterAll(() => prefixes.cleanUp());

const transport = (priorityLanes: boolean) =>
  redisTransport({ url: redisTestUrl(), prefix: prefixes.next(), ackWaitMs: ACK_WAIT_MS, priorityLanes });

describeTransportConformance('redis', () => transport(false), {
  ackWaitMs: ACK_WAIT_MS,
  priorityLanes: () => transport(true),
});
