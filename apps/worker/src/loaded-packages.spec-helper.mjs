/**
 * Preloaded with `--import` into a worker process by start-up.int.spec.ts: records the npm
 * packages whose modules the process loads (ESM imports and CommonJS requires alike) and writes
 * them, one per line, to the file BATON_TEST_LOADED_PACKAGES_FILE names when the process exits.
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const packages = new Set();
registerHooks({
  load(url, context, nextLoad) {
    const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
    if (name !== undefined) packages.add(name);
    return nextLoad(url, context);
  },
});
process.on('exit', () => {
  writeFileSync(process.env.BATON_TEST_LOADED_PACKAGES_FILE, [...packages].sort().join('\n'));
});
