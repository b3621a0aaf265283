/**
 * Bad values for every BATON_* variable of the worker process (docs/configuration.md's table), with what its
 * fatal line must say; config-variables.spec.ts runs them all in this process, process.int.spec.ts
 * the ones the adapters and the Worker check in a real process.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { CRASH_WORKFLOW_MODULE } from '@baton/testing/crash';
import { runWorkerProcess } from './process.js';

/** A configuration that would start: every row breaks one thing of it, before anything connects. */
export const GOOD_CONFIGURATION = {
  BATON_TRANSPORT_URL: 'nats://127.0.0.1:4222',
  BATON_STORE_URL: 'redis://127.0.0.1:6379',
  BATON_WORKFLOWS: CRASH_WORKFLOW_MODULE,
  BATON_HTTP_HOST: '127.0.0.1',
  BATON_HTTP_PORT: '0',
};
const KAFKA = { BATON_TRANSPORT_URL: 'kafka://127.0.0.1:9092' };
const POSTGRES = { BATON_STORE_URL: 'postgres://baton:s3cret-pw@127.0.0.1:5432/test' };
const SECRET_KEY = 'k1:c2hvcnQtc2VjcmV0LWtleQ==';

/**
 * A variable whose value an adapter or the Worker refuses reads `BATON_X is '<value>': <expected>`
 * (libs/host/src/config-errors.ts): the value in single quotes, what is expected after the colon.
 */
export interface BadConfiguration {
  /** The variable the fatal line must name. */
  variable: string;
  env: Record<string, string>;
  /** What the line must also say (the value, what is expected). */
  says: RegExp;
  /** Text that must never appear (a secret). */
  hides?: string;
}

export const BAD_CONFIGURATIONS: BadConfiguration[] = [
  {
    variable: 'BATON_TRANSPORT_URL',
    env: { BATON_TRANSPORT_URL: 'amqp://h:5672' },
    says: /'amqp:\/\/h:5672' names an unsupported bus/,
  },
  {
    variable: 'BATON_TRANSPORT_URL',
    env: { BATON_TRANSPORT_URL: 'nats://tok-s3cret@bad host:4222' },
    says: /not valid/,
    hides: 'tok-s3cret',
  },
  {
    variable: 'BATON_TRANSPORT_URL',
    env: { BATON_TRANSPORT_URL: 'kafka://127.0.0.1:9092?bogus=1' },
    says: /unknown URL parameter 'bogus'; known: sasl, tls, prefix, partitions/,
  },
  {
    variable: 'BATON_STORE_URL',
    env: { BATON_STORE_URL: 'mysql://u:s3cret-pw@h/db' },
    says: /names an unsupported store/,
    hides: 's3cret-pw',
  },
  {
    variable: 'BATON_STORE_URL',
    env: { BATON_STORE_URL: 'redis+sentinel://app:s3cret-pw@127.0.0.1/baton' },
    says: /sentinel '127.0.0.1' is not host:port/,
    hides: 's3cret-pw',
  },
  {
    variable: 'BATON_WORKFLOWS',
    env: { BATON_WORKFLOWS: './no/such/module.js' },
    says: /could not be loaded/,
  },
  {
    variable: 'BATON_CONCURRENCY',
    env: { BATON_CONCURRENCY: 'many' },
    says: /'many'; it must be a whole number/,
  },
  {
    variable: 'BATON_LEASE_MS',
    env: { BATON_LEASE_MS: '0' },
    says: /'0'; it must be a whole number of at least 1/,
  },
  {
    variable: 'BATON_HEARTBEAT_MS',
    env: { BATON_LEASE_MS: '1000', BATON_HEARTBEAT_MS: '600' },
    says: /BATON_HEARTBEAT_MS is '600': it must be below BATON_LEASE_MS\/2 \(500\)/,
  },
  { variable: 'BATON_REAP_INTERVAL_MS', env: { BATON_REAP_INTERVAL_MS: '1s' }, says: /'1s'/ },
  { variable: 'BATON_DEAD_WORKER_SCAN_MS', env: { BATON_DEAD_WORKER_SCAN_MS: '-1' }, says: /'-1'/ },
  { variable: 'BATON_SCHEDULE_SCAN_MS', env: { BATON_SCHEDULE_SCAN_MS: '-1' }, says: /'-1'/ },
  {
    variable: 'BATON_MISSING_VERSION_GRACE_MS',
    env: { BATON_MISSING_VERSION_GRACE_MS: '1m' },
    says: /'1m'/,
  },
  { variable: 'BATON_RETENTION_MS', env: { BATON_RETENTION_MS: '7d' }, says: /'7d'/ },
  { variable: 'BATON_CHECKPOINT_EVERY', env: { BATON_CHECKPOINT_EVERY: '0' }, says: /'0'/ },
  {
    variable: 'BATON_PIPELINE_STEPS',
    env: { BATON_PIPELINE_STEPS: 'maybe' },
    says: /'maybe'; use true or false/,
  },
  { variable: 'BATON_MAX_MESSAGE_BYTES', env: { BATON_MAX_MESSAGE_BYTES: '1MB' }, says: /'1MB'/ },
  { variable: 'BATON_MAX_DELIVERIES', env: { BATON_MAX_DELIVERIES: '0' }, says: /'0'/ },
  { variable: 'BATON_DRAIN_TIMEOUT_MS', env: { BATON_DRAIN_TIMEOUT_MS: 'x' }, says: /'x'/ },
  { variable: 'BATON_IN_PROCESS_WAIT_MS', env: { BATON_IN_PROCESS_WAIT_MS: '-5' }, says: /'-5'/ },
  { variable: 'BATON_FETCH_WAIT_MS', env: { BATON_FETCH_WAIT_MS: '0' }, says: /'0'/ },
  { variable: 'BATON_MEMORY_BUDGET_MIB', env: { BATON_MEMORY_BUDGET_MIB: '-5' }, says: /'-5'/ },
  {
    variable: 'BATON_MEMORY_RESUME_MIB',
    env: { BATON_MEMORY_BUDGET_MIB: '100', BATON_MEMORY_RESUME_MIB: '100' },
    says: /\(100\) must be below BATON_MEMORY_BUDGET_MIB \(100\)/,
  },
  {
    variable: 'BATON_MEMORY_RESUME_MIB',
    env: { BATON_MEMORY_RESUME_MIB: '80' },
    says: /set without BATON_MEMORY_BUDGET_MIB/,
  },
  {
    variable: 'BATON_SHUTDOWN_TIMEOUT_MS',
    env: { BATON_SHUTDOWN_TIMEOUT_MS: '1000', BATON_DRAIN_TIMEOUT_MS: '5000' },
    says: /\(1000\) must be above BATON_DRAIN_TIMEOUT_MS \(5000\)/,
  },
  { variable: 'BATON_LOG_LEVEL', env: { BATON_LOG_LEVEL: 'loud' }, says: /'loud'; use one of/ },
  { variable: 'BATON_LOG_FORMAT', env: { BATON_LOG_FORMAT: 'xml' }, says: /'xml'; use one of json, pretty/ },
  {
    variable: 'BATON_NATS_PREFIX',
    env: { BATON_NATS_PREFIX: 'A.B' },
    says: /'A\.B': it is not a safe name; use 1-48/,
  },
  { variable: 'BATON_NATS_ACK_WAIT_MS', env: { BATON_NATS_ACK_WAIT_MS: 'soon' }, says: /'soon'/ },
  { variable: 'BATON_NATS_REPLICAS', env: { BATON_NATS_REPLICAS: 'three' }, says: /'three'/ },
  { variable: 'BATON_NATS_REPLICAS', env: { BATON_NATS_REPLICAS: '7' }, says: /from 1 to 5/ },
  {
    variable: 'BATON_NATS_CREDS_FILE',
    env: { BATON_NATS_CREDS_FILE: '/no/such.creds' },
    says: /\/no\/such\.creds.*cannot be read/,
  },
  {
    variable: 'BATON_NATS_TLS_CA_FILE',
    env: { BATON_NATS_TLS_CA_FILE: '/no/such-ca.pem' },
    says: /\/no\/such-ca\.pem.*cannot be read/,
  },
  {
    variable: 'BATON_KAFKA_PREFIX',
    env: { ...KAFKA, BATON_KAFKA_PREFIX: 'a.b' },
    says: /'a\.b': it must be 1-100 letters/,
  },
  { variable: 'BATON_KAFKA_PARTITIONS', env: { ...KAFKA, BATON_KAFKA_PARTITIONS: '0' }, says: /'0'/ },
  {
    variable: 'BATON_KAFKA_SESSION_TIMEOUT_MS',
    env: { ...KAFKA, BATON_KAFKA_SESSION_TIMEOUT_MS: '2' },
    says: /'2'.*at least 3/,
  },
  { variable: 'BATON_KAFKA_ACK_WAIT_MS', env: { ...KAFKA, BATON_KAFKA_ACK_WAIT_MS: '0' }, says: /'0'/ },
  {
    variable: 'BATON_KAFKA_SASL_MECHANISM',
    env: { BATON_TRANSPORT_URL: 'kafka://u:s3cret-pw@127.0.0.1:9092', BATON_KAFKA_SASL_MECHANISM: 'md5' },
    says: /'md5': it is not supported; use one of/,
    hides: 's3cret-pw',
  },
  {
    variable: 'BATON_KAFKA_TLS_CA_FILE',
    env: { ...KAFKA, BATON_KAFKA_TLS_CA_FILE: '/no/ca.pem' },
    says: /\/no\/ca\.pem/,
  },
  {
    variable: 'BATON_KAFKA_JOURNAL_RETENTION_MS',
    env: { ...KAFKA, BATON_KAFKA_JOURNAL_RETENTION_MS: 'forever' },
    says: /'forever'/,
  },
  {
    variable: 'BATON_REDIS_WAIT_REPLICAS',
    env: { BATON_REDIS_WAIT_REPLICAS: 'all' },
    says: /'all'; it must be a whole number of at least 0/,
  },
  {
    variable: 'BATON_REDIS_WAIT_TIMEOUT_MS',
    env: { BATON_REDIS_WAIT_TIMEOUT_MS: '0' },
    says: /'0'; it must be a whole number of at least 1/,
  },
  {
    variable: 'BATON_REDIS_SENTINEL_PASSWORD',
    env: { BATON_REDIS_SENTINEL_PASSWORD: 'sentinel-s3cret' },
    says: /not a redis\+sentinel:\/\/ URL/,
    hides: 'sentinel-s3cret',
  },
  {
    variable: 'BATON_POSTGRES_SCHEMA',
    env: { ...POSTGRES, BATON_POSTGRES_SCHEMA: 'Bad-Schema' },
    says: /'Bad-Schema': it is not a usable schema name/,
    hides: 's3cret-pw',
  },
  {
    variable: 'BATON_POSTGRES_POOL_SIZE',
    env: { ...POSTGRES, BATON_POSTGRES_POOL_SIZE: '0' },
    says: /'0'/,
    hides: 's3cret-pw',
  },
  {
    variable: 'BATON_POSTGRES_SYNCHRONOUS_COMMIT',
    env: { ...POSTGRES, BATON_POSTGRES_SYNCHRONOUS_COMMIT: 'always' },
    says: /'always'.*remote_apply, on, remote_write, local, off/,
    hides: 's3cret-pw',
  },
  {
    variable: 'BATON_POSTGRES_REQUIRE_SYNC',
    env: { ...POSTGRES, BATON_POSTGRES_REQUIRE_SYNC: 'yes' },
    says: /'yes'.*true, 1, false or 0/,
    hides: 's3cret-pw',
  },
  { variable: 'BATON_HTTP_PORT', env: { BATON_HTTP_PORT: '70000' }, says: /'70000'; a TCP port is 0-65535/ },
  {
    variable: 'BATON_HTTP_HOST',
    // TEST-NET-3 (RFC 5737): never an address of this host.
    env: { BATON_HTTP_HOST: '203.0.113.9' },
    says: /cannot serve \/healthz on 203\.0\.113\.9:0/,
  },
  { variable: 'BATON_LIVENESS_STALL_MS', env: { BATON_LIVENESS_STALL_MS: '5' }, says: /'5'.*at least 1000/ },
  {
    variable: 'BATON_ENCRYPTION_KEYS',
    env: { BATON_ENCRYPTION_KEYS: SECRET_KEY },
    says: /needs exactly 32/,
    hides: 'c2hvcnQtc2VjcmV0LWtleQ',
  },
  {
    variable: 'BATON_ENCRYPTION_KEY_ID',
    env: { BATON_ENCRYPTION_KEY_ID: 'k9' },
    says: /is set but BATON_ENCRYPTION_KEYS is not/,
  },
  {
    variable: 'BATON_SIGNING_KEYS',
    env: { BATON_SIGNING_KEYS: SECRET_KEY },
    says: /needs at least/,
    hides: 'c2hvcnQtc2VjcmV0LWtleQ',
  },
  {
    variable: 'BATON_SIGNING_KEY_ID',
    env: { BATON_SIGNING_KEY_ID: 'k9' },
    says: /is set but BATON_SIGNING_KEYS is not/,
  },
  {
    variable: 'BATON_COMPRESS_THRESHOLD_BYTES',
    env: { BATON_COMPRESS_THRESHOLD_BYTES: 'big' },
    says: /'big'/,
  },
  { variable: 'BATON_ALLOW_PLAINTEXT', env: { BATON_ALLOW_PLAINTEXT: 'maybe' }, says: /maybe/ },
  {
    variable: 'BATON_PAYLOAD_REF_THRESHOLD_BYTES',
    env: { BATON_PAYLOAD_REF_THRESHOLD_BYTES: 'huge' },
    says: /'huge'/,
  },
  {
    variable: 'BATON_PAYLOAD_REF_LOCATION',
    env: { BATON_PAYLOAD_REF_LOCATION: 'disk' },
    says: /'disk'; use one of/,
  },
  {
    variable: 'BATON_PAYLOAD_REF_BUCKET',
    env: { BATON_PAYLOAD_REF_LOCATION: 'nats-object-store', BATON_PAYLOAD_REF_BUCKET: 'bad bucket!' },
    says: /'bad bucket!': it is not a valid object store name/,
  },
];

/** Runs the process's lifecycle with `env`; its exit code and its log lines. */
export async function startWith(
  env: Record<string, string>,
): Promise<{ code: number; lines: Array<{ level: number; msg: string }> }> {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) lines.push(JSON.parse(line) as never);
      done();
    },
  });
  const logger = pino({ name: 'baton-worker', level: 'info' }, sink);
  const code = await runWorkerProcess({ ...GOOD_CONFIGURATION, ...env }, logger);
  return { code, lines };
}
