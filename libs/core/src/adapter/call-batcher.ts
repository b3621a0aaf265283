/**
 * How an adapter gathers the calls its worker makes once per run (a claim, a finish, a flush's
 * pointers) into batches: one round trip and one server-side step for many runs. The first call
 * after a quiet spell waits only for the end of the current turn of the event loop (setImmediate),
 * so it goes with every call that turn made; while `maxInFlight` batches are in flight the next
 * calls gather, and go as soon as one answers. A batch holds at most `maxBatch` calls, the oldest
 * first, and with `runOf` at most one call per run (a later call of a run keeps its place for the
 * next batch).
 *
 * `send` settles every call of its batch (each call carries its own resolve and reject) and never
 * rejects: what a failed batch means for its calls is the adapter's to say.
 */
export interface CallBatcherOptions<C> {
  maxBatch: number;
  maxInFlight: number;
  /** The run a call is for, when a batch may hold one call per run only. */
  runOf?: (call: C) => string;
  send(batch: C[]): Promise<void>;
}

export class CallBatcher<C> {
  private queue: C[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly options: CallBatcherOptions<C>) {}

  add(call: C): void {
    this.queue.push(call);
    if (this.scheduled || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.take();
      this.inFlight++;
      void this.options.send(batch).finally(() => {
        this.inFlight--;
        this.flush();
      });
    }
  }

  private take(): C[] {
    const { maxBatch, runOf } = this.options;
    if (runOf === undefined) {
      const batch = this.queue.slice(0, maxBatch);
      this.queue = this.queue.slice(batch.length);
      return batch;
    }
    const runs = new Set<string>();
    const batch: C[] = [];
    const left: C[] = [];
    for (const call of this.queue) {
      const run = runOf(call);
      if (batch.length < maxBatch && !runs.has(run)) {
        runs.add(run);
        batch.push(call);
      } else left.push(call);
    }
    this.queue = left;
    return batch;
  }
}
