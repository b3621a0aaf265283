/**
 * The crash-loop figures of docs/performance.md: two healthy workers, one crash-looping beside
 * them (SIGKILLed a second after it is ready, started again), 100 runs, on Kafka with the store
 * named by the first argument. The second argument picks the run queue's partition ownership
 * (BATON_KAFKA_PARTITION_OWNERSHIP: `group` is the consumer group, before; `presence` is the
 * store's presence, after). Prints one line of figures; asserts nothing.
 *
 *   npx tsx --conditions=@baton/source apps/worker/scripts/crash-loop-figures.ts redis group 150000
 */
import { CrashWorld, crashLoopFigures, formatCrashLoopFigures } from '@baton/testing/crash';
import { crashEnvironment } from '../src/crash-environment.spec-helper.js';

const [storeArg = 'redis', ownership = 'presence', capArg = '150000'] = process.argv.slice(2);
if (storeArg !== 'redis' && storeArg !== 'postgres') throw new Error(`store '${storeArg}': use redis or postgres`);
const runs = 100;
const world = await CrashWorld.create(crashEnvironment(storeArg, 'kafka'), {
  workerEnv: { BATON_CONCURRENCY: '20', BATON_KAFKA_PARTITION_OWNERSHIP: ownership },
});
try {
  const figures = await crashLoopFigures(world, { runs, capMs: Number(capArg) });
  console.log(formatCrashLoopFigures(`kafka+${storeArg}, ownership ${ownership}`, figures));
  console.log(JSON.stringify(figures));
} finally {
  await world.dispose();
}
