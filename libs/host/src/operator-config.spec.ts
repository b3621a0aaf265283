import { describe, expect, it } from 'vitest';
import { loadAdapterCode } from './adapters.js';
import { OPERATOR_ENV, operatorAdapters, readOperatorConfig } from './operator-config.js';

const BASE = { BATON_TRANSPORT_URL: 'nats://127.0.0.1:4222', BATON_STORE_URL: 'redis://127.0.0.1:6379' };

describe('the operator configuration (the baton CLI)', () => {
  it('needs both URLs but no workflow modules, and reads the namespace and payload variables', () => {
    const config = readOperatorConfig({
      ...BASE,
      BATON_NATS_PREFIX: 'tenant7',
      BATON_REDIS_KEY_PREFIX: 'tenant7:',
      BATON_PAYLOAD_REF_THRESHOLD_BYTES: 'off',
    });
    expect(config.transportUrl).toBe(BASE.BATON_TRANSPORT_URL);
    expect(config.nats.prefix).toBe('tenant7');
    expect(config.redis.keyPrefix).toBe('tenant7:');
    expect(config.largePayloads.thresholdBytes).toBe('off');
    expect(() => readOperatorConfig({ BATON_TRANSPORT_URL: BASE.BATON_TRANSPORT_URL })).toThrow(
      /BATON_STORE_URL is not set/,
    );
  });

  it('neither reads nor checks the worker-only variables', () => {
    expect(OPERATOR_ENV).not.toContain('BATON_CONCURRENCY');
    expect(OPERATOR_ENV).not.toContain('BATON_WORKFLOWS');
    const config = readOperatorConfig({ ...BASE, BATON_CONCURRENCY: '-3', BATON_LEASE_MS: 'soon' });
    expect(config.tuning.concurrency).toBeUndefined();
  });

  it('reports a bad operator variable as the worker does, naming it', async () => {
    expect(() => readOperatorConfig({ ...BASE, BATON_PAYLOAD_REF_LOCATION: 'disk' })).toThrow(
      /BATON_PAYLOAD_REF_LOCATION is 'disk'; use one of store, nats-object-store/,
    );
    const mysql = readOperatorConfig({ ...BASE, BATON_STORE_URL: 'mysql://x/y' });
    await loadAdapterCode(mysql);
    expect(() => operatorAdapters(mysql)).toThrow(
      /BATON_STORE_URL 'mysql:\/\/x\/y' names an unsupported store/,
    );
  });
});
