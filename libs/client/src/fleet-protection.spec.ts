import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defineWorkflow } from '@baton/core';
import type { ReportedEncryption, WorkerReport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { resolvePayloadProtection } from '@baton/core/runtime';
import { FLEET_PROTECTION_TTL_MS, FleetProtectionCheck } from './fleet-protection.js';
import { Client } from './index.js';

const key = (id: string): string => `${id}:${randomBytes(32).toString('base64')}`;
const K1 = key('k1');
const K2 = key('k2');
const greet = defineWorkflow({ name: 'greet', version: 1, run: async (_ctx, name: string) => `hi ${name}` });

function report(workerId: string, encryption?: ReportedEncryption): WorkerReport {
  return {
    workerId,
    host: 'node-1',
    pid: 100,
    batonVersion: '0.1.0',
    workflows: [{ name: 'greet', versions: [1] }],
    startedAt: 1_000,
    lastRenewalAt: 2_000,
    runsHeld: 0,
    concurrency: 8,
    draining: false,
    ...(encryption !== undefined && { encryption }),
  };
}

const REQUIRES_K1: ReportedEncryption = { activeKey: 'k1', keys: ['k1'], allowsPlaintext: false };

describe('a client refused before it sends what the fleet cannot read', () => {
  it('refuses a keyless start and signal to a fleet that requires encryption, naming the key, and sends nothing', async () => {
    const store = memoryStore();
    const transport = memoryTransport();
    await store.fleet.report(report('w-1', REQUIRES_K1), 60_000);
    const client = new Client({ transport, store });
    await expect(client.start(greet, 'ada')).rejects.toThrow(
      /client.start\(greet@1\): the fleet requires encryption with key k1 \(values sent in the clear are refused by worker w-1\), and this client has no encryption key; .*BATON_ENCRYPTION_KEYS with key k1\)\. Nothing was sent/,
    );
    await expect(client.signal('r-1', 'go', { ok: true })).rejects.toThrow(
      /client.signal\(run r-1, 'go'\): the fleet requires encryption/,
    );
    expect((await client.fleet.backlog()).total).toBe(0);
  });

  it('lets a client with the key through, and a keyless one while the workers allow plaintext or report no encryption', async () => {
    const store = memoryStore();
    const transport = memoryTransport();
    await store.fleet.report(report('w-1', REQUIRES_K1), 60_000);
    const keyed = new Client({
      transport,
      store,
      payloadProtection: resolvePayloadProtection({ encryptionKeys: K1 }, {}),
    });
    await keyed.start(greet, 'ada');
    expect((await keyed.fleet.backlog()).total).toBe(1);

    const migrating = memoryStore();
    await migrating.fleet.report(report('w-1', { ...REQUIRES_K1, allowsPlaintext: true }), 60_000);
    await migrating.fleet.report(report('w-2'), 60_000);
    await new Client({ transport, store: migrating }).start(greet, 'bob');
    // No live worker at all: nothing to judge by, nothing refused (the worker still checks).
    await new Client({ transport, store: memoryStore() }).start(greet, 'cy');
    expect((await keyed.fleet.backlog()).total).toBe(3);
  });

  it('refuses a client whose active key no live worker holds, naming the keys they hold', async () => {
    const store = memoryStore();
    await store.fleet.report(report('w-1', REQUIRES_K1), 60_000);
    const ahead = new Client({
      transport: memoryTransport(),
      store,
      payloadProtection: resolvePayloadProtection({ encryptionKeys: `${K2},${K1}` }, {}),
    });
    await expect(ahead.start(greet, 'ada')).rejects.toThrow(
      /this client encrypts with key k2, which no live worker holds \(keys held: k1, by worker w-1\); add key k2/,
    );
  });

  it('reads a passing fleet once per period, judges every refusal afresh, and lets the call through when the store cannot be read', async () => {
    const store = memoryStore();
    await store.fleet.report(report('w-1', REQUIRES_K1), 60_000);
    let listings = 0;
    let now = 0;
    const counting = {
      list: () => (listings++, store.fleet.list()),
    } as unknown as typeof store.fleet;
    const check = new FleetProtectionCheck(counting, resolvePayloadProtection({}, {}), () => now);
    for (let i = 0; i < 3; i++)
      await expect(check.check('op')).rejects.toThrow(/^op: the fleet requires encryption/);
    expect(listings).toBe(3);
    // The protected worker stops: the very next call is judged on the fleet as it is now, with no
    // time passed (the shared client of a spec was refused from a reading taken before the stop).
    await store.fleet.forget('w-1');
    await check.check('op');
    expect(listings).toBe(4);
    for (let i = 0; i < 5; i++) await check.check('op');
    expect(listings).toBe(4);
    // A worker requiring encryption joins: within the period the passing reading stands (the
    // worker refuses what it cannot read); after it, the client refuses again.
    await store.fleet.report(report('w-2', REQUIRES_K1), 60_000);
    await check.check('op');
    now += FLEET_PROTECTION_TTL_MS;
    await expect(check.check('op')).rejects.toThrow(/^op: the fleet requires encryption/);
    expect(listings).toBe(5);
    const failing = { list: () => Promise.reject(new Error('store away')) } as unknown as typeof store.fleet;
    await new FleetProtectionCheck(failing, resolvePayloadProtection({}, {})).check('op');
  });

  it('refuses a report whose encryption field is malformed, naming the field', async () => {
    const store = memoryStore();
    await expect(
      store.fleet.report(report('w-1', { activeKey: 'k1', keys: [], allowsPlaintext: false }), 60_000),
    ).rejects.toThrow(/worker report: encryption.keys is \[\]; give at least one key id/);
  });
});
