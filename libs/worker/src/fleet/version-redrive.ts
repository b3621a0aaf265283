/**
 * Redrives, by itself, the start messages dead-lettered `unknown-workflow` (no live worker had
 * their version for the grace period, put-back.ts) once a worker that registers the version runs:
 * when it starts and every {@link REDRIVE_SCAN_MS} after, it pages the dead letters and puts back
 * on the run queue those it can run (docs/versioning.md, "A version no worker has").
 *
 * Invariants:
 * 1. Only letters coded `unknown-workflow` holding a start message for a version this worker
 *    registers are touched; every other letter stays for an operator.
 * 2. A pass reads at most {@link MAX_LETTERS_PER_PASS} letters (newest first) and never throws
 *    into the worker; a failed pass is logged and the next one tries again.
 * 3. Two workers redriving one letter at once at worst enqueue its start twice: the store creates
 *    a run once per run id, so the second start finds the run and is dropped or put back.
 * 4. The letter of a child's start is redriven like any other, and its start dropped: the child
 *    was settled as failed when its start was dead-lettered (child-dead-letters.ts). A letter
 *    written before that existed finds no such run, and its child runs for the waiting parent.
 */
import { NotFoundError } from '@baton/core';
import type { DeadLetterQueue } from '@baton/core/adapter';
import { decodeMessage } from '@baton/core/runtime';
import type { WorkerEvent } from '../events.js';
import type { Logger } from '../logger.js';
import { workflowKey } from '../options.js';

/** Interval of the redrive pass after the first one at start. */
export const REDRIVE_SCAN_MS = 60_000;
/** Letters one pass reads at most. */
export const MAX_LETTERS_PER_PASS = 1_000;
const PAGE = 200;

export class VersionRedrive {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;

  constructor(
    private readonly deadLetters: DeadLetterQueue,
    /** The workflows this worker registers, by workflowKey(name, version). */
    private readonly registered: ReadonlySet<string>,
    private readonly logger: Logger,
    private readonly emit: (event: WorkerEvent) => void,
    private readonly intervalMs: number = REDRIVE_SCAN_MS,
  ) {}

  /** Runs a first pass now, then one every interval until stop(). */
  start(): void {
    this.trigger();
    this.timer = setInterval(() => this.trigger(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the passes; resolves once the one in flight (if any) has finished. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.pass;
  }

  /** Starts a pass unless one is in flight. */
  private trigger(): void {
    this.pass ??= this.redrive()
      .then(() => undefined)
      .catch((err: unknown) => {
        this.logger.warn({ err }, 'redriving unknown-workflow dead letters failed; the next pass retries');
      })
      .finally(() => (this.pass = undefined));
  }

  /** One pass: the letters it redrove (their ids and run ids). */
  async redrive(): Promise<{ ids: string[]; runIds: string[] }> {
    const ids: string[] = [];
    const runIds: string[] = [];
    let cursor: string | undefined;
    let read = 0;
    do {
      const page = await this.deadLetters.page({ limit: PAGE, ...(cursor ? { cursor } : {}) });
      read += page.letters.length;
      for (const letter of page.letters) {
        if (letter.code !== 'unknown-workflow') continue;
        let runId: string;
        try {
          const message = decodeMessage(letter.data);
          if (message.kind !== 'start') continue;
          if (!this.registered.has(workflowKey(message.workflow, message.version))) continue;
          runId = message.runId;
        } catch {
          continue; // not a message this worker can read: left for an operator
        }
        try {
          await this.deadLetters.redrive(letter.id);
          ids.push(letter.id);
          runIds.push(runId);
        } catch (err) {
          if (err instanceof NotFoundError) continue; // another worker redrove it first
          throw err;
        }
      }
      cursor = page.cursor;
    } while (cursor !== undefined && read < MAX_LETTERS_PER_PASS);
    if (ids.length > 0) {
      this.logger.info(
        { count: ids.length, runIds },
        'redrove start messages dead-lettered for a workflow version this worker registers',
      );
      this.emit({ type: 'dead-letters-redriven', ids, runIds });
    }
    return { ids, runIds };
  }
}
