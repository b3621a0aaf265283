import { afterAll } from 'vitest';
import { describeStoreConformance } from '@baton/testing';
import { postgresStore } from './index.js';
import { TestSchemas, url } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());

describeStoreConformance('postgres', () => schemas.store(), {
  // Two stores, each with its own pool and presence sessions, on one fresh schema.
  pair: () => {
    const schema = schemas.name();
    return [postgresStore({ url, schema, poolSize: 4 }), postgresStore({ url, schema, poolSize: 4 })];
  },
});
