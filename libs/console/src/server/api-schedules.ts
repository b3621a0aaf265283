/**
 * The schedules page's API: the schedules a page at a time, each with its next due times, and the
 * actions on one (pause, resume, trigger now, update), each marked `action` so the server refuses
 * it in read-only mode and without a valid CSRF token before it gets here (as api-actions.ts).
 *
 * Trigger now starts one run of the schedule's workflow version with its input, at once, under the
 * idempotency key `schedule:<id>:now:<time, ISO 8601>`: a run of its own, which neither counts as a
 * due time nor moves the schedule on (its next due time stays as it was).
 */
import type { Client, ScheduleRecord, ScheduleUpdate } from '@baton/client';
import type { Duration } from '@baton/core';
import { bodyObject, HttpError, optionalString, type Route } from './http-kit.js';

/** How many due times the page shows per schedule. */
export const UPCOMING_SHOWN = 3;

const SCHEDULE = '\\/api\\/schedules\\/([^/]+)';
type OverlapPolicy = ScheduleRecord['overlap'];
const OVERLAPS: readonly OverlapPolicy[] = ['skip', 'queue-one', 'allow'];

/**
 * The schedule's next due times from its next one (jitter left out, client.schedules.upcoming);
 * none while paused (it is never due then). One store read per schedule that is not paused.
 */
async function upcomingOf(client: Client, schedule: ScheduleRecord): Promise<number[]> {
  if (schedule.paused || schedule.nextDueAt === null) return [];
  return client.schedules.upcoming(schedule.scheduleId, UPCOMING_SHOWN);
}

/** A value the workers sealed (`{ "$baton.sealed": 1, key, frame }`, docs/integrity.md). */
function isSealed(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && (value as Record<string, unknown>)['$baton.sealed'] === 1
  );
}

function action(name: string, handle: Route['handle']): Route {
  return { method: 'POST', path: new RegExp(`^${SCHEDULE}\\/${name}$`), action: true, handle };
}

/** The update a form sends, checked for types (the client checks the values and names a bad one). */
export function scheduleUpdateOf(body: unknown): ScheduleUpdate {
  const fields = bodyObject(body);
  const update: ScheduleUpdate = {};
  const cron = optionalString(fields, 'cron');
  const timeZone = optionalString(fields, 'timeZone');
  const every = optionalString(fields, 'every');
  const note = optionalString(fields, 'note');
  const overlap = optionalString(fields, 'overlap');
  if (cron !== undefined) update.cron = cron;
  if (timeZone !== undefined) update.timeZone = timeZone;
  if (every !== undefined) {
    // Whole ms, or a number and a unit (`15m`); the client checks the span (at least 1 s).
    if (!/^\d+(\.\d+)?(ms|s|m|h|d)?$/.test(every))
      throw new HttpError(
        400,
        `'every' must be ms or a number and a unit (ms, s, m, h, d), e.g. 15m; got '${every}'`,
      );
    update.every = /^\d+$/.test(every) ? Number(every) : (every as Duration);
  }
  if (note !== undefined) update.note = note;
  if (overlap !== undefined) {
    if (!OVERLAPS.includes(overlap as OverlapPolicy))
      throw new HttpError(400, `'overlap' must be one of ${OVERLAPS.join(', ')}, got '${overlap}'`);
    update.overlap = overlap as OverlapPolicy;
  }
  if ('input' in fields && fields['input'] !== undefined) update.input = fields['input'];
  if (Object.keys(update).length === 0)
    throw new HttpError(400, 'an update needs at least one of cron, timeZone, every, input, overlap, note');
  return update;
}

export const SCHEDULE_ROUTES: Route[] = [
  {
    method: 'GET',
    path: /^\/api\/schedules$/,
    handle: async ({ client, query }) => {
      const cursor = query.get('cursor');
      const workflow = query.get('workflow');
      const page = await client.schedules.list({
        ...(cursor && { cursor }),
        ...(workflow && { workflow }),
      });
      return {
        schedules: await Promise.all(
          page.schedules.map(async (s) => ({ ...s, upcoming: await upcomingOf(client, s) })),
        ),
        ...(page.cursor !== undefined && { cursor: page.cursor }),
      };
    },
  },
  action('pause', async ({ client, params }) => {
    const changed = await client.schedules.pause(params[0]!);
    return { done: changed ? 'paused: it starts nothing until resumed' : 'it was paused already' };
  }),
  action('resume', async ({ client, params }) => {
    const changed = await client.schedules.resume(params[0]!);
    return {
      done: changed
        ? 'resumed: it carries on at its next due time (the ones missed while paused start no run)'
        : 'it was not paused',
    };
  }),
  action('trigger', async ({ client, params }) => {
    const schedule = await client.schedules.get(params[0]!);
    if (isSealed(schedule.input))
      throw new HttpError(
        409,
        `schedule ${schedule.scheduleId}'s input is sealed with a key this console does not hold, so it cannot start a run of it: ` +
          'give the console the payload keys (docs/integrity.md), or let the fleet fire it',
      );
    const idempotencyKey = `schedule:${schedule.scheduleId}:now:${new Date().toISOString()}`;
    const handle = await client.start(
      { name: schedule.workflow, version: schedule.version },
      schedule.input,
      { idempotencyKey },
    );
    return {
      done: `started run ${handle.runId} of ${schedule.workflow}@${schedule.version}; the schedule's next due time is unchanged`,
      runId: handle.runId,
    };
  }),
  action('update', async ({ client, params, body }) => {
    const schedule = await client.schedules.update(params[0]!, scheduleUpdateOf(body));
    return { done: 'updated', schedule: { ...schedule, upcoming: await upcomingOf(client, schedule) } };
  }),
];
