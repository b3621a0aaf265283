/**
 * Run streams (docs/streams.md): the bus's part. A run writes named streams of chunks (tokens,
 * progress, tool calls) that readers follow while the run goes on; each (run, stream) is an
 * append-only log of records on the bus the team already runs, kept beside the run's journal.
 *
 * The bus stores opaque records, as it does a journal's: what a record holds (chunks with their
 * sequence numbers, the writer's epoch, a close) is core's format (runtime/run-stream-records.ts),
 * and the exactly-once rules a reader applies are core's too. The bus gives three things:
 *
 * 1. Order: a (run, stream)'s records are read back in the order they landed, each with a
 *    position strictly increasing within that (run, stream).
 * 2. Optimistic append where the bus can refuse one (`supportsOptimisticAppend`): an append that
 *    expects a last position lands only if it is the (run, stream)'s last, so two writers never
 *    both land the same sequence numbers. A bus that cannot refuse (Kafka) lands every append; the
 *    writer then fences by epoch instead (a fence record, see the worker's run-streams.ts).
 * 3. An index of the run's stream names, so a reader can list them and retention can remove them
 *    with the run (`purge`).
 *
 * Readers poll `read`; a bus that can tell them a record landed (NATS: a subscription to the
 * stream's subject) offers `waitForRecord`, so a quiet reader waits without polling.
 *
 * Left out on purpose: any notion of leases.
 */
import { ConfigError } from '../../shared/errors.js';

/** What a run stream may be called: the same on every bus (a subject token, a key part). */
export const RUN_STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Refuses a stream name the contract does not allow, naming it. */
export function checkRunStreamName(stream: string): void {
  if (typeof stream !== 'string' || !RUN_STREAM_NAME.test(stream)) {
    throw new ConfigError(
      `run stream name '${String(stream)}' is not allowed: use 1 to 64 letters, digits, '-' or '_'`,
    );
  }
}

/** One record of a run stream, as read back (the shape of a journal record). */
export interface RunStreamRecord {
  /** Strictly increasing within the (run, stream). */
  position: number;
  data: Uint8Array;
}

/** One append to a run's stream: a record of encoded chunks. */
export interface RunStreamAppend {
  runId: string;
  stream: string;
  data: Uint8Array;
  /**
   * The position the writer believes is the stream's last (0 for an empty stream). Enforced when
   * the bus supports optimistic append: a mismatch rejects with JournalConflictError. Omitted: the
   * record goes after whatever is last.
   */
  expectedLastPosition?: number;
}

/** Options of {@link RunStreamLog.read}. */
export interface RunStreamReadOptions {
  /**
   * When the run started (ms since epoch, the run record's `createdAt`): a bus that keeps many
   * runs' streams in one shared log (Kafka) starts a read from position 0 near this time rather
   * than at the log's beginning. Ignored by buses whose logs are per stream.
   */
  sinceMs?: number;
  /** At most this many records (the first ones after `afterPosition`). @defaultValue all */
  limit?: number;
}

/** The bus's part of run streams. */
export interface RunStreamLog {
  /** True when `expectedLastPosition` is enforced (NATS, the Redis bus, memory); false on Kafka. */
  readonly supportsOptimisticAppend: boolean;
  /** Appends one record; resolves with its position once durable. */
  append(append: RunStreamAppend): Promise<number>;
  /** The stream's records with `position > afterPosition`, in order. A stream never written reads as empty. */
  read(
    runId: string,
    stream: string,
    afterPosition: number,
    options?: RunStreamReadOptions,
  ): Promise<RunStreamRecord[]>;
  /**
   * Adds `stream` to the run's index of stream names (a name already there is fine). A writer
   * calls it before its first append to a stream.
   */
  register(runId: string, stream: string, options?: Pick<RunStreamReadOptions, 'sinceMs'>): Promise<void>;
  /** The names of the run's streams, in the order first registered. */
  names(runId: string, options?: Pick<RunStreamReadOptions, 'sinceMs'>): Promise<string[]>;
  /**
   * How {@link purge} works, as the journal's: `deletes`, or `retention` (a shared log keeps the
   * records until the bus's own retention removes them).
   */
  readonly purgeMode: 'deletes' | 'retention';
  /**
   * Optional: resolves once a record after `afterPosition` may have landed, after `timeoutMs`, or
   * when `signal` aborts, whichever comes first (a timeout is no error). A reader then reads; a
   * bus without it leaves readers to poll with back-off.
   */
  waitForRecord?(
    runId: string,
    stream: string,
    afterPosition: number,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<void>;
  /** Removes every stream of the run and its index; a run with none is fine. Only for runs being deleted. */
  purge(runId: string, options?: Pick<RunStreamReadOptions, 'sinceMs'>): Promise<void>;
}
