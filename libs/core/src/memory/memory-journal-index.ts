/**
 * The in-process store's journal index (`store.journalIndex`, contracts/group-journal.ts): each run's pointers into group
 * records, in position order, or the mark that it is journaled on its own, over `state.pointers`.
 * Each call runs without awaiting, so every run's append is atomic, as the Redis script and the
 * SQL statement are.
 */
import {
  GROUP_POSITION_BASE,
  type GroupLogUse,
  type JournalIndex,
  type PointerAppend,
  type PointerAppendResult,
  type RunPointers,
} from '../adapter/contracts/group-journal.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import type { MemoryState } from './memory-state.js';

function appendPointers(state: MemoryState, appends: readonly PointerAppend[]): PointerAppendResult[] {
  return appends.map((append) => appendOne(state, append));
}

function appendOne(state: MemoryState, append: PointerAppend): PointerAppendResult {
  const { runId, expectedLastPosition: expected, log, record } = append;
  const stored = state.pointers.get(runId);
  if (stored === undefined) {
    // Only a new run's first append starts pointers; a fence marker first marks the run as its own.
    if (expected === 0) {
      state.pointers.set(runId, {
        ownJournal: false,
        pointers: [{ position: GROUP_POSITION_BASE + 1, log, record }],
      });
      recorded(state, log, record);
      return { status: 'appended', position: GROUP_POSITION_BASE + 1 };
    }
    if (expected === undefined) state.pointers.set(runId, { ownJournal: true, pointers: [] });
    return { status: 'not-grouped' };
  }
  if (stored.ownJournal) return { status: 'not-grouped' };
  const last = stored.pointers.at(-1)!.position;
  if (expected !== undefined && expected !== last) return { status: 'conflict', lastPosition: last };
  stored.pointers.push({ position: last + 1, log, record });
  recorded(state, log, record);
  return { status: 'appended', position: last + 1 };
}

function markOwnJournal(state: MemoryState, runId: string): 'own' | 'grouped' {
  const stored = state.pointers.get(runId);
  if (stored === undefined) state.pointers.set(runId, { ownJournal: true, pointers: [] });
  return stored === undefined || stored.ownJournal ? 'own' : 'grouped';
}

function readPointers(
  state: MemoryState,
  runId: string,
  afterPosition: number,
  uptoPosition?: number,
): RunPointers {
  const stored = state.pointers.get(runId);
  if (stored === undefined || stored.ownJournal) return { grouped: false, pointers: [] };
  return {
    grouped: true,
    pointers: stored.pointers
      .filter((p) => p.position > afterPosition && (uptoPosition === undefined || p.position <= uptoPosition))
      .map((p) => ({ ...p })),
  };
}

function deletePointers(state: MemoryState, runId: string): void {
  state.pointers.delete(runId);
}

function recorded(state: MemoryState, log: string, record: number): void {
  state.groupLogs.set(log, Math.max(state.groupLogs.get(log) ?? record, record));
}

/** A scan of every run's pointers: the in-process store is for tests and the demo. */
function groupLogUse(state: MemoryState): GroupLogUse[] {
  const oldest = new Map<string, number>();
  for (const { pointers } of state.pointers.values()) {
    for (const { log, record } of pointers) oldest.set(log, Math.min(oldest.get(log) ?? record, record));
  }
  return [...state.groupLogs].map(([log, newestRecorded]) => {
    const oldestNeeded = oldest.get(log);
    return oldestNeeded === undefined ? { log, newestRecorded } : { log, oldestNeeded, newestRecorded };
  });
}

function forgetGroupLog(state: MemoryState, log: string, newestRecorded: number): boolean {
  if (state.groupLogs.get(log) !== newestRecorded) return false;
  for (const { pointers } of state.pointers.values()) {
    if (pointers.some((p) => p.log === log)) return false;
  }
  state.groupLogs.delete(log);
  return true;
}

/** `store.journalIndex`'s operations over the state (whether it groups by default is the store's). */
export const journalIndex: OperationsOf<MemoryState, JournalIndex> = {
  appendPointers,
  markOwnJournal,
  readPointers,
  deletePointers,
  groupLogUse,
  forgetGroupLog,
};
