/**
 * One JetStream pull request, made by hand rather than with nats.js's `consumer.fetch()`, which
 * refuses an `expires` below 1 s: the worker's fetches and the conformance suite wait 100-300 ms,
 * and a request the server keeps open longer than the caller waits would swallow messages.
 *
 * Invariants:
 * 1. A request ends exactly once: on a status from the server (404 no messages, 408 expired,
 *    409 refused), a full batch, its abort signal, a permission violation, a quiet period after
 *    a partial batch, or a backstop timer for a server that never answers (disconnected,
 *    restarted, or holding a no_wait request at max_ack_pending).
 * 2. The server keeps a waiting request only while its inbox has interest. When the request ends
 *    without the server saying so (abort, backstop), the inbox is drained, not dropped: UNSUB and
 *    a flush, with the handler still attached, so a message the server sent before it saw the
 *    UNSUB reaches `onLate` (the run queue naks it for immediate redelivery) instead of sitting
 *    unacked until the ack wait runs out.
 * 3. `settled` resolves once the inbox is gone, so close() can wait for late messages to be
 *    handed back before the connection closes.
 */
import { createInbox, nanos, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type { PermissionWatch } from './connection.js';
import { natsRequestFailed, natsUnavailable } from './errors.js';

/** What to ask the consumer for. */
export interface PullRequest {
  /** `$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>` */
  subject: string;
  batch: number;
  /** Return what is ready now instead of waiting (the server answers 404/408 at once). */
  noWait: boolean;
  /** How long the server keeps a waiting request open; ignored with `noWait`. */
  expiresMs?: number;
  /** Ends the request early with what has arrived. */
  signal?: AbortSignal;
  /** Backstop for a server that never answers. */
  timeoutMs: number;
  /**
   * Ends the request this long after a message when nothing else arrived: a no_wait request that
   * delivered part of its batch and then hit max_ack_pending is not answered until a slot frees.
   */
  quietMs?: number;
  /** A message that arrived after the request ended; it is delivered but nobody will process it. */
  onLate?(msg: Msg): void;
}

/** The outcome of a pull request. */
export interface PullResult {
  messages: Msg[];
  /** True when the server ended the request (a status, or the batch filled); false on a timeout or abort. */
  answered: boolean;
  /** Resolves when the inbox is closed and no late message can arrive any more. */
  settled: Promise<void>;
}

/** Status codes of pull responses. */
const STATUS = { heartbeat: 100, conflict: 409 } as const;

/** Sends one pull request and collects its messages; see the invariants above. */
export function pullBatch(
  nc: NatsConnection,
  permissions: PermissionWatch,
  request: PullRequest,
): Promise<PullResult> {
  return new Promise<PullResult>((resolve, reject) => {
    const messages: Msg[] = [];
    let ended = false;
    let settled: Promise<void> = Promise.resolve();
    const inbox = createInbox();
    const subscription = nc.subscribe(inbox, {
      callback: (err, msg) => {
        if (ended) {
          if (err === null && statusOf(msg) === 0) request.onLate?.(msg);
          return;
        }
        if (err !== null) return end('drain', err);
        const status = statusOf(msg);
        if (status === STATUS.heartbeat) return;
        if (status === STATUS.conflict && messages.length === 0) {
          // An error, so a claim loop backs off instead of spinning on empty batches.
          return end('unsubscribe', conflictError(request.subject, msg.headers?.description ?? ''));
        }
        if (status !== 0) return end('unsubscribe');
        messages.push(msg);
        // A fulfilled request is finished on the server too; nothing else will arrive.
        if (messages.length >= request.batch) return end('unsubscribe');
        if (request.quietMs !== undefined) {
          clearTimeout(quiet);
          quiet = setTimeout(() => end('drain'), request.quietMs);
        }
      },
    });
    const unwatch = permissions.watch(request.subject, (violation) => end('drain', violation));
    const onAbort = (): void => end('drain');
    const timer = setTimeout(() => end('drain'), request.timeoutMs);
    let quiet: ReturnType<typeof setTimeout> | undefined;

    function end(how: 'unsubscribe' | 'drain', error?: Error): void {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      clearTimeout(quiet);
      unwatch();
      request.signal?.removeEventListener('abort', onAbort);
      if (how === 'unsubscribe') {
        subscription.unsubscribe();
      } else {
        // A closed connection cannot drain; nothing can arrive then anyway.
        settled = subscription.drain().catch(() => undefined);
      }
      if (error !== undefined) reject(error);
      else resolve({ messages, answered: how === 'unsubscribe', settled });
    }

    if (request.signal?.aborted) return end('unsubscribe');
    request.signal?.addEventListener('abort', onAbort, { once: true });
    const body: Record<string, unknown> = { batch: request.batch };
    if (request.noWait) body.no_wait = true;
    else if (request.expiresMs !== undefined) body.expires = nanos(request.expiresMs);
    try {
      nc.publish(request.subject, JSON.stringify(body), { reply: inbox });
    } catch (err) {
      end('unsubscribe', err as Error);
    }
  });
}

/**
 * A 409 answer: the server going away or a new consumer leader (retry soon), or a refusal such as
 * "Exceeded MaxWaiting" or "Consumer Deleted".
 */
function conflictError(subject: string, description: string): Error {
  const message = `pull request on ${subject} ended: 409 ${description}`;
  if (/shutdown|leadership/i.test(description)) {
    return natsUnavailable(`${message}; the client reconnects by itself, retry the fetch`);
  }
  return natsRequestFailed(message);
}

/** The status code of a pull response, 0 for a message. */
function statusOf(msg: Msg): number {
  // Status responses have no payload and a status line such as "NATS/1.0 408 Request Timeout".
  return msg.data.byteLength === 0 ? (msg.headers?.code ?? 0) : 0;
}
