/**
 * `npm run test:unit`: the specs that need no server, on the same settings as vitest.config.ts.
 *
 * Integration specs are the `*.int.spec.ts` files; everything else runs on the in-memory adapters,
 * private fakes or offline files. The global setup (which looks for the servers, starts containers
 * and the Kafka broker) is left out, so nothing here waits for or starts a server. The README
 * ("Developing") gives the check: these specs pass with every server URL pointing at a closed port.
 */
import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export const UNIT_EXCLUDE = ['**/*.int.spec.ts'];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    exclude: [...configDefaults.exclude, ...UNIT_EXCLUDE],
    globalSetup: [],
  },
});
