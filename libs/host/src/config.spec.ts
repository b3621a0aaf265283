import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describePayloadProtection } from '@baton/core/runtime';
import { ENV, readConfig } from './config.js';
import { storeFromConfig, transportFromConfig, maskUrl } from './adapters.js';
import { loadWorkflows } from './workflows.js';

const HERE = dirname(fileURLToPath(import.meta.url));

const BASE = {
  [ENV.transportUrl]: 'nats://127.0.0.1:4222',
  [ENV.storeUrl]: 'redis://127.0.0.1:6379',
  [ENV.workflows]: './workflows.js',
};

describe('worker process configuration', () => {
  it('reads the required variables and leaves unset tuning to the Worker defaults', () => {
    const config = readConfig({ ...BASE, [ENV.concurrency]: '25', [ENV.leaseMs]: '3000' });
    expect(config).toMatchObject({
      transportUrl: 'nats://127.0.0.1:4222',
      storeUrl: 'redis://127.0.0.1:6379',
      workflowModules: ['./workflows.js'],
      logLevel: 'info',
      tuning: { concurrency: 25, leaseMs: 3000, heartbeatMs: undefined },
    });
    expect(config.shutdownTimeoutMs).toBeGreaterThan(10_000);
  });

  it.each([ENV.transportUrl, ENV.storeUrl, ENV.workflows])('names %s when it is missing', (name) => {
    expect(() => readConfig({ ...BASE, [name]: undefined })).toThrow(new RegExp(`${name} is not set`));
  });

  it('reads the retention TTL (off when unset) and the Kafka journal retention, naming a bad value', () => {
    expect(readConfig(BASE).tuning.retentionMs).toBeUndefined();
    const config = readConfig({
      ...BASE,
      [ENV.retentionMs]: '604800000',
      [ENV.kafkaJournalRetentionMs]: '1209600000',
    });
    expect(config.tuning.retentionMs).toBe(604_800_000);
    expect(config.kafka.journalRetentionMs).toBe(1_209_600_000);
    expect(() => readConfig({ ...BASE, [ENV.retentionMs]: '7d' })).toThrow(/BATON_RETENTION_MS is '7d'/);
  });

  it('serves probes on 0.0.0.0:8080 by default and names a bad port or stall limit', () => {
    expect(readConfig(BASE).http).toEqual({ host: '0.0.0.0', port: 8080, livenessStallMs: 30_000 });
    expect(readConfig({ ...BASE, [ENV.httpPort]: '0', [ENV.httpHost]: '127.0.0.1' }).http).toMatchObject({
      host: '127.0.0.1',
      port: 0,
    });
    expect(() => readConfig({ ...BASE, [ENV.httpPort]: '70000' })).toThrow(
      /BATON_HTTP_PORT is '70000'; a TCP port is 0-65535/,
    );
    expect(() => readConfig({ ...BASE, [ENV.httpPort]: 'http' })).toThrow(/BATON_HTTP_PORT is 'http'/);
    expect(() => readConfig({ ...BASE, [ENV.livenessStallMs]: '10' })).toThrow(
      /BATON_LIVENESS_STALL_MS is '10'; it must be a whole number of at least 1000/,
    );
  });

  it('names a variable that is not a whole number, with what it found', () => {
    expect(() => readConfig({ ...BASE, [ENV.concurrency]: 'ten' })).toThrow(
      /BATON_CONCURRENCY is 'ten'; it must be a whole number of at least 1/,
    );
    expect(() => readConfig({ ...BASE, [ENV.leaseMs]: '0' })).toThrow(/BATON_LEASE_MS/);
    expect(() => readConfig({ ...BASE, [ENV.logLevel]: 'loud' })).toThrow(/BATON_LOG_LEVEL is 'loud'/);
  });

  it('reads the memory budget in MiB (the Worker default when unset, 0 = off) and its resume mark', () => {
    const unset = readConfig(BASE).tuning;
    expect(unset.memoryBudgetBytes).toBeUndefined();
    expect(unset.memoryResumeBytes).toBeUndefined();
    const set = readConfig({ ...BASE, [ENV.memoryBudgetMib]: '96', [ENV.memoryResumeMib]: '64' }).tuning;
    expect(set.memoryBudgetBytes).toBe(96 * 1024 * 1024);
    expect(set.memoryResumeBytes).toBe(64 * 1024 * 1024);
    const off = readConfig({ ...BASE, [ENV.memoryBudgetMib]: '0' }).tuning;
    expect(off.memoryBudgetBytes).toBe(0);
    expect(() => readConfig({ ...BASE, [ENV.memoryBudgetMib]: '64', [ENV.memoryResumeMib]: '80' })).toThrow(
      /BATON_MEMORY_RESUME_MIB \(80\) must be below BATON_MEMORY_BUDGET_MIB \(64\)/,
    );
  });

  it('reads pipelined steps and the Postgres pool size, naming a bad value', () => {
    expect(readConfig(BASE).tuning.pipelineSteps).toBeUndefined();
    expect(readConfig({ ...BASE, [ENV.pipelineSteps]: 'true' }).tuning.pipelineSteps).toBe(true);
    expect(readConfig({ ...BASE, [ENV.pipelineSteps]: '0' }).tuning.pipelineSteps).toBe(false);
    expect(() => readConfig({ ...BASE, [ENV.pipelineSteps]: 'yes please' })).toThrow(
      /BATON_PIPELINE_STEPS is 'yes please'; use true or false/,
    );
    expect(readConfig({ ...BASE, [ENV.postgresPoolSize]: '40' }).postgres.poolSize).toBe(40);
    expect(() => readConfig({ ...BASE, [ENV.postgresPoolSize]: '0' })).toThrow(/BATON_POSTGRES_POOL_SIZE/);
  });

  it('resolves payload protection from the BATON_* key variables, and nothing without them', () => {
    expect(readConfig(BASE).payloadProtection.codec.identity).toBe(true);
    const encryption = randomBytes(32).toString('base64');
    const signing = randomBytes(32).toString('base64');
    const config = readConfig({
      ...BASE,
      [ENV.encryptionKeys]: `k2:${encryption},k1:${randomBytes(32).toString('base64')}`,
      [ENV.signingKeys]: `s1:${signing}`,
      [ENV.compressThresholdBytes]: '0',
    });
    expect(describePayloadProtection(config.payloadProtection)).toBe(
      'encryption AES-256-GCM with key k2 (reads k2, k1); checkpoint signing HMAC-SHA256 with key s1 (verifies s1); ' +
        'compression from 0 bytes; hash chain on',
    );
    // A mistake names the variable and the key id, never the key.
    const short = randomBytes(16).toString('base64');
    const error = (() => {
      try {
        readConfig({ ...BASE, [ENV.encryptionKeys]: `k1:${short}` });
      } catch (err) {
        return err as Error;
      }
    })();
    expect(error?.message).toMatch(/BATON_ENCRYPTION_KEYS.*k1/);
    expect(error?.message).not.toContain(short);
    expect(() => readConfig({ ...BASE, [ENV.allowPlaintext]: 'maybe' })).toThrow(/BATON_ALLOW_PLAINTEXT/);
  });

  it('reads the claim check (threshold, location, bucket) and names a bad value', () => {
    expect(readConfig(BASE).largePayloads).toEqual({ location: 'store' });
    expect(
      readConfig({
        ...BASE,
        [ENV.payloadRefThresholdBytes]: '32768',
        [ENV.payloadRefLocation]: 'nats-object-store',
        [ENV.payloadRefBucket]: 'MY_PAYLOADS',
      }).largePayloads,
    ).toEqual({ thresholdBytes: 32768, location: 'nats-object-store', bucket: 'MY_PAYLOADS' });
    expect(readConfig({ ...BASE, [ENV.payloadRefThresholdBytes]: 'OFF' }).largePayloads.thresholdBytes).toBe(
      'off',
    );
    expect(() => readConfig({ ...BASE, [ENV.payloadRefThresholdBytes]: '64k' })).toThrow(
      "BATON_PAYLOAD_REF_THRESHOLD_BYTES is '64k'; it must be a whole number of at least 1",
    );
    expect(() => readConfig({ ...BASE, [ENV.payloadRefLocation]: 's3' })).toThrow(
      "BATON_PAYLOAD_REF_LOCATION is 's3'; use one of store, nats-object-store",
    );
    expect(() =>
      readConfig({
        ...BASE,
        [ENV.transportUrl]: 'kafka://127.0.0.1:9092',
        [ENV.payloadRefLocation]: 'nats-object-store',
      }),
    ).toThrow(/nats-object-store, which needs a NATS bus/);
    expect(() => readConfig({ ...BASE, [ENV.payloadRefBucket]: 'B' })).toThrow(
      'BATON_PAYLOAD_REF_BUCKET is set, but BATON_PAYLOAD_REF_LOCATION is not nats-object-store',
    );
  });

  it('refuses a shutdown timeout that leaves no room for the drain', () => {
    expect(() =>
      readConfig({ ...BASE, [ENV.drainTimeoutMs]: '10000', [ENV.shutdownTimeoutMs]: '5000' }),
    ).toThrow(/BATON_SHUTDOWN_TIMEOUT_MS \(5000\) must be above BATON_DRAIN_TIMEOUT_MS/);
  });

  it('refuses buses and stores it cannot share across processes or does not know', () => {
    const config = (overrides: Record<string, string>) => readConfig({ ...BASE, ...overrides });
    expect(() => transportFromConfig(config({ [ENV.transportUrl]: 'memory:' }))).toThrow(/cannot be shared/);
    expect(() => transportFromConfig(config({ [ENV.transportUrl]: 'amqp://x' }))).toThrow(
      /BATON_TRANSPORT_URL 'amqp:\/\/x' names an unsupported bus/,
    );
    expect(() => storeFromConfig(config({ [ENV.storeUrl]: 'mysql://root:pw@db/x' }))).toThrow(
      /BATON_STORE_URL 'mysql:\/\/root:\*\*\*@db\/x' names an unsupported store/,
    );
    expect(() => storeFromConfig(config({ [ENV.storeUrl]: 'localhost' }))).toThrow(/has no scheme/);
  });

  it('never shows a password in a URL it reports', () => {
    expect(maskUrl('redis://user:s3cret@host:6379/0')).toBe('redis://user:***@host:6379/0');
    expect(maskUrl('not a url')).not.toContain('not a url');
    expect(maskUrl('nats://s3cret-token@nats:4222')).toBe('nats://***@nats:4222');
  });

  it('loads workflows from a module and names a module that exports none or fails to load', async () => {
    const workflows = await loadWorkflows(['../../../libs/testing/src/crash/crash-workflow.ts'], HERE);
    expect(workflows.map((w) => `${w.name}@${w.version}`)).toEqual([
      'crash_chain@1',
      'crash_parent@1',
      'crash_keyed@1',
      'crash_limited@1',
      'crash_updatable@1',
    ]);
    await expect(loadWorkflows(['./config.ts'], HERE)).rejects.toThrow(
      /module '\.\/config\.ts' exports no workflow/,
    );
    await expect(loadWorkflows(['./missing.js'], HERE)).rejects.toThrow(
      /module '\.\/missing\.js' could not be loaded/,
    );
  });

  it('refuses two different definitions of one name@version, naming the module and export of each', async () => {
    await expect(loadWorkflows(['./duplicate-workflows.spec-helper.ts'], HERE)).rejects.toThrow(
      "BATON_WORKFLOWS: workflow dup@1 has two different definitions, module './duplicate-workflows.spec-helper.ts' " +
        "export 'dupFirst' and module './duplicate-workflows.spec-helper.ts' export 'dupSecond'",
    );
  });

  it('takes one definition exported several times, from one module or two, as one workflow', async () => {
    const workflows = await loadWorkflows(
      ['./same-workflow-twice.spec-helper.ts', './same-workflow-twice.spec-helper.ts'],
      HERE,
    );
    expect(workflows.map((w) => `${w.name}@${w.version}`)).toEqual(['same@1']);
  });
});
