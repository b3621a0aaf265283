/**
 * The in-process store's schedules (`store.schedules`; checked-store.ts checks their arguments):
 * records by id, each write a compare-and-set on the revision. The due scan walks every schedule (an in-process store holds few); the real
 * stores index `nextFireAt` instead.
 */
import type {
  CheckedScheduleQuery,
  NewSchedule,
  SchedulePage,
  ScheduleRecord,
  ScheduleWrite,
} from '../adapter/contracts/schedules.js';
import type { StoreAdapter } from '../adapter/contracts/store.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import type { MemoryState } from './memory-state.js';

function create(state: MemoryState, schedule: NewSchedule): { created: boolean; schedule: ScheduleRecord } {
  const known = state.schedules.get(schedule.scheduleId);
  if (known !== undefined) return { created: false, schedule: structuredClone(known) };
  const now = state.clock();
  const record: ScheduleRecord = structuredClone({
    ...schedule,
    revision: 1,
    createdAt: now,
    updatedAt: now,
  });
  state.schedules.set(record.scheduleId, record);
  return { created: true, schedule: structuredClone(record) };
}

function get(state: MemoryState, scheduleId: string): ScheduleRecord | undefined {
  const record = state.schedules.get(scheduleId);
  return record === undefined ? undefined : structuredClone(record);
}

function update(
  state: MemoryState,
  scheduleId: string,
  expectedRevision: number,
  next: Omit<NewSchedule, 'scheduleId'>,
): ScheduleWrite {
  const known = state.schedules.get(scheduleId);
  if (known === undefined) return { ok: false, reason: 'not-found' };
  if (known.revision !== expectedRevision)
    return { ok: false, reason: 'conflict', schedule: structuredClone(known) };
  const record: ScheduleRecord = structuredClone({
    ...next,
    scheduleId,
    revision: known.revision + 1,
    createdAt: known.createdAt,
    updatedAt: state.clock(),
  });
  state.schedules.set(scheduleId, record);
  return { ok: true, schedule: structuredClone(record) };
}

function deleteSchedule(state: MemoryState, scheduleId: string, expectedRevision?: number): ScheduleWrite {
  const known = state.schedules.get(scheduleId);
  if (known === undefined) return { ok: false, reason: 'not-found' };
  if (expectedRevision !== undefined && known.revision !== expectedRevision) {
    return { ok: false, reason: 'conflict', schedule: structuredClone(known) };
  }
  state.schedules.delete(scheduleId);
  return { ok: true, schedule: structuredClone(known) };
}

function list(state: MemoryState, { limit, cursor, workflow, paused }: CheckedScheduleQuery): SchedulePage {
  const ids = [...state.schedules.keys()].sort();
  const schedules: ScheduleRecord[] = [];
  for (const id of ids) {
    if (cursor !== undefined && id <= cursor) continue;
    const record = state.schedules.get(id)!;
    if (workflow !== undefined && record.workflow !== workflow) continue;
    if (paused !== undefined && record.paused !== paused) continue;
    if (schedules.length === limit) return { schedules, cursor: schedules.at(-1)!.scheduleId };
    schedules.push(structuredClone(record));
  }
  return { schedules };
}

function due(state: MemoryState, limit: number): { now: number; schedules: ScheduleRecord[] } {
  const now = state.clock();
  const due = [...state.schedules.values()]
    .filter((s) => !s.paused && s.nextFireAt !== null && s.nextFireAt <= now)
    .sort((a, b) => a.nextFireAt! - b.nextFireAt! || (a.scheduleId < b.scheduleId ? -1 : 1))
    .slice(0, limit)
    .map((s) => structuredClone(s));
  return { now, schedules: due };
}

/** `store.schedules` over the state. */
export const schedules: OperationsOf<MemoryState, StoreAdapter['schedules']> = {
  create,
  get,
  update,
  delete: deleteSchedule,
  list,
  due,
};
