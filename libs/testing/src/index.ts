/**
 * @baton/testing: the conformance suites every transport and store must pass, and helpers for
 * crash tests.
 *
 * @example
 * ```ts
 * // libs/store-redis/src/redis-store.int.spec.ts
 * import { describeStoreConformance } from '@baton/testing';
 * describeStoreConformance('redis', () => redisStore({ url, keyPrefix: `t-${randomUUID()}:` }));
 * ```
 */
export { describeTransportConformance } from './transport/index.js';
export { describeJournalConformance } from './transport/journal.js';
export { describeStoreConformance } from './store/index.js';
export { describePayloadStoreConformance, sha256Of } from './payload-store/index.js';
export type { StoreConformanceOptions } from './store/index.js';
export type { CheckpointDamage, CheckpointDamager } from './store/damage.js';
export type { StorePairFactory } from './store/presence.js';
// Crash helpers live at '@baton/testing/severable' so code outside a test runner can use them
// without loading vitest.
