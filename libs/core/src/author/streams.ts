/**
 * Run streams, as workflow and activity code write them and readers receive them
 * (docs/streams.md). A stream is named per run; every item in it has a sequence number, 1, 2, 3…
 * with no gaps, that a reader sees once: it resumes after the last one it saw.
 */

/** One item of a run stream, as `client.stream(runId, name)` yields it. */
export type StreamItem<T = unknown> =
  /** A chunk written by `ctx.stream(name).write(value)`, or by an activity (`step`, `attempt`). */
  | { seq: number; kind: 'chunk'; value: T; step?: number; attempt?: number }
  /**
   * The activity of step `step` started writing again, as attempt `attempt`: the chunks it wrote
   * in earlier attempts (a failed attempt, or one cut short by its worker's crash) are superseded.
   * A reader showing that activity's output clears it here.
   */
  | { seq: number; kind: 'reset'; step: number; attempt: number }
  /** The stream was closed (`close()`): nothing follows. */
  | { seq: number; kind: 'close' };

/**
 * A run stream as workflow code writes it (`ctx.stream<T>(name)`). Deterministic like the rest of
 * the workflow: `write` and `close` journal nothing and return at once; the worker appends them
 * in order, and a replay that calls them again appends nothing twice (each workflow write is
 * numbered, and a number already in the stream is skipped). Everything written is durable before
 * the run suspends, hands off or ends.
 */
export interface WorkflowStream<T = unknown> {
  readonly name: string;
  write(value: T): void;
  /** Ends the stream: readers stop after it. Writes after it are refused. */
  close(): void;
}

/**
 * A run stream as an activity writes it (`io.stream<T>(name)`): each `write` resolves once the
 * chunk is durable on the bus. Chunks carry the activity's step and attempt; a later attempt's
 * first write puts a `reset` item before its chunks (see {@link StreamItem}).
 */
export interface ActivityStream<T = unknown> {
  readonly name: string;
  write(value: T): Promise<void>;
  close(): Promise<void>;
}
