/**
 * What the run queue, the journal and the dead-letter queue share once the transport is
 * connected.
 */
import type { BatonError } from '@baton/core';
import type { NatsSession } from './connection.js';
import type { NatsLayout } from './layout.js';
import type { ResolvedNatsTransportOptions } from './options.js';
import type { StreamsState } from './setup.js';
import type { AppendRetryStats, MessageIds } from './message-ids.js';

export interface TransportContext {
  readonly session: NatsSession;
  readonly options: ResolvedNatsTransportOptions;
  readonly layout: NatsLayout;
  readonly streams: StreamsState;
  /** The `Nats-Msg-Id` of each journal append (append-retry.ts). */
  readonly messageIds: MessageIds;
  /** Counts of appends retried after an unknown outcome. */
  readonly appendStats: AppendRetryStats;
  /** Aborts when close() begins; every wait inside the transport honours it. */
  readonly closing: AbortSignal;
  /**
   * Throws BATON_CLOSED once close() was called: for what no capability guard covers, a delivery's
   * ack or nak (the capabilities' own methods are checked once, by their guard).
   */
  assertOpen(operation: string): void;
  /** The transport's error for anything `operation` threw. */
  toError(operation: string, err: unknown): BatonError;
  /** Keeps close() waiting for `work` (late messages being handed back) before the connection goes. */
  track(work: Promise<unknown>): void;
}
