/**
 * Starts during a rollout (memory adapters): a start for a workflow version this worker lacks goes
 * to a live worker that registers it (read from the fleet reports), is dead-lettered only once no
 * live worker has had it for `missingVersionGraceMs`, and such a dead letter is redriven by itself
 * when a worker that registers the version starts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineWorkflow } from '@baton/core';
import type { FleetStore, ReportedWorker } from '@baton/core/adapter';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';
import { silentLogger } from './logger.js';
import { VersionHolders } from './fleet/version-holders.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const v1 = defineWorkflow({ name: 'order', version: 1, run: async (_ctx, n: number) => `v1:${n}` });
const v2 = defineWorkflow({ name: 'order', version: 2, run: async (_ctx, n: number) => `v2:${n}` });

describe('starts of a version only some workers register (memory adapters)', () => {
  it('sends every start to a live worker with its version, even with no grace at all, and counts the put-backs', async () => {
    current = fleet({ workflows: [v1], missingVersionGraceMs: 0 });
    const old = [await current.spawn(), await current.spawn(), await current.spawn()];
    const fresh = await current.spawn({ workflows: [v1, v2] });
    const handles = await Promise.all(Array.from({ length: 30 }, (_, i) => current!.client.start(v2, i)));
    const results = await Promise.all(handles.map((h) => h.result({ timeoutMs: 20_000 })));
    expect(results).toEqual(Array.from({ length: 30 }, (_, i) => `v2:${i}`));

    expect(await current.transport.deadLetters.list()).toEqual([]);
    const claimedByOld = old.flatMap((w) => w.events.filter((e) => e.type === 'run-claimed'));
    expect(claimedByOld).toEqual([]);
    expect(fresh.events.filter((e) => e.type === 'run-claimed')).toHaveLength(30);
    const putBacks = old.flatMap((w) => w.events.filter((e) => e.type === 'run-put-back'));
    // Every put-back of a v2 start knew a live worker had v2, and none became a dead letter.
    for (const e of putBacks) expect(e).toMatchObject({ start: true, toHolder: true, version: 2 });
    const perRun = new Map<string, number>();
    for (const e of putBacks)
      if (e.type === 'run-put-back') perRun.set(e.runId, (perRun.get(e.runId) ?? 0) + 1);
    console.log(
      `put-backs per v2 start (3 v1 workers, 1 v1+v2): total ${putBacks.length}, ` +
        `max ${Math.max(0, ...perRun.values())}, runs put back ${perRun.size} of 30`,
    );
  });

  it('puts a start back while no worker has its version, dead-letters it after the grace, and redrives it when a worker with the version starts', async () => {
    current = fleet({ workflows: [v1], missingVersionGraceMs: 700 });
    const old = await current.spawn();
    const handle = await current.client.start(v2, 7);
    await until(
      async () => (await current!.transport.deadLetters.list()).length === 1,
      10_000,
      'the dead letter',
    );
    const [letter] = await current.transport.deadLetters.list();
    expect(letter!.code).toBe('unknown-workflow');
    expect(letter!.reason).toMatch(/workflow order@2 is not registered on this worker \(it has: order@1\)/);
    expect(letter!.reason).toMatch(/missingVersionGraceMs 700/);
    expect(await current.store.runs.get(handle.runId)).toBeUndefined();
    // Put back (start, no holder) before it was dead-lettered, never after.
    const kinds = old.events
      .filter((e) => e.type === 'run-put-back' || e.type === 'dead-lettered')
      .map((e) => (e.type === 'run-put-back' ? `put-back:${String(e.toHolder)}` : e.type));
    expect(kinds.length).toBeGreaterThanOrEqual(2);
    expect(kinds.at(-1)).toBe('dead-lettered');
    expect(new Set(kinds.slice(0, -1))).toEqual(new Set(['put-back:false']));

    const fresh = await current.spawn({ workflows: [v1, v2] });
    expect(await handle.result({ timeoutMs: 10_000 })).toBe('v2:7');
    expect(await current.transport.deadLetters.list()).toEqual([]);
    expect(fresh.events).toContainEqual(
      expect.objectContaining({ type: 'dead-letters-redriven', runIds: [handle.runId] }),
    );
  });

  it('leaves other dead letters alone when redriving', async () => {
    current = fleet({ workflows: [v1], missingVersionGraceMs: 0 });
    await current.spawn();
    const v3 = defineWorkflow({ name: 'order', version: 3, run: async () => 'v3' });
    const h3 = await current.client.start(v3, 0);
    const h2 = await current.client.start(v2, 1);
    await until(
      async () => (await current!.transport.deadLetters.list()).length === 2,
      10_000,
      'two letters',
    );
    await current.spawn({ workflows: [v1, v2] });
    expect(await h2.result({ timeoutMs: 10_000 })).toBe('v2:1');
    const left = await current.transport.deadLetters.list();
    expect(left).toHaveLength(1);
    expect(left[0]!.reason).toContain('order@3');
    expect(await current.store.runs.get(h3.runId)).toBeUndefined();
  });
});

describe('VersionHolders', () => {
  const report = (workerId: string, versions: number[], draining = false): ReportedWorker => ({
    workerId,
    host: 'h',
    pid: 1,
    batonVersion: 'x',
    workflows: [{ name: 'order', versions }],
    startedAt: 0,
    lastRenewalAt: null,
    runsHeld: 0,
    concurrency: 1,
    draining,
    lastSeenAt: 0,
    expiresAt: 1,
  });
  const storeOf = (list: () => ReportedWorker[]): FleetStore => ({
    report: () => Promise.resolve(),
    forget: () => Promise.resolve(),
    depart: () => Promise.resolve(),
    departed: () => Promise.resolve([]),
    list: () => Promise.resolve(list()),
  });

  it('counts only other, non-draining workers, and times how long a version was missing', async () => {
    let now = 0;
    let workers = [report('me', [2]), report('old', [1]), report('leaving', [2], true)];
    const holders = new VersionHolders(
      storeOf(() => workers),
      'me',
      silentLogger,
      () => now,
    );
    expect(await holders.someoneHas('order', 2)).toBe(false);
    now = 5_000;
    expect(await holders.someoneHas('order', 2)).toBe(false);
    expect(holders.missingForMs('order', 2)).toBe(5_000);
    workers = [...workers, report('new', [1, 2])];
    now = 7_000;
    expect(await holders.someoneHas('order', 2)).toBe(true);
    expect(holders.missingForMs('order', 2)).toBe(0);
    expect(await holders.someoneHas('order', 1)).toBe(true);
  });

  it('answers "not known" when the fleet cannot be read, and the grace keeps running', async () => {
    let now = 0;
    let calls = 0;
    const holders = new VersionHolders(
      {
        ...storeOf(() => []),
        list: () => (calls++, Promise.reject(new Error('store down'))),
      },
      'me',
      silentLogger,
      () => now,
    );
    expect(await holders.someoneHas('order', 2)).toBeUndefined();
    expect(await holders.someoneHas('order', 2)).toBeUndefined();
    expect(calls).toBe(1); // one listing answers for a second
    now = 3_000;
    expect(await holders.someoneHas('order', 2)).toBeUndefined();
    expect(calls).toBe(2);
    expect(holders.missingForMs('order', 2)).toBe(3_000);
  });
});
