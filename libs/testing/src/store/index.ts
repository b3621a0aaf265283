/**
 * The conformance suite every {@link Store} must pass. Each adapter calls it from its own spec, so
 * no suite can silently stop running:
 *
 * ```ts
 * describeStoreConformance('redis', () => redisStore({ url, keyPrefix: `t-${randomUUID()}:` }));
 * ```
 *
 * Waits are real time (lease TTLs of 200 ms, waits under a second) because a real store's clock
 * cannot be faked; no test asserts how fast anything is, only what happens.
 */
import { describe, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { describeLifecycle, useFixture } from '../conformance-helpers.js';
import { describeLeaseConformance } from './leases.js';
import { describeRunConformance } from './runs.js';
import { describeRunQueryConformance } from './queries.js';
import { describeAttributeConformance } from './attributes.js';
import { describeHistoryConformance } from './history.js';
import { describeWaitConformance } from './waits.js';
import { describePauseConformance } from './pause.js';
import { describeRetentionConformance } from './retention.js';
import { describePayloadStoreConformance } from '../payload-store/index.js';
import { describeFleetConformance } from './fleet.js';
import { describeScheduleConformance } from './schedules.js';
import { describeConcurrencyConformance } from './concurrency.js';
import { describeRateLimitConformance } from './rate-limits.js';
import { describeUpdateConformance } from './updates.js';
import { describePromiseConformance } from './promises.js';
import { describeContinuationConformance } from './continuation.js';
import { describeJournalIndexConformance } from './journal-index.js';
import { describeQueryMailboxConformance } from './query-mailbox.js';
import { describePresenceChoice, describePresenceConformance, type StorePairFactory } from './presence.js';
import {
  describeClaimFailureConformance,
  describeDamagedCheckpointConformance,
  type CheckpointDamager,
} from './damage.js';

/** Options of {@link describeStoreConformance}. */
export interface StoreConformanceOptions {
  /**
   * Opens two stores over separate connections on the same data. Runs the presence section, which
   * closes one store and expects the other to notice, and the query mailbox section across the two
   * (asker on one, workers on the other). Required for a store with presence (the
   * suite fails without it); a store without presence (optional in the contract, e.g. the
   * in-process one) passes none and the section is skipped.
   */
  pair?: StorePairFactory;
  /**
   * Damages a stored checkpoint behind the store's back (a second connection). Runs the
   * damaged-checkpoint section; every adapter's own spec passes one.
   */
  damage?: CheckpointDamager;
  /**
   * Why the store has no journal index (group commit across runs), when it has none: the section
   * is then listed as skipped under that reason instead of run. A store with one passes nothing.
   */
  withoutJournalIndex?: string;
}

/**
 * Registers the store conformance suite under `store conformance: <name>`. `factory` is called
 * once per test and must return a store that shares no data with earlier ones (a unique key
 * prefix or schema); the suite connects it first and closes it after.
 */
export function describeStoreConformance(
  name: string,
  factory: () => Promise<Store> | Store,
  options: StoreConformanceOptions = {},
): void {
  describe(`store conformance: ${name}`, () => {
    const store = useFixture(factory);

    describeLifecycle(factory);

    describeLeaseConformance(store);
    describeWaitConformance(store);
    describePauseConformance(store);
    describeRunConformance(store);
    describeRunQueryConformance(store);
    describeAttributeConformance(store);
    describeHistoryConformance(store);
    describeRetentionConformance(store);
    describePayloadStoreConformance(() => store().payloads);
    describeFleetConformance(store);
    describeScheduleConformance(store);
    describeConcurrencyConformance(store);
    describeRateLimitConformance(store);
    describeUpdateConformance(store);
    describePromiseConformance(store);
    describeContinuationConformance(store);
    describeQueryMailboxConformance(store, options.pair);
    if (options.withoutJournalIndex === undefined) describeJournalIndexConformance(store);
    else describe.skip(`journal index: ${options.withoutJournalIndex}`, () => it.skip('not implemented'));
    describePresenceChoice(factory, options.pair);
    if (options.pair) describePresenceConformance(options.pair);
    describeClaimFailureConformance(store);
    if (options.damage) describeDamagedCheckpointConformance(store, options.damage);
  });
}
