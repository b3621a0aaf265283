/**
 * Pipelined JetStream publishing: every publish of the transport (journal appends, run messages)
 * goes out with a reply subject under one wildcard inbox subscription, and its PubAck is matched
 * to the waiting caller by a counter token.
 *
 * Why not `js.publish`: it makes a request per message, and each request builds an Error (to keep
 * the caller's stack), arms its own timer and copies its options; with one journal append per
 * durable step that was a quarter of a busy worker's CPU (docs/performance.md). Here a publish is
 * a map entry, the publishes of one event-loop turn go to the socket in one write, and one sweep
 * timer expires every late ack.
 *
 * Invariants:
 * 1. A publish resolves only with the server's PubAck (the message is stored), and rejects with
 *    the server's API error (JetStreamApiError, e.g. a wrong expected last subject sequence), with
 *    JetStreamNotEnabled when nothing answers the subject, or with TimeoutError after
 *    `timeoutMs`. The errors are the ones nats.js raises, so the transport maps them unchanged.
 * 2. A publish never waits forever: the sweep rejects it within its timeout plus one sweep
 *    period, and close() rejects every pending publish.
 * 3. An ack that arrives after its publish timed out is dropped (its token is gone): a timed-out
 *    append is "unknown", exactly as with a request.
 */
import {
  createInbox,
  errors as natsErrors,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/transport-node';
import { JetStreamApiError, type PubAck } from '@nats-io/jetstream';

interface Pending {
  resolve(ack: PubAck): void;
  reject(err: Error): void;
  /** Local time after which the publish counts as timed out. */
  deadline: number;
}

/** How the server says "no responders" on a reply subject (a status message, no payload). */
const NO_RESPONDERS = 503;

const decoder = new TextDecoder();

export class JetStreamPublisher {
  private readonly pending = new Map<string, Pending>();
  private outbox: Array<{ subject: string; data: Uint8Array; headers: MsgHdrs | undefined; token: string }> =
    [];
  private readonly inbox: string;
  private counter = 0;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.inbox = createInbox();
    nc.subscribe(`${this.inbox}.*`, { callback: (err, msg) => this.onReply(err, msg) });
    void nc.closed().then(() => this.close());
  }

  /**
   * Publishes `data` to `subject` and resolves with the PubAck once JetStream stored it; times out
   * after `timeoutMs` (the publisher's own by default; a shorter one for callers that retry).
   */
  publish(subject: string, data: Uint8Array, headers?: MsgHdrs, timeoutMs = this.timeoutMs): Promise<PubAck> {
    if (this.closed) return Promise.reject(new natsErrors.ClosedConnectionError());
    const token = (++this.counter).toString(36);
    return new Promise<PubAck>((resolve, reject) => {
      this.pending.set(token, { resolve, reject, deadline: Date.now() + timeoutMs });
      this.outbox.push({ subject, data, headers, token });
      if (this.outbox.length === 1) setImmediate(this.sendOutbox);
      if (this.sweeper === undefined) {
        this.sweeper = setInterval(() => this.sweep(), Math.max(50, Math.min(1_000, this.timeoutMs / 4)));
        // Pending publishes keep the socket busy anyway; the sweep alone must not hold the process.
        this.sweeper.unref();
      }
    });
  }

  /**
   * Sends everything published since the last turn of the event loop in one go, so nats.js writes
   * it to the socket at once: the acks of one socket read release many runs, whose next appends
   * then share one write instead of one write (and one syscall) each.
   */
  private readonly sendOutbox = (): void => {
    const batch = this.outbox;
    this.outbox = [];
    for (const { subject, data, headers, token } of batch) {
      const waiting = this.pending.get(token);
      if (waiting === undefined) continue; // timed out or closed meanwhile
      try {
        this.nc.publish(subject, data, { reply: `${this.inbox}.${token}`, ...(headers && { headers }) });
      } catch (err) {
        this.pending.delete(token);
        waiting.reject(err as Error);
      }
    }
  };

  /** Rejects every pending publish; later publishes fail at once. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new natsErrors.ClosedConnectionError());
  }

  private onReply(err: Error | null, msg: Msg): void {
    if (err !== null) {
      // The subscription itself failed (the connection closed): nothing pending can be answered.
      this.close();
      return;
    }
    const token = msg.subject.slice(this.inbox.length + 1);
    const waiting = this.pending.get(token);
    if (waiting === undefined) return;
    this.pending.delete(token);
    if (this.pending.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
    if (msg.data.length === 0 && msg.headers?.code === NO_RESPONDERS) {
      waiting.reject(
        Object.assign(new Error('jetstream is not enabled: no stream answers the subject'), {
          name: 'JetStreamNotEnabled',
          cause: new natsErrors.NoRespondersError(msg.subject),
        }),
      );
      return;
    }
    let reply: { error?: ConstructorParameters<typeof JetStreamApiError>[0]; stream?: string; seq?: number };
    try {
      reply = JSON.parse(decoder.decode(msg.data)) as typeof reply;
    } catch (cause) {
      waiting.reject(new natsErrors.RequestError('invalid JetStream publish ack', { cause }));
      return;
    }
    if (reply.error !== undefined) waiting.reject(new JetStreamApiError(reply.error));
    else if (typeof reply.seq !== 'number' || !reply.stream)
      waiting.reject(new natsErrors.RequestError('invalid JetStream publish ack'));
    else waiting.resolve(reply as PubAck);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [token, p] of this.pending) {
      if (p.deadline > now) continue;
      this.pending.delete(token);
      p.reject(new natsErrors.TimeoutError());
    }
    if (this.pending.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}
