/** What the transport's capability files share once it is connected. */
import type { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import type { BatonError } from '@baton/core';
import type { RunPriority } from '@baton/core/adapter';
import type { RedisLayout } from './layout.js';
import type { ResolvedRedisTransportOptions } from './options.js';
import type { ScriptRunner } from './scripts.js';
import type { CommandConnection } from './connection.js';
import type { MarkerWatch } from './marker-watch.js';
import type { LaneWorker } from './lane-worker.js';
import type { BullBatchRunner } from './bull-batch.js';

/** One lane of the run queue as the run queue's functions use it (run-queue.ts). */
export interface RunLane {
  /** The BullMQ queue the lane's messages are added to. */
  readonly queue: Queue;
  /** Its BullMQ worker, in manual mode: jobs are taken by the batch take, never by a processor. */
  readonly worker: LaneWorker;
  /** The batch take and finish (bull-batch.ts), on the worker's connection. */
  readonly batches: BullBatchRunner;
  /** Wakes the lane's waiting fetches when BullMQ marks a job available (marker-watch.ts). */
  readonly markers: MarkerWatch;
  /** The queue's and the worker's connections, which BullMQ was handed and the transport closes. */
  readonly connections: readonly Redis[];
  /** `<prefix>:<queue name>`: the lane's part in the backlog. */
  readonly name: string;
}

export interface TransportContext {
  /** The command connection (connection.ts, invariant 1). */
  readonly redis: Redis;
  /** The same, with its generation: what {@link writeReplicated} compares. */
  readonly connection: CommandConnection;
  readonly scripts: ScriptRunner;
  /** The run queue's lanes in use: `normal` always, `high` and `low` with `priorityLanes`. */
  readonly lanes: Readonly<Partial<Record<RunPriority, RunLane>>>;
  /** The `normal` lane: the run queue without priorities, where redriven dead letters go. */
  readonly normal: RunLane;
  readonly options: ResolvedRedisTransportOptions;
  readonly layout: RedisLayout;
  /** Aborted by close(): waiting fetches return what they have. */
  readonly closing: AbortSignal;
  /**
   * Runs one server call under `operation`: bounded by `requestTimeoutMs`, and whatever it throws
   * becomes the transport's error naming the operation and the server.
   */
  call<T>(operation: string, work: () => Promise<T>): Promise<T>;
  /**
   * Runs `write` on the command connection, then waits for the replica guard (replication.ts):
   * resolves with what `write` resolved once enough replicas have it, or at once when the guard is
   * off. Bounded and reworded as {@link call}.
   */
  writeReplicated<T>(operation: string, write: () => Promise<T>): Promise<T>;
  /** The transport's error for what `operation` threw. */
  toError(operation: string, err: unknown): BatonError;
  /** Keeps close() waiting for `work` (a late job being handed back). */
  track(work: Promise<unknown>): void;
}
