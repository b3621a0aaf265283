/**
 * The checks every store shares, made once, in core, before a call reaches the store adapter:
 * `checkedStore(adapter)` is the {@link Store} callers use over a {@link StoreAdapter}. Each
 * store's factory applies it (the Redis, Postgres and in-process stores; a store written elsewhere
 * does the same), as a transport applies `checkedJournal` (journal-log.ts) to its journal.
 *
 * What is checked (each by the validator beside its contract): run queries (run-query-check.ts),
 * search attributes' changes and counted values (attribute-check.ts),
 * schedules, schedule ids, listings and due limits (schedule-times.ts), worker reports and their
 * time to live (fleet-check.ts), slot requests (contracts/concurrency.ts), rate-limit requests
 * (contracts/rate-limits.ts), update ids and names (contracts/updates.ts) and query asks
 * (contracts/query-mailbox.ts).
 *
 * Invariants:
 * 1. A call whose argument fails its check rejects with the check's ConfigError (naming the field)
 *    and never reaches the adapter: nothing is connected, read or written for it. A refusal
 *    rejects; it never throws synchronously.
 * 2. The adapter receives what the check answers (contracts/store.ts, StoreAdapter): the record,
 *    report or query normalized, so no adapter checks again.
 * 3. Run-query cursors are read and issued here alone: the adapter pages from the position a
 *    cursor names and answers where the next page starts; the caller gets an opaque cursor bound
 *    to its filter and order.
 * 4. Everything else is the adapter's own: its other capabilities and members read through
 *    unchanged (the same objects), its methods run on the adapter itself (so its state stays in one
 *    place), and `instanceof` still holds.
 */
import { checkAttributeChanges, checkCountedAttribute } from './attribute-check.js';
import type { RunAttributeStore } from './contracts/attributes.js';
import { checkSlotRequest, type ConcurrencyStore } from './contracts/concurrency.js';
import type { FleetStore } from './contracts/fleet.js';
import { checkQueryAsk, type QueryMailbox } from './contracts/query-mailbox.js';
import { checkRateLimitRequest, type RateLimitStore } from './contracts/rate-limits.js';
import type { RunQueries } from './contracts/run-queries.js';
import type { ScheduleStore } from './contracts/schedules.js';
import type { Store, StoreAdapter } from './contracts/store.js';
import { checkUpdateFields, type UpdateStore } from './contracts/updates.js';
import { checkDepartedKeep, checkReportTtl, checkWorkerReport } from './fleet-check.js';
import { methodNames } from './lifecycle.js';
import { checkRunQuery, issueRunCursor } from './run-query-check.js';
import { assertScheduleId, checkDueLimit, checkNewSchedule, checkScheduleQuery } from './schedule-times.js';

/**
 * The store callers use over `adapter`: its arguments checked first (see the module's invariants),
 * everything else the adapter's (its own members, such as a Postgres store's `state`, included).
 *
 * @example
 * export function redisStore(options) {
 *   return checkedStore(new RedisStore(resolveRedisStoreOptions(options)));
 * }
 */
export function checkedStore<A extends StoreAdapter>(adapter: A): Omit<A, 'runs' | 'schedules'> & Store {
  const { runs, schedules, fleet, concurrency, rateLimits, updates, queries, attributes } = adapter;
  const listing: Pick<RunQueries, 'list'> = {
    async list(query) {
      const asked = checkRunQuery(query);
      const { runs: found, next } = await runs.list(asked);
      return next === undefined ? { runs: found } : { runs: found, cursor: issueRunCursor(next, asked) };
    },
  };
  const scheduling: ScheduleStore = {
    async create(schedule) {
      return schedules.create(checkNewSchedule(schedule));
    },
    async get(scheduleId) {
      assertScheduleId(scheduleId);
      return schedules.get(scheduleId);
    },
    async update(scheduleId, expectedRevision, next) {
      const { scheduleId: _id, ...record } = checkNewSchedule({ ...next, scheduleId });
      return schedules.update(scheduleId, expectedRevision, record);
    },
    async delete(scheduleId, expectedRevision) {
      assertScheduleId(scheduleId);
      return schedules.delete(scheduleId, expectedRevision);
    },
    async list(query) {
      return schedules.list(checkScheduleQuery(query));
    },
    async due(limit) {
      return schedules.due(checkDueLimit(limit));
    },
  };
  const reporting: Pick<FleetStore, 'report' | 'depart'> = {
    async report(report, ttlMs, keepDepartedMs = 0) {
      return fleet.report(
        checkWorkerReport(report),
        checkReportTtl(ttlMs),
        checkDepartedKeep(keepDepartedMs),
      );
    },
    async depart(report, keepMs) {
      return fleet.depart(checkWorkerReport(report), checkDepartedKeep(keepMs));
    },
  };
  const slots: Pick<ConcurrencyStore, 'acquire' | 'release'> = {
    async acquire(request) {
      checkSlotRequest(request);
      return concurrency.acquire(request);
    },
    async release(request) {
      checkSlotRequest(request);
      return concurrency.release(request);
    },
  };
  const attributing: RunAttributeStore = {
    async set(runId, epoch, changes) {
      return attributes.set(runId, epoch, checkAttributeChanges(runId, changes));
    },
    async count(name, attribute) {
      checkCountedAttribute(name, attribute);
      return attributes.count(name, attribute);
    },
  };
  const grants: RateLimitStore = {
    async take(request) {
      checkRateLimitRequest(request);
      return rateLimits.take(request);
    },
  };
  const answering: Pick<UpdateStore, 'request' | 'settle' | 'outcome'> = {
    async request(runId, request) {
      checkUpdateFields(request);
      return updates.request(runId, request);
    },
    async settle(runId, epoch, settlement) {
      checkUpdateFields(settlement);
      return updates.settle(runId, epoch, settlement);
    },
    async outcome(runId, updateId) {
      checkUpdateFields({ updateId });
      return updates.outcome(runId, updateId);
    },
  };
  const asking: Pick<QueryMailbox, 'ask'> = {
    async ask(request, timeoutMs) {
      checkQueryAsk(request, timeoutMs);
      return queries.ask(request, timeoutMs);
    },
  };
  return view(adapter, {
    runs: view(runs, listing),
    schedules: view(schedules, scheduling),
    fleet: view(fleet, reporting),
    concurrency: view(concurrency, slots),
    rateLimits: view(rateLimits, grants),
    updates: view(updates, answering),
    queries: view(queries, asking),
    // Every store has it (contracts/store.ts); an adapter written before it is passed as it is.
    ...(attributes !== undefined && { attributes: view(attributes, attributing) }),
  }) as Omit<A, 'runs' | 'schedules'> & Store;
}

/**
 * `target` as it is but for `overrides` (invariant 4): its members read through (the view's
 * prototype is `target`), its methods are bound to `target` itself, so a method that changes its
 * object's state changes the target's, and `overrides` are the view's own.
 */
function view<T extends object, O extends object>(target: T, overrides: O): NoInfer<Omit<T, keyof O> & O> {
  const seen = Object.create(target) as Record<string, unknown>;
  for (const name of methodNames(target)) {
    seen[name] = ((target as Record<string, unknown>)[name] as (...args: unknown[]) => unknown).bind(target);
  }
  return Object.assign(seen, overrides) as Omit<T, keyof O> & O;
}
