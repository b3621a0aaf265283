/**
 * The in-process store's {@link QueryMailbox} (`store.queries`): requests kept in a map for the
 * length of their ask, listeners told after the posting call returns, a claim and a reply settled
 * synchronously (the store's invariant 1: each call runs to completion without awaiting).
 *
 * The asker knows at once whether anyone listens (it is all in this process), so an ask nobody
 * could hear answers `unanswered` with `heard: false` without waiting.
 */
import type {
  QueryAskResult,
  QueryMailbox,
  QueryReply,
  QueryRequest,
} from '../adapter/contracts/query-mailbox.js';
import type { OperationsOf } from '../adapter/lifecycle.js';

type Listener = (request: Omit<QueryRequest, 'args'>) => void;

interface PostedQuery {
  request: QueryRequest;
  claimed: boolean;
  settle: (result: QueryAskResult) => void;
}

/** The mailbox's data: the asks under way and the listening workers. */
export class MailboxState {
  readonly posted = new Map<string, PostedQuery>();
  readonly listeners = new Map<string, Set<Listener>>();
}

function ask(state: MailboxState, request: QueryRequest, timeoutMs: number): Promise<QueryAskResult> {
  const { args: _args, ...notice } = request;
  const told =
    request.to === null
      ? [...state.listeners.values()].flatMap((set) => [...set])
      : [...(state.listeners.get(request.to) ?? [])];
  if (told.length === 0) return Promise.resolve({ status: 'unanswered', heard: false });
  return new Promise<QueryAskResult>((resolve) => {
    const timer = setTimeout(() => {
      state.posted.delete(request.queryId);
      resolve({ status: 'unanswered', heard: true });
    }, timeoutMs);
    state.posted.set(request.queryId, {
      request: structuredClone(request),
      claimed: false,
      settle: (result) => {
        clearTimeout(timer);
        state.posted.delete(request.queryId);
        resolve(result);
      },
    });
    // After this call: a store call never runs a listener's code.
    queueMicrotask(() => {
      for (const listener of told) {
        try {
          listener(structuredClone(notice));
        } catch {
          // A listener's failure is its own.
        }
      }
    });
  });
}

function claim(state: MailboxState, queryId: string, _workerId: string): QueryRequest | undefined {
  const posted = state.posted.get(queryId);
  if (posted === undefined || posted.claimed) return undefined;
  posted.claimed = true;
  return structuredClone(posted.request);
}

function answer(state: MailboxState, queryId: string, reply: QueryReply): void {
  state.posted.get(queryId)?.settle(structuredClone(reply));
}

/** The mailbox's operations, bound to the store's closed check like every capability. */
export const queryMailbox: OperationsOf<MailboxState, QueryMailbox> = { ask, claim, answer };

/** QueryMailbox.listen: a subscription, answered at once (and harmless after close()). */
export function listen(state: MailboxState, workerId: string, listener: Listener): () => void {
  let set = state.listeners.get(workerId);
  if (set === undefined) state.listeners.set(workerId, (set = new Set()));
  const own: Listener = (request) => listener(request);
  set.add(own);
  return () => {
    set.delete(own);
    if (set.size === 0 && state.listeners.get(workerId) === set) state.listeners.delete(workerId);
  };
}
