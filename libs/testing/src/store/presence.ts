/**
 * Store conformance, PresenceStore section: a worker's registration lives as long as its store
 * connection, and the runs of a worker whose connection dropped are reaped at once, without
 * waiting for lease expiry. Needs two stores on the same data (a "pair"), because one store
 * cannot watch its own connection drop. Presence is optional in the contract: a store without it
 * has no pair and skips this section (see describeStoreConformance).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PresenceStore, Store } from '@baton/core/adapter';

/** A store with worker presence. */
type PresentStore = Store & { readonly presence: PresenceStore };
import { setTimeout as sleep } from 'node:timers/promises';
import { uniqueId } from '../conformance-helpers.js';
import { LONG_TTL_MS, acquireOk, createTestRun } from './helpers.js';
import { report } from './fleet.js';

/** Opens two stores over separate connections on the same data (same key prefix or schema). */
export type StorePairFactory = () => Promise<[Store, Store]> | [Store, Store];

/** How long a server may take to notice a closed connection. */
const NOTICE_WITHIN_MS = 5_000;

/** Calls `reapDead` until it returns something or the time is up. */
async function reapUntilFound(store: PresenceStore, limit = 10): Promise<string[]> {
  const deadline = Date.now() + NOTICE_WITHIN_MS;
  for (;;) {
    const reaped = await store.reapDead(limit, LONG_TTL_MS);
    if (reaped.length > 0 || Date.now() > deadline) return reaped;
    await sleep(50);
  }
}

export function describePresenceConformance(pairFactory: StorePairFactory): void {
  describe('presence', () => {
    const open: Store[] = [];
    afterEach(async () => {
      await Promise.allSettled(open.splice(0).map((s) => s.close()));
    });

    async function pair(): Promise<[PresentStore, PresentStore]> {
      const [a, b] = await pairFactory();
      open.push(a, b);
      if (a.presence === undefined || b.presence === undefined)
        throw new Error(
          `${a.name} store: the presence section was given a pair, but the store lacks presence ` +
            '(store.presence: register, unregister, reapDead, live, takeScanTurn, publishMembership, ' +
            'readMembership): implement all seven, or pass no pair',
        );
      await a.connect();
      await b.connect();
      return [a as PresentStore, b as PresentStore];
    }

    it('lists a registered worker as live until it unregisters', async () => {
      const [a, b] = await pair();
      const worker = uniqueId('worker');
      await a.presence.register(worker);
      await a.presence.register(worker);
      expect(await b.presence.live()).toContain(worker);
      await a.presence.unregister(worker);
      expect(await b.presence.live()).not.toContain(worker);
    });

    it("reaps a dead worker's held leases as soon as its connection drops, not at lease expiry", async () => {
      const [a, b] = await pair();
      const dead = uniqueId('dead');
      const alive = uniqueId('alive');
      await a.presence.register(dead);
      await b.presence.register(alive);
      const { runId: orphan } = await createTestRun(b, 'orphan');
      const { runId: kept } = await createTestRun(b, 'kept');
      const stale = await acquireOk(b, orphan, dead, LONG_TTL_MS);
      await acquireOk(b, kept, alive, LONG_TTL_MS);
      expect(await b.presence.reapDead(10, LONG_TTL_MS)).toEqual([]);

      await a.close();
      expect(await reapUntilFound(b.presence)).toEqual([orphan]);
      expect(await b.leases.get(orphan)).toMatchObject({ owner: null, state: 'held', epoch: stale });
      expect((await b.leases.renew([{ runId: orphan, epoch: stale }], LONG_TTL_MS))[0]?.ok).toBe(false);
      expect(await acquireOk(b, orphan, alive)).toBe(stale + 1);
      expect(await b.leases.get(kept)).toMatchObject({ owner: alive, epoch: 1 });
      expect(await b.presence.live()).not.toContain(dead);
      expect(await b.presence.live()).toContain(alive);
      expect(await b.presence.reapDead(10, LONG_TTL_MS)).toEqual([]);
    });

    it("leaves a dead worker's suspended and finished runs alone", async () => {
      const [a, b] = await pair();
      const dead = uniqueId('dead');
      await a.presence.register(dead);
      const { runId: held } = await createTestRun(b, 'held');
      const { runId: suspended } = await createTestRun(b, 'suspended');
      const { runId: finished } = await createTestRun(b, 'finished');
      await acquireOk(b, held, dead);
      const suspendEpoch = await acquireOk(b, suspended, dead);
      await b.leases.suspend({
        runId: suspended,
        epoch: suspendEpoch,
        wakeAt: null,
        signals: ['go'],
        consumedSignalIds: [],
      });
      const finishEpoch = await acquireOk(b, finished, dead);
      await b.runs.finish(finished, finishEpoch, { status: 'completed', result: 1 });

      await a.close();
      expect(await reapUntilFound(b.presence)).toEqual([held]);
      expect(await b.leases.get(suspended)).toMatchObject({ state: 'suspended' });
      expect(await b.leases.get(finished)).toMatchObject({ state: 'finished' });
    });

    it('reaps at most `limit` leases per call and the rest on the next', async () => {
      const [a, b] = await pair();
      const dead = uniqueId('dead');
      await a.presence.register(dead);
      const runIds = [uniqueId('r1'), uniqueId('r2'), uniqueId('r3')];
      for (const runId of runIds) await acquireOk(b, runId, dead);
      await a.close();
      const first = await reapUntilFound(b.presence, 2);
      expect(first).toHaveLength(2);
      const second = await b.presence.reapDead(2, LONG_TTL_MS);
      expect([...first, ...second].sort()).toEqual([...runIds].sort());
      expect(await b.presence.reapDead(2, LONG_TTL_MS)).toEqual([]);
    });

    it('gives the turn of a scan to one worker at a time, renews it for its holder, and hands it on once it ran out', async () => {
      const [a, b] = await pair();
      const scan = uniqueId('scan');
      const [first, second] = [uniqueId('w1'), uniqueId('w2')];
      const turnMs = 400;
      const held = async (store: PresenceStore, name: string, worker: string) =>
        (await store.takeScanTurn(name, worker, turnMs)).held;
      expect(await held(a.presence, scan, first)).toBe(true);
      expect(await held(b.presence, scan, second)).toBe(false);
      // The holder renews its own turn; another scan's turn is separate.
      expect(await held(a.presence, scan, first)).toBe(true);
      expect(await held(b.presence, uniqueId('other-scan'), second)).toBe(true);
      expect(await held(b.presence, scan, second)).toBe(false);
      await sleep(turnMs + 100);
      expect(await held(b.presence, scan, second)).toBe(true);
      expect(await held(a.presence, scan, first)).toBe(false);
    });

    it("hands a scan's turn on as soon as its holder's presence is gone, not when the turn runs out", async () => {
      const [a, b] = await pair();
      const scan = uniqueId('scan');
      const [holder, asker] = [uniqueId('holder'), uniqueId('asker')];
      const turnMs = 60_000;
      await a.presence.register(holder);
      await b.presence.register(asker);
      expect((await a.presence.takeScanTurn(scan, holder, turnMs)).held).toBe(true);
      // A live holder keeps it, however often others ask.
      for (let i = 0; i < 3; i++)
        expect((await b.presence.takeScanTurn(scan, asker, turnMs)).held).toBe(false);
      expect((await a.presence.takeScanTurn(scan, holder, turnMs)).held).toBe(true);

      await a.close(); // as when the holder's process dies: its connections close
      const deadline = Date.now() + NOTICE_WITHIN_MS;
      let held = false;
      while (!held && Date.now() < deadline) {
        held = (await b.presence.takeScanTurn(scan, asker, turnMs)).held;
        if (!held) await sleep(50);
      }
      // Within the time a server takes to notice a closed connection, a minute before it runs out.
      expect(held).toBe(true);
      expect((await b.presence.takeScanTurn(scan, asker, turnMs)).held).toBe(true);
    });

    it('gives a free turn to exactly one of many workers asking at once', async () => {
      const [a, b] = await pair();
      const scan = uniqueId('scan');
      const asks = Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b).presence.takeScanTurn(scan, `worker-${i}`, 5_000),
      );
      expect((await Promise.all(asks)).filter((turn) => turn.held)).toHaveLength(1);
    });

    it('counts the workers (registered and reporting) with every answer about a turn', async () => {
      const [a, b] = await pair();
      const before = (await b.presence.takeScanTurn(uniqueId('scan'), 'asker', 1_000)).workers;
      const workers = [uniqueId('w1'), uniqueId('w2'), uniqueId('w3')];
      // A worker registers and reports (as the Worker does); a store may count either.
      for (const worker of workers) {
        await a.presence.register(worker);
        await a.fleet.report(report(worker), LONG_TTL_MS);
      }
      expect((await b.presence.takeScanTurn(uniqueId('scan'), 'asker', 1_000)).workers).toBe(before + 3);
      await a.presence.unregister(workers[0]!);
      await a.fleet.forget(workers[0]!);
      expect((await b.presence.takeScanTurn(uniqueId('scan'), 'asker', 1_000)).workers).toBe(before + 2);
    });

    it('publishes the member list with a generation that moves when the set changes and only then', async () => {
      const [a, b] = await pair();
      const turn = uniqueId('membership');
      // Any text is an id: quotes, commas, braces and spaces must survive the store's encoding.
      const [w1, w2, w3] = [uniqueId('w1'), uniqueId('w2'), uniqueId('w3 "odd", {ü}')];
      expect(await b.presence.readMembership(0, turn)).toEqual({ generation: 0, turnFree: true });

      const first = await a.presence.publishMembership([w2, w1, w2]);
      expect(first).toBeGreaterThan(0);
      // Sorted, without the repeat, from the other store too; unknown generations get the list.
      expect(await b.presence.readMembership(0, turn)).toEqual({
        generation: first,
        members: [w1, w2].sort(),
        turnFree: true,
      });
      expect(await b.presence.readMembership(first - 1, turn)).toMatchObject({ members: [w1, w2].sort() });
      // A reader that knows the generation gets no list: a few bytes, whatever the fleet's size.
      expect(await b.presence.readMembership(first, turn)).toEqual({ generation: first, turnFree: true });

      // The same set in another order (and repeated) is no change.
      expect(await b.presence.publishMembership([w1, w2])).toBe(first);
      expect(await a.presence.publishMembership([w2, w1, w1])).toBe(first);
      expect((await a.presence.readMembership(first, turn)).generation).toBe(first);

      const second = await a.presence.publishMembership([w1, w2, w3]);
      expect(second).toBeGreaterThan(first);
      expect(await b.presence.readMembership(first, turn)).toEqual({
        generation: second,
        members: [w1, w2, w3].sort(),
        turnFree: true,
      });
      const third = await b.presence.publishMembership([w3]);
      expect(third).toBeGreaterThan(second);
      expect((await a.presence.readMembership(second, turn)).members).toEqual([w3]);
      // Back to an earlier set is a change too: a new generation, never an old one again.
      const fourth = await a.presence.publishMembership([w1, w2]);
      expect(fourth).toBeGreaterThan(third);
      expect((await b.presence.readMembership(first, turn)).members).toEqual([w1, w2].sort());
      expect(await b.presence.publishMembership([])).toBeGreaterThan(fourth);
      expect((await a.presence.readMembership(fourth, turn)).members).toEqual([]);
    });

    it("tells a membership reader whether the publisher's turn is held, and when it ran out", async () => {
      const [a, b] = await pair();
      const turn = uniqueId('membership');
      const turnMs = 400;
      expect((await b.presence.readMembership(0, turn)).turnFree).toBe(true);
      expect((await a.presence.takeScanTurn(turn, 'publisher', turnMs)).held).toBe(true);
      expect((await b.presence.readMembership(0, turn)).turnFree).toBe(false);
      // Another scan's turn says nothing about this one.
      expect((await b.presence.readMembership(0, uniqueId('other'))).turnFree).toBe(true);
      await sleep(turnMs + 100);
      expect((await b.presence.readMembership(0, turn)).turnFree).toBe(true);
      expect((await b.presence.takeScanTurn(turn, 'reader', turnMs)).held).toBe(true);
      expect((await a.presence.readMembership(0, turn)).turnFree).toBe(false);
    });

    it('tells a watching worker of a member list another store published, until it stops watching', async (ctx) => {
      const [a, b] = await pair();
      if (b.presence.watchMembership === undefined) {
        ctx.skip(`${b.name} store has no watchMembership (optional): its workers poll every period`);
        return;
      }
      const worker = uniqueId('watcher');
      await b.presence.register(worker);
      let calls = 0;
      const stop = b.presence.watchMembership(worker, () => {
        calls += 1;
      });
      const told = async (before: number): Promise<boolean> => {
        const deadline = Date.now() + NOTICE_WITHIN_MS;
        while (calls === before && Date.now() < deadline) await sleep(20);
        return calls > before;
      };
      let before = calls;
      await a.presence.publishMembership([worker, uniqueId('other')]);
      expect(await told(before), 'a new list published by another store').toBe(true);
      before = calls;
      await a.presence.publishMembership([worker]);
      expect(await told(before), 'a second new list').toBe(true);
      stop();
      await sleep(200); // a notification already on its way may still land
      before = calls;
      await a.presence.publishMembership([worker, uniqueId('third')]);
      await sleep(500);
      expect(calls, 'calls after the watch was stopped').toBe(before);
      await b.presence.unregister(worker);
    });

    it('never reaps the leases of a worker that never registered', async () => {
      const [a, b] = await pair();
      const { runId } = await createTestRun(b);
      await acquireOk(b, runId, uniqueId('unregistered'));
      await a.close();
      await sleep(200);
      expect(await b.presence.reapDead(10, LONG_TTL_MS)).toEqual([]);
      expect(await b.leases.get(runId)).toMatchObject({ epoch: 1 });
    });
  });
}

/**
 * Presence is optional, but all or nothing: a store implements the seven PresenceStore methods or
 * none, and one that implements them is given a pair so the presence section proves them.
 */
export function describePresenceChoice(
  factory: () => Promise<Store> | Store,
  pair: StorePairFactory | undefined,
): void {
  it('implements worker presence fully or not at all, and proves it when it does', async () => {
    const store = await factory();
    try {
      const methods = [
        'register',
        'unregister',
        'reapDead',
        'live',
        'takeScanTurn',
        'publishMembership',
        'readMembership',
      ] as const;
      const presence = store.presence;
      const present = methods.filter((m) => typeof presence?.[m] === 'function');
      expect(
        presence === undefined || present.length === methods.length,
        `presence methods: ${present.join(', ')}`,
      ).toBe(true);
      expect(
        presence !== undefined ? pair !== undefined : true,
        `${store.name} store implements presence: pass { pair } so the presence section runs`,
      ).toBe(true);
    } finally {
      await store.close();
    }
  });
}
