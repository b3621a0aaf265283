/**
 * client.schedules on the memory adapters: what create writes (first due time after now on the
 * store's clock, defaults filled in), what it refuses, updates that re-time a schedule, pause and
 * resume, and a write that loses its compare-and-set to a firing and tries again.
 */
import { describe, expect, it } from 'vitest';
import { defineWorkflow, InvalidInputError } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import type { Store } from '@baton/core/adapter';
import { Client } from './client.js';

const report = defineWorkflow({
  name: 'report',
  version: 3,
  run: async (_ctx, input: { region: string }) => input.region,
});

function setup(clock: () => number = Date.now): { client: Client; store: Store } {
  const store = memoryStore({ clock });
  return { client: new Client({ transport: memoryTransport(), store }), store };
}

describe('client.schedules', () => {
  it("refuses a workflow every fired start of which the workers would refuse, with client.start's check; nothing stored", async () => {
    const { client, store } = setup();
    for (const [workflow, field] of [
      [{ name: 'report', version: 0 }, 'version'],
      [{ name: 'report@3', version: 3 }, 'workflow'],
    ] as const) {
      const error = await client.schedules
        .create(workflow, null, { scheduleId: 'bad', every: '1m' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ field });
      expect((error as Error).message).toMatch(
        /^client\.schedules\.create\(report.*A worker would refuse its starts/,
      );
    }
    expect(await store.schedules.get('bad')).toBeUndefined();
  });

  it('creates a schedule due at the first due time after now, with the default policies', async () => {
    const now = Date.UTC(2026, 5, 1, 10, 0, 30);
    const { client } = setup(() => now);
    const created = await client.schedules.create(report, { region: 'eu' }, { scheduleId: 'r', every: '1m' });
    expect(created).toMatchObject({
      scheduleId: 'r',
      workflow: 'report',
      version: 3,
      input: { region: 'eu' },
      spec: { everyMs: 60_000 },
      catchup: { missed: 'skip', limit: 1, graceMs: 60_000 },
      overlap: 'skip',
      jitterMs: 0,
      paused: false,
      nextDueAt: Date.UTC(2026, 5, 1, 10, 1, 0),
      nextFireAt: Date.UTC(2026, 5, 1, 10, 1, 0),
      revision: 1,
    });
    expect(await client.schedules.upcoming('r', 2)).toEqual([
      Date.UTC(2026, 5, 1, 10, 1, 0),
      Date.UTC(2026, 5, 1, 10, 2, 0),
    ]);
  });

  it('refuses a bad timing, a used id and a client without a store, saying what to give', async () => {
    const { client } = setup();
    await expect(client.schedules.create(report, { region: 'eu' }, {})).rejects.toThrow(
      /give cron \(with timeZone\) or every/,
    );
    await expect(
      client.schedules.create(report, { region: 'eu' }, { cron: '0 2 * * *', every: '1h' }),
    ).rejects.toThrow(/give cron or every, not both/);
    await expect(
      client.schedules.create(report, { region: 'eu' }, { cron: '0 2 * * *', timeZone: 'Nowhere/City' }),
    ).rejects.toThrow(/time zone 'Nowhere\/City' is unknown/);
    await client.schedules.create(report, { region: 'eu' }, { scheduleId: 'taken', every: '1h' });
    await expect(
      client.schedules.create(report, { region: 'us' }, { scheduleId: 'taken', every: '1h' }),
    ).rejects.toThrow(/schedule taken exists already/);
    await expect(client.schedules.get('missing')).rejects.toMatchObject({ code: 'BATON_NOT_FOUND' });
    const producer = new Client({ transport: memoryTransport() });
    await expect(producer.schedules.list()).rejects.toThrow(/create the Client with \{ transport, store \}/);
  });

  it('an update of the timing carries on from now; one of the input leaves the next due time', async () => {
    let now = Date.UTC(2026, 5, 1, 10, 0, 30);
    const { client } = setup(() => now);
    const created = await client.schedules.create(report, { region: 'eu' }, { scheduleId: 'u', every: '1h' });
    const input = await client.schedules.update('u', { input: { region: 'us' } });
    expect(input).toMatchObject({ input: { region: 'us' }, nextDueAt: created.nextDueAt, revision: 2 });
    now += 5_000;
    const retimed = await client.schedules.update('u', {
      cron: '15 * * * *',
      timeZone: 'Asia/Kolkata',
      overlap: 'allow',
    });
    // 15 past in Kolkata (UTC+05:30) is 45 past in UTC.
    expect(retimed).toMatchObject({
      overlap: 'allow',
      nextDueAt: Date.UTC(2026, 5, 1, 10, 45, 0),
      revision: 3,
    });
  });

  it('pause and resume say whether they changed anything; resume skips the due times while paused', async () => {
    let now = Date.UTC(2026, 5, 1, 10, 0, 30);
    const { client, store } = setup(() => now);
    await client.schedules.create(report, { region: 'eu' }, { scheduleId: 'p', every: '1m' });
    expect(await client.schedules.pause('p')).toBe(true);
    expect(await client.schedules.pause('p')).toBe(false);
    now += 10 * 60_000;
    expect(await client.schedules.resume('p')).toBe(true);
    expect(await client.schedules.resume('p')).toBe(false);
    expect(await store.schedules.get('p')).toMatchObject({
      paused: false,
      nextDueAt: Date.UTC(2026, 5, 1, 10, 11, 0),
    });
    expect(await client.schedules.delete('p')).toBe(true);
    expect(await client.schedules.delete('p')).toBe(false);
  });

  it('tries again when a firing moved the schedule on between its read and its write', async () => {
    const { client, store } = setup();
    await client.schedules.create(report, { region: 'eu' }, { scheduleId: 'race', every: '1m' });
    const update = store.schedules.update.bind(store);
    let raced = false;
    // The first write of the client loses: a "firing" writes the schedule just before it.
    store.schedules.update = async (id, revision, next) => {
      if (!raced) {
        raced = true;
        const current = (await store.schedules.get(id))!;
        const { scheduleId: _i, revision: _r, createdAt: _c, updatedAt: _u, ...fields } = current;
        await update(id, current.revision, { ...fields, lastRunId: 'fired-run', lastDueAt: 1 });
      }
      return update(id, revision, next);
    };
    const paused = await client.schedules.update('race', { note: 'after the firing' });
    expect(paused).toMatchObject({ note: 'after the firing', lastRunId: 'fired-run', revision: 3 });
  });
});
