/**
 * The key layout. Every key starts with the store's prefix, so stores with different prefixes
 * share nothing. Variable parts (run ids, worker ids, idempotency keys) always come last, after
 * a fixed segment no other segment starts with, so no two kinds of key can collide.
 *
 * Keys carry no Redis Cluster hash tags: the scripts touch keys of several runs (the indexes)
 * and build a few keys from stored values, which only a single primary (or Sentinel) allows.
 */
export interface KeyLayout {
  readonly prefix: string;
  /** HASH: epoch, state, owner, exp, wait (see lua/prelude.lua). */
  lease(runId: string): string;
  /** LIST: the run's pointers into group records, or `!own` (journal-index.ts). */
  pointers(runId: string): string;
  /** HASH log -> the newest record a pointer into that group log was accepted for (journal-index.ts). */
  readonly groupLogs: string;
  /** ZSET runId -> the lowest record the run's pointers name in group log `log` (journal-index.ts). */
  groupLogUse(log: string): string;
  /** ZSET runId -> expiry of every `held` lease: the reaper's queue. */
  readonly held: string;
  /** SET of run ids whose lease is `held` by this owner: the dead-worker reaper's list. */
  owner(workerId: string): string;
  /** STRING '1' once a cancel was requested; kept apart from the lease. */
  cancel(runId: string): string;
  /** HASH: the run record (JSON values stay opaque strings). */
  run(runId: string): string;
  /** STRING: the run id an idempotency key belongs to. */
  idempotency(key: string): string;
  /** LIST of full checkpoint JSON, oldest first. */
  checkpoints(runId: string): string;
  /** LIST of checkpoint summary JSON (with encoded size), parallel to {@link checkpoints}. */
  checkpointSummaries(runId: string): string;
  /** ZSET runId -> due time of suspended runs. */
  readonly timers: string;
  /** LIST of inbox entries '<receivedAt>|<json>', in arrival order. */
  inbox(runId: string): string;
  /** HASH signalId -> name: de-duplication and the pending-signal check of leases.suspend. */
  signalNames(runId: string): string;
  /** HASH updateId -> '<requestedAt>|<json>': update requests not settled yet (updates.ts). */
  updatesPending(runId: string): string;
  /** LIST of update ids in arrival order: the pending ones, and settled ones until none is pending. */
  updatesOrder(runId: string): string;
  /** HASH updateId -> '<settledAt>|<json>': settled updates' outcomes, deleted with the run. */
  updatesKept(runId: string): string;
  /** HASH workerId -> '<client name> <registration nonce> <server run_id>'. */
  readonly workers: string;
  /**
   * HASH instance -> the run_id of the server the dead-worker scan last ran on, since -> when it
   * first ran there: a failover keeps the promoted node's uptime, so this marks its start.
   */
  readonly presenceInstance: string;
  /** STRING: the worker holding the turn of a fleet-wide scan, expiring with the turn. */
  scanTurn(scan: string): string;
  /**
   * HASH generation -> the member list's generation, members -> the list as JSON: the fleet's
   * live workers as the membership turn's holder last published them (lua/publish-membership.lua).
   */
  readonly membership: string;
  /** ZSET runId -> finish time of finished runs in the index: retention's queue. */
  readonly finished: string;
  /** HASH sha256 -> bytes: the run's large payloads (claim check), deleted with the run. */
  payloads(runId: string): string;
  /** STRING: a random value written once per data set; gone after a data loss (data-marker.ts). */
  readonly dataMarker: string;
  /** STRING: JSON of the last data loss found (data-marker.ts), {store, reason, at}. */
  readonly dataLost: string;
  /** STRING: when the retention sweep deleted the run; expires after the tombstone's life. */
  tombstone(runId: string): string;
  /** STRING: the version of the query indexes this data set was indexed to (queries.ts). */
  readonly indexVersion: string;
  /** HASH 'status:<status>' and 'workflow:<status>:<name>' -> run count (lua/prelude.lua). */
  readonly runCounts: string;
  /** HASH workerId -> '<lastSeenAt>|<report JSON>': the workers' latest reports (fleet.ts). */
  readonly fleetReports: string;
  /** ZSET workerId -> expiry of its report. */
  readonly fleetExpiry: string;
  /** HASH workerId -> how long its report is kept as a departed worker once it expires (ms). */
  readonly fleetKeep: string;
  /** HASH workerId -> '<lastSeenAt>|<ended>|<endedAt>|<report JSON>': departed workers (fleet.ts). */
  readonly fleetDeparted: string;
  /** ZSET workerId -> when its departed record is pruned. */
  readonly fleetDepartedUntil: string;
  /** HASH rev, created, updated, wf, paused, rec (the schedule JSON): one schedule (schedules.ts). */
  schedule(scheduleId: string): string;
  /** ZSET of every schedule id, all scored 0: bytewise order, the listing's. */
  readonly scheduleIds: string;
  /** ZSET scheduleId -> nextFireAt of every schedule not paused that has one: the due scan's queue. */
  readonly schedulesDue: string;
  /** Concurrency slots per key (lua/prelude.lua): holders, the line, and the arrival counter. */
  readonly slotHolders: (key: string) => string;
  readonly slotWaiting: (key: string) => string;
  readonly slotSeq: string;
  /** Rate limit grants per name and key (lua/take-rate-token.lua); '|' never occurs in a name. */
  readonly rateLog: (name: string, key: string) => string;
  /** HASH: one durable promise by its token (promises.ts, lua/create-promise.lua). */
  promise(token: string): string;
  /** ZSET token -> seq: a run's durable promises, deleted with the run (drop_run). */
  runPromises(runId: string): string;
  /** HASH req, reply_to, claimed: a query posted for the length of its ask (lua/query-ask.lua). */
  query(queryId: string): string;
  /** STRING: a query's reply, kept briefly for an asker that missed its message (lua/query-answer.lua). */
  queryReply(queryId: string): string;
}

export function keyLayout(prefix: string): KeyLayout {
  return {
    prefix,
    lease: (runId) => `${prefix}lease:${runId}`,
    pointers: (runId) => `${prefix}jptr:${runId}`,
    groupLogs: `${prefix}glogs`,
    groupLogUse: (log) => `${prefix}glog:${log}`,
    held: `${prefix}held`,
    owner: (workerId) => `${prefix}owner:${workerId}`,
    cancel: (runId) => `${prefix}cancel:${runId}`,
    run: (runId) => `${prefix}run:${runId}`,
    idempotency: (key) => `${prefix}idem:${key}`,
    checkpoints: (runId) => `${prefix}ckpt:${runId}`,
    checkpointSummaries: (runId) => `${prefix}ckpt-sum:${runId}`,
    timers: `${prefix}timers`,
    inbox: (runId) => `${prefix}inbox:${runId}`,
    signalNames: (runId) => `${prefix}signal-ids:${runId}`,
    updatesPending: (runId) => `${prefix}upd:${runId}`,
    updatesOrder: (runId) => `${prefix}upd-order:${runId}`,
    updatesKept: (runId) => `${prefix}upd-kept:${runId}`,
    workers: `${prefix}workers`,
    presenceInstance: `${prefix}presence-instance`,
    scanTurn: (scan) => `${prefix}scan-turn:${scan}`,
    membership: `${prefix}membership`,
    finished: `${prefix}finished`,
    payloads: (runId) => `${prefix}payload:${runId}`,
    dataMarker: `${prefix}data-marker`,
    dataLost: `${prefix}data-lost`,
    tombstone: (runId) => `${prefix}deleted:${runId}`,
    indexVersion: `${prefix}index-version`,
    runCounts: `${prefix}index:counts`,
    fleetReports: `${prefix}fleet-reports`,
    fleetExpiry: `${prefix}fleet-expiry`,
    fleetKeep: `${prefix}fleet-keep`,
    fleetDeparted: `${prefix}fleet-departed`,
    fleetDepartedUntil: `${prefix}fleet-departed-until`,
    schedule: (scheduleId) => `${prefix}sched:${scheduleId}`,
    scheduleIds: `${prefix}sched-ids`,
    schedulesDue: `${prefix}sched-due`,
    slotHolders: (key) => `${prefix}slot:${key}`,
    slotWaiting: (key) => `${prefix}slot-wait:${key}`,
    slotSeq: `${prefix}slot-seq`,
    rateLog: (name, key) => `${prefix}rate:${name}|${key}`,
    promise: (token) => `${prefix}promise:${token}`,
    runPromises: (runId) => `${prefix}run-promises:${runId}`,
    query: (queryId) => `${prefix}query:${queryId}`,
    queryReply: (queryId) => `${prefix}query-reply:${queryId}`,
  };
}

/**
 * What follows the prefix in every key the store writes: a key of its own (`held`) or a family
 * whose variable part follows (`run:`, ending in `:`). keys.spec.ts checks that every key of
 * {@link keyLayout} and every key the Lua scripts build is here; a key under the prefix that is
 * none of these is not the store's (`baton admin drop` refuses to remove the prefix then).
 */
export const KEY_SEGMENTS: readonly string[] = [
  'lease:',
  'jptr:',
  'glogs',
  'glog:',
  'held',
  'owner:',
  'cancel:',
  'run:',
  'idem:',
  'ckpt:',
  'ckpt-sum:',
  'timers',
  'inbox:',
  'signal-ids:',
  'upd:',
  'upd-order:',
  'upd-kept:',
  'workers',
  'presence-instance',
  'scan-turn:',
  'membership',
  'finished',
  'payload:',
  'data-marker',
  'data-lost',
  'deleted:',
  'index-version',
  'index:',
  'fleet-reports',
  'fleet-expiry',
  'fleet-keep',
  'fleet-departed',
  'fleet-departed-until',
  'sched:',
  'sched-ids',
  'sched-due',
  'slot:',
  'slot-wait:',
  'slot-seq',
  'rate:',
  'promise:',
  'run-promises:',
  'query:',
  'query-reply:',
];

/**
 * The family of a key under `prefix` as {@link KEY_SEGMENTS} names it (`baton:run:*`, or the
 * key itself for a key of its own), or undefined for a key that is not the store's.
 */
export function storeKeyFamily(prefix: string, key: string): string | undefined {
  if (!key.startsWith(prefix)) return undefined;
  const rest = key.slice(prefix.length);
  const segment = KEY_SEGMENTS.find((s) => (s.endsWith(':') ? rest.startsWith(s) : rest === s));
  if (segment === undefined) return undefined;
  return segment.endsWith(':') ? `${prefix}${segment}*` : key;
}
