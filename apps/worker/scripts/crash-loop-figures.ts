/**
 * The crash-loop figures of docs/performance.md: two healthy workers, one crash-looping beside
 * them (SIGKILLed a second after it is ready, started again), 100 runs, on Kafka with the store
 * named by the first argument. The second argument picks the run queue's partition ownership
 * (BATON_KAFKA_PARTITION_OWNERSHIP: `group` is the consumer group, before; `presence` is the
 * store's presence, after); the third caps the wait for the runs (ms); the fourth, when given, is
 * the consumer-group session timeout (the crash suite's 3000 ms otherwise; Kafka's default is
 * 10000); the fifth, runs enqueued per second (5). Prints one line of figures and their JSON; asserts nothing.
 *
 *   BATON_WORKER_RUNTIME=dist npx tsx --conditions=@baton/source \
 *     apps/worker/scripts/crash-loop-figures.ts redis group 150000 10000
 */
import { CrashWorld, crashLoopFigures, formatCrashLoopFigures } from '@baton/testing/crash';
import { crashEnvironment } from '../src/crash-environment.spec-helper.js';

const [storeArg = 'redis', ownership = 'presence', capArg = '150000', sessionArg, rateArg = '5'] =
  process.argv.slice(2);
if (storeArg !== 'redis' && storeArg !== 'postgres')
  throw new Error(`store '${storeArg}': use redis or postgres`);
const runs = 100;
const world = await CrashWorld.create(crashEnvironment(storeArg, 'kafka'), {
  workerEnv: {
    BATON_CONCURRENCY: '20',
    BATON_KAFKA_PARTITION_OWNERSHIP: ownership,
    ...(sessionArg !== undefined && { BATON_KAFKA_SESSION_TIMEOUT_MS: sessionArg }),
  },
});
try {
  const figures = await crashLoopFigures(world, {
    runs,
    capMs: Number(capArg),
    enqueuePerSecond: Number(rateArg),
  });
  const session = `${sessionArg === undefined ? '' : `, session timeout ${sessionArg} ms`}, ${rateArg} runs/s`;
  console.log(formatCrashLoopFigures(`kafka+${storeArg}, ownership ${ownership}${session}`, figures));
  console.log(JSON.stringify(figures));
} finally {
  await world.dispose();
}
