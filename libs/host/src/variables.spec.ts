import { describe, expect, it } from 'vitest';
import type { AdapterVariable } from '@baton/core/adapter';
import { PAYLOAD_ENV } from '@baton/core/runtime';
import { ENV } from './config.js';
import { OPERATOR_ENV } from './operator-config.js';
import { ADAPTERS } from './registry.js';
import { CONSOLE_ENV, PRODUCER_ENV, VARIABLES } from './variables.js';

const names = VARIABLES.map((v) => v.name);

describe('the table of BATON_* variables', () => {
  it('declares each variable once, with a reader, a description and a default', () => {
    expect(new Set(names).size).toBe(names.length);
    for (const v of VARIABLES) {
      expect(v.name, v.name).toMatch(/^BATON_[A-Z0-9_]+$/);
      expect(v.readBy.length, v.name).toBeGreaterThan(0);
      expect(v.description.trim(), v.name).not.toBe('');
      expect(v.description, `${v.name}: one line`).not.toContain('\n');
      expect(v.default.trim(), v.name).not.toBe('');
    }
  });

  it("holds every name the processes read: the worker's, the adapters', the payload keys, the producer's and the console's", () => {
    const adapters = ADAPTERS.flatMap((r) =>
      (Object.values(r.variables) as AdapterVariable<unknown>[]).map((v) => v.name),
    );
    for (const name of [
      ...Object.values(ENV),
      ...adapters,
      ...Object.values(PAYLOAD_ENV),
      ...Object.values(PRODUCER_ENV),
      ...Object.values(CONSOLE_ENV),
    ])
      expect(names).toContain(name);
    // ENV is what the worker reads: exactly the rows read by `worker`.
    expect(new Set(Object.values(ENV))).toEqual(
      new Set(VARIABLES.filter((v) => v.readBy.includes('worker')).map((v) => v.name)),
    );
    expect(OPERATOR_ENV).toEqual(
      expect.arrayContaining([ENV.storeUrl, ENV.encryptionKeys, ENV.postgresSchema]),
    );
  });

  it('marks the keys, passwords and the console token secret', () => {
    const secrets = VARIABLES.filter((v) => v.secret).map((v) => v.name);
    expect(secrets).toEqual(
      expect.arrayContaining([
        'BATON_ENCRYPTION_KEYS',
        'BATON_SIGNING_KEYS',
        'BATON_REDIS_SENTINEL_PASSWORD',
        'BATON_REDIS_BUS_SENTINEL_PASSWORD',
        'BATON_CONSOLE_TOKEN',
      ]),
    );
  });

  it('gives each CLI flag to one variable only', () => {
    const flags = VARIABLES.flatMap((v) => (v.flag === undefined ? [] : [v.flag.name]));
    expect(new Set(flags).size).toBe(flags.length);
    for (const flag of flags) expect(flag).toMatch(/^--[a-z][a-z-]*$/);
  });
});
