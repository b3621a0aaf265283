/**
 * Tells the runs this worker holds of update requests that arrive while they are held
 * (contracts/updates.ts: a request to a held run only waits in the store). Every
 * {@link UPDATE_POLL_MS}, one store call asks which of the held runs whose workflows registered an
 * update handler have requests pending (`updates.waiting`), and each such run reads them. A run
 * also reads its requests when it is claimed, and checks once more after it suspends
 * (run-session.ts), so the poll only has to find what arrives while it runs.
 *
 * Invariants:
 * 1. One call at a time, for all the worker's runs that handle updates; a worker holding none asks
 *    nothing.
 * 2. A failed call is logged and made again at the next tick; it never stops a run.
 * 3. The timer is unref'd and stopped with the worker: it never keeps a process alive.
 */
import type { UpdateStore } from '@baton/core/adapter';
import type { Logger } from '../logger.js';
import type { RunSession } from './run-session.js';

/**
 * How often the held runs are asked about (ms): an update to a busy run waits this long at most
 * before its owner reads it, for one store call per worker per period.
 */
export const UPDATE_POLL_MS = 200;

export class UpdatePoll {
  private timer: NodeJS.Timeout | undefined;
  private asking = false;

  constructor(
    private readonly updates: Pick<UpdateStore, 'waiting'>,
    private readonly sessions: ReadonlyMap<string, Pick<RunSession, 'acceptsUpdates' | 'updatesArrived'>>,
    private readonly logger: Logger,
    private readonly intervalMs = UPDATE_POLL_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round: asks about the runs that handle updates, and tells those with requests. */
  async tick(): Promise<void> {
    if (this.asking) return;
    const runIds: string[] = [];
    for (const [runId, session] of this.sessions) if (session.acceptsUpdates) runIds.push(runId);
    if (runIds.length === 0) return;
    this.asking = true;
    try {
      for (const runId of await this.updates.waiting(runIds)) this.sessions.get(runId)?.updatesArrived();
    } catch (err) {
      this.logger.debug({ err, runs: runIds.length }, 'asking for update requests failed; asking again');
    } finally {
      this.asking = false;
    }
  }
}
