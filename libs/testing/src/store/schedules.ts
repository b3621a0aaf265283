/**
 * Store conformance, ScheduleStore section: schedules stored whole, every write a compare-and-set
 * on the revision (of two firings of one due time exactly one moves the schedule on), the due scan
 * on the store's clock leaving paused and future schedules out, listing by id with filters and
 * pages, delete. Each test gets a fresh store (its own prefix or schema).
 */
import { describe, expect, it } from 'vitest';
import type { NewSchedule, Store } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';

/** A schedule every minute whose next firing is `nextFireAt`. */
export function newSchedule(scheduleId: string, overrides: Partial<NewSchedule> = {}): NewSchedule {
  return {
    scheduleId,
    workflow: 'nightly_report',
    version: 2,
    input: { region: 'eu', tags: ['a', 'b'] },
    spec: { cron: '*/1 * * * *', timeZone: 'Europe/Paris' },
    catchup: { missed: 'run', limit: 3, graceMs: 60_000 },
    overlap: 'queue-one',
    jitterMs: 250,
    paused: false,
    nextDueAt: 1_700_000_040_000,
    nextFireAt: 1_700_000_040_100,
    queuedDueAt: null,
    lastDueAt: null,
    lastRunId: null,
    ...overrides,
  };
}

export function describeScheduleConformance(store: () => Store): void {
  describe('schedules', () => {
    it('creates a schedule at revision 1 stamped with the store clock, and reads it back whole', async () => {
      const s = store();
      const id = uniqueId('sched');
      const before = await s.leases.now();
      const created = await s.schedules.create(newSchedule(id, { note: 'eu nightly' }));
      const after = await s.leases.now();
      expect(created.created).toBe(true);
      expect(created.schedule).toEqual({
        ...newSchedule(id, { note: 'eu nightly' }),
        revision: 1,
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
      });
      expect(created.schedule.createdAt).toBeGreaterThanOrEqual(before);
      expect(created.schedule.createdAt).toBeLessThanOrEqual(after);
      expect(await s.schedules.get(id)).toEqual(created.schedule);
      expect(await s.schedules.get(uniqueId('none'))).toBeUndefined();
    });

    it('a second create of the same id changes nothing and answers the stored schedule', async () => {
      const s = store();
      const id = uniqueId('sched');
      const first = await s.schedules.create(newSchedule(id));
      const second = await s.schedules.create(newSchedule(id, { workflow: 'other', everyMs: 1 } as never));
      expect(second).toEqual({ created: false, schedule: first.schedule });
    });

    it('refuses a schedule with a bad id, cron, time zone or policy, writing nothing', async () => {
      const s = store();
      await expect(s.schedules.create(newSchedule('bad id!'))).rejects.toMatchObject({
        code: 'BATON_CONFIG',
      });
      const id = uniqueId('sched');
      await expect(s.schedules.create(newSchedule(id, { spec: { cron: 'not a cron' } }))).rejects.toThrow(
        /cron expression 'not a cron' is invalid/,
      );
      await expect(
        s.schedules.create(newSchedule(id, { spec: { cron: '0 * * * *', timeZone: 'Mars/Olympus' } })),
      ).rejects.toThrow(/time zone 'Mars\/Olympus' is unknown/);
      await expect(s.schedules.create(newSchedule(id, { overlap: 'sometimes' as never }))).rejects.toThrow(
        /overlap/,
      );
      expect(await s.schedules.get(id)).toBeUndefined();
    });

    it('of two firings that read the same revision, the compare-and-set lets exactly one through', async () => {
      const s = store();
      const id = uniqueId('sched');
      const { schedule } = await s.schedules.create(
        newSchedule(id, { spec: { everyMs: 60_000 }, jitterMs: 0 }),
      );
      const fired = (runId: string) => ({
        ...newSchedule(id, { spec: { everyMs: 60_000 }, jitterMs: 0 }),
        nextDueAt: schedule.nextDueAt! + 60_000,
        nextFireAt: schedule.nextDueAt! + 60_000,
        lastDueAt: schedule.nextDueAt,
        lastRunId: runId,
      });
      const answers = await Promise.all([
        s.schedules.update(id, schedule.revision, fired('run-a')),
        s.schedules.update(id, schedule.revision, fired('run-b')),
      ]);
      const winners = answers.filter((a) => a.ok);
      const losers = answers.filter((a) => !a.ok);
      expect(winners).toHaveLength(1);
      expect(losers).toEqual([
        { ok: false, reason: 'conflict', schedule: expect.objectContaining({ revision: 2 }) },
      ]);
      const stored = await s.schedules.get(id);
      expect(stored?.revision).toBe(2);
      expect(stored?.lastRunId).toBe(winners[0]!.ok ? winners[0]!.schedule.lastRunId : undefined);
      expect(stored?.nextDueAt).toBe(schedule.nextDueAt! + 60_000);
      expect(stored?.createdAt).toBe(schedule.createdAt);
      // A third firing from the old revision is refused too.
      expect(await s.schedules.update(id, 1, fired('run-c'))).toMatchObject({
        ok: false,
        reason: 'conflict',
      });
      expect(await s.schedules.update(uniqueId('none'), 1, fired('run-d'))).toEqual({
        ok: false,
        reason: 'not-found',
      });
    });

    it('the due scan finds schedules whose next firing has come, earliest first, never paused or future ones', async () => {
      const s = store();
      const now = await s.leases.now();
      const [early, late, paused, future, never] = ['early', 'late', 'paused', 'future', 'never'].map((n) =>
        uniqueId(n),
      ) as [string, string, string, string, string];
      await s.schedules.create(newSchedule(late, { nextFireAt: now - 1_000 }));
      await s.schedules.create(newSchedule(early, { nextFireAt: now - 5_000 }));
      await s.schedules.create(newSchedule(paused, { nextFireAt: now - 9_000, paused: true }));
      await s.schedules.create(newSchedule(future, { nextFireAt: now + 600_000 }));
      await s.schedules.create(newSchedule(never, { nextDueAt: null, nextFireAt: null }));

      const due = await s.schedules.due(10);
      expect(due.now).toBeGreaterThanOrEqual(now);
      expect(due.schedules.map((x) => x.scheduleId)).toEqual([early, late]);
      expect((await s.schedules.due(1)).schedules.map((x) => x.scheduleId)).toEqual([early]);
    });

    it('pausing takes a schedule out of the due scan and resuming puts it back', async () => {
      const s = store();
      const now = await s.leases.now();
      const id = uniqueId('sched');
      const { schedule } = await s.schedules.create(newSchedule(id, { nextFireAt: now - 1_000 }));
      const { revision: _r, createdAt: _c, updatedAt: _u, scheduleId: _id, ...definition } = schedule;
      const paused = await s.schedules.update(id, 1, { ...definition, paused: true });
      expect(paused).toMatchObject({ ok: true, schedule: { paused: true, revision: 2 } });
      expect((await s.schedules.due(10)).schedules).toEqual([]);
      await s.schedules.update(id, 2, { ...definition, paused: false });
      expect((await s.schedules.due(10)).schedules.map((x) => x.scheduleId)).toEqual([id]);
    });

    it('an update that moves the next firing moves the schedule in the due scan', async () => {
      const s = store();
      const now = await s.leases.now();
      const id = uniqueId('sched');
      const { schedule } = await s.schedules.create(newSchedule(id, { nextFireAt: now + 600_000 }));
      expect((await s.schedules.due(10)).schedules).toEqual([]);
      const { revision: _r, createdAt: _c, updatedAt: _u, scheduleId: _id, ...definition } = schedule;
      const moved = await s.schedules.update(id, 1, {
        ...definition,
        spec: { everyMs: 5_000 },
        nextDueAt: now - 2_000,
        nextFireAt: now - 2_000,
      });
      expect(moved).toMatchObject({
        ok: true,
        schedule: { spec: { everyMs: 5_000 }, nextFireAt: now - 2_000 },
      });
      expect((await s.schedules.due(10)).schedules.map((x) => [x.scheduleId, x.revision])).toEqual([[id, 2]]);
      // And back into the future: no longer due.
      await s.schedules.update(id, 2, { ...definition, nextFireAt: now + 600_000 });
      expect((await s.schedules.due(10)).schedules).toEqual([]);
    });

    it('lists schedules by id in pages, filtered by workflow and paused', async () => {
      const s = store();
      const ids = ['a', 'b', 'c', 'd', 'e'].map((n) => `${n}-${uniqueId('s')}`);
      for (const [i, id] of ids.entries()) {
        await s.schedules.create(
          newSchedule(id, { workflow: i % 2 === 0 ? 'even' : 'odd', paused: i === 4 }),
        );
      }
      const first = await s.schedules.list({ limit: 2 });
      expect(first.schedules.map((x) => x.scheduleId)).toEqual(ids.slice(0, 2));
      expect(first.cursor).toBeDefined();
      const second = await s.schedules.list({ limit: 2, cursor: first.cursor });
      expect(second.schedules.map((x) => x.scheduleId)).toEqual(ids.slice(2, 4));
      const third = await s.schedules.list({ limit: 2, cursor: second.cursor });
      expect(third.schedules.map((x) => x.scheduleId)).toEqual(ids.slice(4));
      expect(third.cursor).toBeUndefined();
      expect((await s.schedules.list({ workflow: 'even' })).schedules.map((x) => x.scheduleId)).toEqual([
        ids[0],
        ids[2],
        ids[4],
      ]);
      expect(
        (await s.schedules.list({ workflow: 'even', paused: false })).schedules.map((x) => x.scheduleId),
      ).toEqual([ids[0], ids[2]]);
      expect((await s.schedules.list({ paused: true })).schedules.map((x) => x.scheduleId)).toEqual([ids[4]]);
      await expect(s.schedules.list({ limit: 0 })).rejects.toMatchObject({ code: 'BATON_CONFIG' });
    });

    it('deletes a schedule (compare-and-set when a revision is given): gone from reads, listings and the due scan', async () => {
      const s = store();
      const now = await s.leases.now();
      const id = uniqueId('sched');
      await s.schedules.create(newSchedule(id, { nextFireAt: now - 1_000 }));
      expect(await s.schedules.delete(id, 7)).toMatchObject({
        ok: false,
        reason: 'conflict',
        schedule: { revision: 1 },
      });
      expect(await s.schedules.delete(id, 1)).toMatchObject({ ok: true, schedule: { scheduleId: id } });
      expect(await s.schedules.get(id)).toBeUndefined();
      expect((await s.schedules.list()).schedules).toEqual([]);
      expect((await s.schedules.due(10)).schedules).toEqual([]);
      expect(await s.schedules.delete(id)).toEqual({ ok: false, reason: 'not-found' });
      // The id is free again.
      expect((await s.schedules.create(newSchedule(id))).schedule.revision).toBe(1);
    });
  });
}
