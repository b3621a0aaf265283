/**
 * `ctx.stream(name)` and `io.stream(name)` (author/streams.ts) as the executor builds them: the
 * checks made where the workflow or activity calls (name, JSON form, size), then the host's
 * `streamWrite`, which appends (the worker's run-streams.ts).
 */
import { PayloadTooLargeError } from '../../adapter/errors.js';
import { checkRunStreamName } from '../../adapter/contracts/run-streams.js';
import type { ActivityStream, WorkflowStream } from '../../author/streams.js';
import { BatonError } from '../../shared/errors.js';
import { encodeJson } from '../codec.js';
import type { ExecutionHost, StreamWrite } from './execution-host.js';

/** The largest chunk a stream takes (its value's JSON): far below every bus's record limit. */
export const MAX_STREAM_CHUNK_BYTES = 256 * 1024;

/** The JSON length of a chunk's value; throws naming the stream when it has no JSON form or is too large. */
function chunkBytes(stream: string, value: unknown): number {
  const bytes = encodeJson(value, `a chunk written to run stream '${stream}'`).byteLength;
  if (bytes > MAX_STREAM_CHUNK_BYTES) {
    throw new PayloadTooLargeError(
      `a chunk written to run stream '${stream}'`,
      bytes,
      MAX_STREAM_CHUNK_BYTES,
    );
  }
  return bytes;
}

/**
 * The workflow's streams in one execution: each write is numbered per stream in the workflow's
 * order, the same on every replay, so the worker skips what an earlier execution wrote.
 */
export class WorkflowStreams {
  private readonly ordinals = new Map<string, number>();

  constructor(
    private readonly host: Pick<ExecutionHost, 'streamWrite'>,
    /** A replay-only execution (a query's) writes nothing. */
    private readonly writes: boolean,
  ) {}

  stream<T>(name: string): WorkflowStream<T> {
    checkRunStreamName(name);
    if (this.writes && this.host.streamWrite === undefined) {
      throw new BatonError(
        'BATON_UNSUPPORTED',
        `ctx.stream('${name}'): this worker's transport has no run streams ` +
          '(NATS, Kafka, the Redis bus and the in-memory transport have them)',
      );
    }
    const send = (write: Omit<StreamWrite, 'ordinal'>, bytes: number): void => {
      if (!this.writes || this.host.streamWrite === undefined) return; // a query's replay
      const ordinal = (this.ordinals.get(name) ?? 0) + 1;
      this.ordinals.set(name, ordinal);
      // The host acts on a failure itself (it stops the run): nothing for the workflow to await.
      void this.host.streamWrite(name, { ...write, ordinal }, bytes).catch(() => undefined);
    };
    return {
      name,
      write: (value: T) => send({ kind: 'chunk', value }, chunkBytes(name, value)),
      close: () => send({ kind: 'close' }, 0),
    };
  }
}

/** The stream `name` for one attempt of the activity at `step`. */
export function activityStream<T>(
  host: Pick<ExecutionHost, 'streamWrite'>,
  runId: string,
  name: string,
  step: number,
  attempt: number,
): ActivityStream<T> {
  checkRunStreamName(name);
  const send = async (write: StreamWrite, bytes: number): Promise<void> => {
    if (host.streamWrite === undefined) {
      throw new BatonError(
        'BATON_UNSUPPORTED',
        `run ${runId}: stream '${name}' cannot be written here: this host runs no run streams`,
      );
    }
    await host.streamWrite(name, write, bytes);
  };
  return {
    name,
    write: async (value: T) => send({ kind: 'chunk', value, step, attempt }, chunkBytes(name, value)),
    close: () => send({ kind: 'close', step, attempt }, 0),
  };
}
