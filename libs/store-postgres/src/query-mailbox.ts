/**
 * QueryMailbox on Postgres (`store.queries`; contracts/query-mailbox.ts in @baton/core): a query
 * is a row of `queries` for the length of its ask (migration 025), posted, claimed and answered by
 * one function call each; the workers are told of a post on the schema's queries channel (the
 * payload: the request without its arguments), the askers of a reply on its replies channel (the
 * payload: the query id), both heard on one LISTEN session per store.
 *
 * Invariants:
 * 1. One listening session per store, outside the pool (a LISTEN holds its connection), opened at
 *    the first listen or ask and opened again with capped backoff after it is lost, until close().
 * 2. Best effort, never in the way: while the session is down an asker reads its row every
 *    POLL_MS instead, and a worker is deaf (its asker falls back, then times out).
 * 3. An ask always ends by its deadline and deletes its row when it ends, reading a reply that came
 *    meanwhile in the same statement; a row whose asker died is swept once expired (post_query).
 * 4. Notifications name the schema's channels only; one a session cannot parse is ignored.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { OperationsOf, QueryMailbox, QueryReply, QueryRequest } from '@baton/core/adapter';
import { clientConfig, toJson, type Db } from './db.js';
import type { ResolvedPostgresStoreOptions } from './options.js';

type Notice = Omit<QueryRequest, 'args'>;
type Listener = (request: Notice) => void;
type AskResult = Awaited<ReturnType<QueryMailbox['ask']>>;

/** How often a waiting asker reads its row, should the notification have been missed (invariant 2). */
const POLL_MS = 500;
/** How long a row outlives its ask's deadline before a sweep may take it: a clock's margin. */
const EXPIRY_MARGIN_MS = 2_000;
const RECONNECT_INITIAL_MS = 100;
const RECONNECT_MAX_MS = 2_000;

/** Prefix of the application_name of the listening session (`baton-queries:<schema>`). */
export const QUERIES_APPLICATION_PREFIX = 'baton-queries:';

/** The schema's channels: posts (heard by workers) and replies (heard by askers). */
export function queryChannels(schema: string): { posts: string; replies: string } {
  const id = createHash('sha256').update(schema).digest('hex').slice(0, 24);
  return { posts: `baton_queries_${id}`, replies: `baton_query_replies_${id}` };
}

const DELETE_READING_SQL =
  'DELETE FROM {{schema}}.queries WHERE query_id = $1 RETURNING reply::text AS reply';
const READ_REPLY_SQL =
  'DELETE FROM {{schema}}.queries WHERE query_id = $1 AND reply IS NOT NULL RETURNING reply::text AS reply';

export class PostgresQueryMailbox {
  private readonly channels: { posts: string; replies: string };
  private readonly waiting = new Map<string, () => void>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private session: pg.Client | undefined;
  private opening: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(private readonly options: ResolvedPostgresStoreOptions) {
    this.channels = queryChannels(options.schema);
  }

  /** The mailbox's operations, run on the store's pool through its runner. */
  readonly operations: OperationsOf<Db, QueryMailbox> = {
    ask: (db, request, timeoutMs) => this.ask(db, request, timeoutMs),
    claim: async (db, queryId, workerId) => {
      const [row] = await db.query<{ request: string | null }>(
        'SELECT {{schema}}.claim_query($1, $2)::text AS request',
        [queryId, workerId],
      );
      return row?.request == null ? undefined : (JSON.parse(row.request) as QueryRequest);
    },
    answer: async (db, queryId, reply) => {
      await db.query('SELECT {{schema}}.answer_query($1, $2::json, $3)', [
        queryId,
        toJson(reply, `the reply to query ${queryId}`),
        this.channels.replies,
      ]);
    },
  };

  listen(workerId: string, listener: Listener): () => void {
    let set = this.listeners.get(workerId);
    if (set === undefined) this.listeners.set(workerId, (set = new Set()));
    const own: Listener = (request) => listener(request);
    set.add(own);
    void this.open();
    return () => {
      set.delete(own);
      if (set.size === 0 && this.listeners.get(workerId) === set) this.listeners.delete(workerId);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.listeners.clear();
    await this.opening?.catch(() => undefined);
    const session = this.session;
    this.session = undefined;
    await session?.end().catch(() => undefined);
  }

  private async ask(db: Db, request: QueryRequest, timeoutMs: number): Promise<AskResult> {
    const deadline = Date.now() + timeoutMs;
    await this.open();
    let wake!: () => void;
    let told = new Promise<void>((resolve) => (wake = resolve));
    this.waiting.set(request.queryId, () => wake());
    const { args: _args, ...notice } = request;
    try {
      await db.query('SELECT {{schema}}.post_query($1, $2, $3, $4::json, $5, $6, $7)', [
        request.queryId,
        request.runId,
        request.to,
        toJson(request, `query ${request.queryId}`),
        timeoutMs + EXPIRY_MARGIN_MS,
        this.channels.posts,
        JSON.stringify(notice),
      ]);
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0 || this.closed) break;
        await Promise.race([told, sleep(Math.min(POLL_MS, left))]);
        told = new Promise<void>((resolve) => (wake = resolve));
        const [row] = await db.query<{ reply: string }>(READ_REPLY_SQL, [request.queryId]);
        if (row !== undefined) return JSON.parse(row.reply) as QueryReply;
      }
    } finally {
      this.waiting.delete(request.queryId);
    }
    // Invariant 3: withdrawn, reading a reply that came at the last moment.
    const [row] = await db.query<{ reply: string | null }>(DELETE_READING_SQL, [request.queryId]);
    if (row?.reply != null) return JSON.parse(row.reply) as QueryReply;
    // Postgres cannot tell whether anyone listened.
    return { status: 'unanswered', heard: true };
  }

  /** The listening session, opened once and again after a loss (invariant 1). Never rejects. */
  private open(): Promise<void> {
    if (this.closed || this.session !== undefined) return Promise.resolve();
    this.opening ??= this.connect().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(
      clientConfig(this.options, `${QUERIES_APPLICATION_PREFIX}${this.options.schema}`),
    );
    // Registered before connecting: an 'error' without a listener would crash the process.
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => this.heard(message.channel, message.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channels.posts}; LISTEN ${this.channels.replies}`);
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.session = client;
      this.failures = 0;
    } catch {
      await client.end().catch(() => undefined);
      this.failures += 1;
      this.reconnectLater();
    }
  }

  private lost(client: pg.Client): void {
    if (this.session !== client) return;
    this.session = undefined;
    client.end().catch(() => undefined);
    this.reconnectLater();
  }

  private reconnectLater(): void {
    if (this.closed || this.listeners.size === 0) return; // an asker opens it again when it asks
    clearTimeout(this.timer);
    const base = Math.min(RECONNECT_MAX_MS, RECONNECT_INITIAL_MS * 2 ** Math.min(this.failures, 10));
    this.timer = setTimeout(() => void this.open(), Math.round(base / 2 + Math.random() * (base / 2)));
    this.timer.unref();
  }

  private heard(channel: string, payload: string | undefined): void {
    if (payload === undefined) return;
    if (channel === this.channels.replies) {
      this.waiting.get(payload)?.();
      return;
    }
    if (channel !== this.channels.posts || this.listeners.size === 0) return;
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      return; // Invariant 4.
    }
    const told =
      notice.to === null
        ? [...this.listeners.values()].flatMap((set) => [...set])
        : [...(this.listeners.get(notice.to) ?? [])];
    for (const listener of told) {
      try {
        listener(notice);
      } catch {
        // A listener's failure is its own: the others still hear.
      }
    }
  }
}
