import { afterAll } from 'vitest';
import { describeStoreConformance } from '@baton/testing';
import { postgresStore } from './index.js';
import { TestSchemas, url } from './test-support.spec-helper.js';
import { damagePostgresCheckpoint } from './damage.spec-helper.js';
import type { Store } from '@baton/core/adapter';

const schemas = new TestSchemas();
// Dropping the suite's hundred-odd schemas takes a while on a busy server.
afterAll(() => schemas.dropAll(), 120_000);

/** The schema of each store the suite made, so its damage hook can reach behind it. */
const schemaOf = new WeakMap<Store, string>();
const freshStore = (): Store => {
  const schema = schemas.name();
  const store = postgresStore({ url, schema, poolSize: 4 });
  schemaOf.set(store, schema);
  return store;
};

describeStoreConformance('postgres', freshStore, {
  damage: (store, runId, seq, damage) => damagePostgresCheckpoint(schemaOf.get(store)!, runId, seq, damage),
  // Two stores, each with its own pool and presence sessions, on one fresh schema.
  pair: () => {
    const schema = schemas.name();
    return [postgresStore({ url, schema, poolSize: 4 }), postgresStore({ url, schema, poolSize: 4 })];
  },
});
