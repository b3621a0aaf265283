// Waits until a Kafka broker answers a real protocol round trip: a kafkajs admin client connects
// and describeCluster() returns. Used by infra/kafka/start.sh after the TCP port opens.
//
//   node infra/kafka/wait-ready.mjs [host:port=127.0.0.1:9092] [timeoutMs=30000] [brokers=1]
//
// With `brokers` above 1 (infra/clusters/kafka), it also waits until the cluster's metadata lists
// that many registered brokers. host:port may be a comma-separated list of bootstrap brokers.
//
// Exit codes: 0 the broker answered; 1 it did not within the timeout; 3 kafkajs is not installed
// (start.sh then falls back to its TCP check). kafkajs resolves from the repository's node_modules.
import { setTimeout as sleep } from 'node:timers/promises';

const [broker = '127.0.0.1:9092', timeoutArg = '30000', brokersArg = '1'] = process.argv.slice(2);
const timeoutMs = Number(timeoutArg);
const wantBrokers = Number(brokersArg);

let Kafka;
let logLevel;
try {
  // Imported dynamically so that a missing kafkajs is told apart from a broker that does not answer.
  ({ Kafka, logLevel } = await import('kafkajs'));
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND') process.exit(3);
  throw error;
}

// With several brokers expected, each bootstrap broker is asked on its own: their metadata
// caches converge one after the other, and a client may ask any of them.
const seeds = wantBrokers > 1 ? broker.split(',') : [broker];
const clients = seeds.map(
  (seed) =>
    new Kafka({
      clientId: 'baton-kafka-wait-ready',
      brokers: seed.split(','),
      connectionTimeout: 1_000,
      requestTimeout: 5_000,
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    }),
);

/** The cluster as the client's seed broker describes it; throws while too few brokers are registered. */
async function describe(kafka) {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    const brokers = cluster.brokers.map((b) => `${b.nodeId}@${b.host}:${b.port}`).join(', ');
    if (cluster.brokers.length < wantBrokers) {
      throw new Error(`${cluster.brokers.length} of ${wantBrokers} brokers registered (${brokers})`);
    }
    return `cluster ${cluster.clusterId}, controller ${cluster.controller}, brokers ${brokers}`;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

const deadline = Date.now() + timeoutMs;
let lastError;
while (Date.now() < deadline) {
  try {
    const seen = [];
    for (const kafka of clients) seen.push(await describe(kafka));
    console.log(`[kafka] answers: ${seen[0]}`);
    process.exit(0);
  } catch (error) {
    lastError = error;
    await sleep(250);
  }
}
console.error(
  `[kafka] ${broker} did not answer describeCluster within ${timeoutMs} ms: ${lastError?.message ?? 'no attempt'}`,
);
process.exit(1);
