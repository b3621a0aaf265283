/**
 * The adapter lifecycle every store and transport shares, so a new adapter of either kind is
 * built, connected, closed and reported on the same way.
 *
 * Capabilities beyond the contract are told apart the same way on both sides: a flag for a
 * guarantee the caller plans around (a transport's `supportsOptimisticAppend`, `scansSharedLog`,
 * `journal.purgeMode`), optional methods for a part an adapter may leave out (a delivery's
 * `ackUnconfirmed`, a store's presence and `onDataLoss`).
 */

/**
 * What every adapter, store or transport, is as a long-lived thing: a name, `connect()` and
 * `close()`. The NATS and Kafka transports, the NATS object payload store and the Redis and
 * Postgres stores share one implementation of these rules (`AdapterLifecycle`, lifecycle.ts;
 * states created, connecting, open, closed); the stores also connect on an operation's first use.
 */
export interface Adapter {
  /** A short name for logs and metrics (`memory`, `redis`, `postgres`, `nats`, `kafka`). */
  readonly name: string;
  /**
   * Connects and prepares (streams, topics, scripts, migrations). Safe to call more than once;
   * concurrent calls share one attempt, and a failed one may be retried. Rejects with
   * BATON_CLOSED after close().
   */
  connect(): Promise<void>;
  /** Releases connections; final. Safe to call twice. Every later operation rejects with BATON_CLOSED. */
  close(): Promise<void>;
}
