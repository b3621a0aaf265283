/**
 * Large payloads by reference (`store.payloads`, {@link PayloadStore}): the claim check's storage,
 * scoped by run. Part of the store contract (store.ts); a transport may offer another
 * (`NatsObjectPayloadStore`).
 */

/**
 * Large payloads stored by reference (docs/large-payloads.md): a value above the claim-check
 * threshold is kept here, and the journal entry, checkpoint or message carries its SHA-256 instead.
 * Payloads are scoped by run, so retention deletes them with the run; the key is the hex SHA-256
 * of the stored bytes, so writing the same payload twice keeps one copy.
 *
 * Every store implements it (the default location); `NatsObjectPayloadStore` is the opt-in
 * alternative on NATS.
 */
export interface PayloadStore {
  /** Where payloads are kept, for errors and logs, e.g. `redis`, `postgres`, `nats-object-store`. */
  readonly location: string;
  /** Stores `data` as the run's payload `sha256`. Idempotent. */
  put(runId: string, sha256: string, data: Uint8Array): Promise<void>;
  /** The payload, or undefined when the run has none under that hash (deleted, or never written). */
  get(runId: string, sha256: string): Promise<Uint8Array | undefined>;
  /**
   * Deletes every payload of these runs (retention and `client.runs.delete`, after the run is gone).
   * A store's own {@link RetentionStore.delete} deletes its payloads atomically with the run;
   * this is for payload stores apart from the store, and for payloads written before a run was
   * created (the input of a start message no worker took).
   */
  delete(runIds: readonly string[]): Promise<void>;
}
