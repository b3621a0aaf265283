/**
 * QueryMailbox on Redis (`store.queries`; contracts/query-mailbox.ts in @baton/core): a query is a
 * hash under `<prefix>query:<queryId>` that lives as long as its ask, posted and announced by one
 * script (lua/query-ask.lua) on `<prefix>queries:<workerId>` (to the run's holder) or
 * `<prefix>queries-any` (to any worker); claimed by HSETNX (lua/query-claim.lua); answered by a
 * script that keeps the reply briefly under `<prefix>query-reply:<queryId>` and publishes it on the
 * asker's own channel `<prefix>query-replies:<asker>` (lua/query-answer.lua).
 *
 * Invariants:
 * 1. One subscriber connection per store (a subscribed connection can run nothing else), opened at
 *    the first listen or ask; every channel is subscribed again on reconnect (ioredis does).
 * 2. Best effort, never in the way: a subscriber that cannot connect leaves the asker reading the
 *    reply key every POLL_MS instead, and leaves a worker deaf (its asker falls back, then times
 *    out); nothing is retried by hand.
 * 3. An ask always ends by its deadline, and withdraws its request and reply keys when it ends, so
 *    no worker claims a request whose asker left; keys it could not delete expire by themselves.
 * 4. After close() no connection is opened and none stays open; asks under way end unanswered.
 */
import { randomUUID } from 'node:crypto';
import type { OperationsOf, QueryMailbox, QueryReply, QueryRequest } from '@baton/core/adapter';
import { createConnection, type StoreConnection } from './connection.js';
import type { StoreContext } from './context.js';
import type { KeyLayout } from './keys.js';
import type { ResolvedRedisStoreOptions } from './options.js';

type Notice = Omit<QueryRequest, 'args'>;
type Listener = (request: Notice) => void;
type AskResult = Awaited<ReturnType<QueryMailbox['ask']>>;

/** How often a waiting asker reads its reply key, should the message have been missed (invariant 2). */
const POLL_MS = 500;
/** How long a request outlives its ask's deadline, and a reply its posting: a clock's margin. */
const EXPIRY_MARGIN_MS = 2_000;
const REPLY_TTL_MS = 10_000;

/** The channel requests to `workerId` are announced on; null: the one for any worker. */
export function queriesChannel(keys: KeyLayout, workerId: string | null): string {
  return workerId === null ? `${keys.prefix}queries-any` : `${keys.prefix}queries:${workerId}`;
}

export class RedisQueryMailbox {
  /** This store's reply channel: replies to its asks, and nothing else, arrive here. */
  private readonly replyChannel: string;
  private readonly waiting = new Map<string, (reply: QueryReply) => void>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private subscriber: Promise<StoreConnection | undefined> | undefined;
  /** The reply channel's subscription, made once (ioredis makes it again on reconnect). */
  private replies: Promise<boolean> | undefined;
  private closed = false;

  constructor(
    private readonly options: ResolvedRedisStoreOptions,
    private readonly keys: KeyLayout,
  ) {
    this.replyChannel = `${keys.prefix}query-replies:${randomUUID()}`;
  }

  /** The mailbox's operations, run on the store's command connection through its runner. */
  readonly operations: OperationsOf<StoreContext, QueryMailbox> = {
    ask: (ctx, request, timeoutMs) => this.ask(ctx, request, timeoutMs),
    claim: async (ctx, queryId, workerId) => {
      const found = (await ctx.run('query-claim', [ctx.keys.query(queryId)], [workerId])) as string | null;
      return typeof found === 'string' ? (JSON.parse(found) as QueryRequest) : undefined;
    },
    answer: async (ctx, queryId, reply) => {
      const { keys } = ctx;
      await ctx.run(
        'query-answer',
        [keys.query(queryId), keys.queryReply(queryId)],
        [queryId, JSON.stringify(reply), REPLY_TTL_MS],
      );
    },
  };

  listen(workerId: string, listener: Listener): () => void {
    const channels = [queriesChannel(this.keys, workerId), queriesChannel(this.keys, null)];
    const own: Listener = (request) => listener(request);
    for (const channel of channels) {
      let set = this.listeners.get(channel);
      if (set === undefined) {
        this.listeners.set(channel, (set = new Set()));
        void this.subscribe(channel);
      }
      set.add(own);
    }
    return () => {
      for (const channel of channels) {
        const set = this.listeners.get(channel);
        set?.delete(own);
        if (set === undefined || set.size > 0) continue;
        this.listeners.delete(channel);
        void this.subscriber?.then((c) => c?.redis.unsubscribe(channel)).catch(() => undefined);
      }
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const connection = await this.subscriber?.catch(() => undefined);
    await connection?.close();
  }

  private async ask(ctx: StoreContext, request: QueryRequest, timeoutMs: number): Promise<AskResult> {
    const { keys } = ctx;
    const queryKey = keys.query(request.queryId);
    const replyKey = keys.queryReply(request.queryId);
    const { args: _args, ...notice } = request;
    const deadline = Date.now() + timeoutMs;
    this.replies ??= this.subscribe(this.replyChannel).then((subscribed) => {
      if (!subscribed) this.replies = undefined; // the next ask tries again; this one polls
      return subscribed;
    });
    await this.replies;
    let settle!: (reply: QueryReply) => void;
    const replied = new Promise<QueryReply>((resolve) => (settle = resolve));
    this.waiting.set(request.queryId, settle);
    try {
      const heard = (await ctx.run(
        'query-ask',
        [queryKey],
        [
          JSON.stringify(request),
          this.replyChannel,
          timeoutMs + EXPIRY_MARGIN_MS,
          queriesChannel(keys, request.to),
          JSON.stringify(notice),
        ],
      )) as number;
      if (heard === 0) return { status: 'unanswered', heard: false };
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0 || this.closed) break;
        const reply = await Promise.race([replied, pause(Math.min(POLL_MS, left))]);
        if (reply !== undefined) return reply;
        const kept = await ctx.redis.get(replyKey).catch(() => null);
        if (kept !== null) return JSON.parse(kept) as QueryReply;
      }
      const last = await ctx.redis.get(replyKey).catch(() => null);
      return last !== null ? (JSON.parse(last) as QueryReply) : { status: 'unanswered', heard: true };
    } finally {
      this.waiting.delete(request.queryId);
      // Invariant 3: withdrawn, so a late claim finds nothing; an expiry stands behind a failed delete.
      void ctx.redis.del(queryKey, replyKey).catch(() => undefined);
    }
  }

  /** Subscribes `channel` on the subscriber connection; false when that failed (invariant 2). */
  private async subscribe(channel: string): Promise<boolean> {
    try {
      const connection = await this.open();
      if (connection === undefined) return false;
      if (channel === this.replyChannel || this.listeners.has(channel))
        await connection.redis.subscribe(channel);
      return true;
    } catch {
      // Invariant 2: the asker reads its reply key; a deaf worker leaves its askers to fall back.
      return false;
    }
  }

  /** The subscriber connection, opened once (invariant 4: none after close). */
  private open(): Promise<StoreConnection | undefined> {
    this.subscriber ??= (async () => {
      if (this.closed) return undefined;
      const connection = createConnection(this.options);
      connection.redis.on('message', (channel: string, message: string) => this.heard(channel, message));
      try {
        await connection.open();
      } catch (err) {
        this.subscriber = undefined; // the next listen or ask tries again
        throw err;
      }
      if (this.closed) {
        await connection.close();
        return undefined;
      }
      return connection;
    })();
    return this.subscriber;
  }

  private heard(channel: string, message: string): void {
    try {
      if (channel === this.replyChannel) {
        const cut = message.indexOf('\n');
        this.waiting.get(message.slice(0, cut))?.(JSON.parse(message.slice(cut + 1)) as QueryReply);
        return;
      }
      const notice = JSON.parse(message) as Notice;
      for (const listener of [...(this.listeners.get(channel) ?? [])]) {
        try {
          listener(notice);
        } catch {
          // A listener's failure is its own: the others still hear.
        }
      }
    } catch {
      // A message that is not ours to read (another writer on the channel) is ignored.
    }
  }
}

function pause(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}
