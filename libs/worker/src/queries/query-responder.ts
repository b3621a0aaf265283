/**
 * The worker's side of queries (docs/queries.md): listens on the store's query mailbox
 * (`store.queries`), and answers
 * - a request to this worker (it held the run's lease when the asker looked) from the run's state in
 *   memory, through its session's executor, or `not-held` when no session of the run is here
 *   (the lease moved, the run suspended): the asker then asks any worker;
 * - a request to any worker, when this worker registers the run's workflow version: from memory
 *   when it holds the run after all, else by replaying the run's journal (query-replay.ts).
 *
 * Invariants:
 * 1. A request is claimed before anything is done for it, so exactly one worker answers it and a
 *    request whose asker left (the claim finds nothing) costs no replay.
 * 2. A worker leaves a request to any worker for a workflow version it does not register (another
 *    worker may), and one it has no room for: at most MAX_REPLAYS replays run at once, so queries
 *    never crowd out the runs this worker holds.
 * 3. Answering never touches a run: memory answers run the handler between two turns of the
 *    workflow, under the read-only guard; replays write nothing.
 * 4. Every failure is an answer or a log line, never a crash: a claim or an answer the store
 *    refuses is logged at debug level and the asker times out.
 */
import type { AnyWorkflowDefinition } from '@baton/core';
import type { QueryReply, QueryRequest } from '@baton/core/adapter';
import { openValue, sealValue } from '@baton/core/runtime';
import type { Logger } from '../logger.js';
import { workflowKey } from '../options.js';
import { answerByReplay, type QueryReplayDeps } from './query-replay.js';

/** Replays for queries run at once, at most (invariant 2). */
const MAX_REPLAYS = 4;
/**
 * How long a replay may take: the asker waits no longer than its own timeout, and a replay past
 * this is a workflow that does not reach its journal's end.
 */
const REPLAY_TIMEOUT_MS = 30_000;

/** A run this worker holds, as a query sees it. */
export interface HeldRun {
  /** The handler's answer now; undefined while the session has no executor yet (it is recovering). */
  answerQuery(name: string, args: unknown): QueryReply | undefined;
}

export interface QueryResponderDeps extends QueryReplayDeps {
  readonly workerId: string;
  readonly logger: Logger;
  /** The workflow definitions this worker registers, by `workflowKey`. */
  readonly workflows: ReadonlyMap<string, AnyWorkflowDefinition>;
  /** The session of a run this worker holds now. */
  held(runId: string): HeldRun | undefined;
}

export class QueryResponder {
  private stopListening: (() => void) | undefined;
  private replaying = 0;

  constructor(private readonly deps: QueryResponderDeps) {}

  start(): void {
    this.stopListening = this.deps.store.queries.listen(this.deps.workerId, (notice) => {
      void this.respond(notice);
    });
  }

  stop(): void {
    this.stopListening?.();
    this.stopListening = undefined;
  }

  private async respond(notice: Omit<QueryRequest, 'args'>): Promise<void> {
    const { workerId, logger } = this.deps;
    const toMe = notice.to === workerId;
    const workflow = this.deps.workflows.get(workflowKey(notice.workflow, notice.version));
    const heldHere = this.deps.held(notice.runId) !== undefined;
    // Invariant 2: a request to any worker is left to one that has the version, and room.
    if (!toMe && (workflow === undefined || (!heldHere && this.replaying >= MAX_REPLAYS))) return;
    const replays = !toMe && !heldHere;
    if (replays) this.replaying++;
    try {
      const request = await this.deps.store.queries.claim(notice.queryId, workerId);
      if (request === undefined) return;
      const reply = await this.answer(request, workflow);
      await this.deps.store.queries.answer(request.queryId, reply);
    } catch (err) {
      logger.debug({ err, runId: notice.runId, query: notice.name }, 'a query went unanswered');
    } finally {
      if (replays) this.replaying--;
    }
  }

  /** The reply to a claimed request (the module's rules), its answer sealed as the fleet seals values. */
  private async answer(
    request: QueryRequest,
    workflow: AnyWorkflowDefinition | undefined,
  ): Promise<QueryReply> {
    const { payloadProtection } = this.deps;
    let args: unknown;
    try {
      args = openValue(request.args, request.runId, 'query args', payloadProtection);
    } catch (err) {
      return { status: 'failed', error: { name: (err as Error).name, message: (err as Error).message } };
    }
    const held = this.deps.held(request.runId)?.answerQuery(request.name, args);
    let reply: QueryReply;
    if (held !== undefined) reply = held;
    else if (request.to === this.deps.workerId || workflow === undefined) reply = { status: 'not-held' };
    else {
      reply = await answerByReplay(this.deps, workflow, request.runId, request.name, args, REPLAY_TIMEOUT_MS);
    }
    if (reply.status !== 'answered') return reply;
    return {
      status: 'answered',
      result: sealValue(reply.result, request.runId, 'query result', payloadProtection),
    };
  }
}
