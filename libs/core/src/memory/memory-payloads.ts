/** The in-process store's {@link PayloadStore} (`store.payloads`): large payloads by run and hash, kept as copies. */
import type { PayloadStore } from '../adapter/contracts/payloads.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import type { MemoryState } from './memory-state.js';

function put(state: MemoryState, runId: string, sha256: string, data: Uint8Array): void {
  let byHash = state.payloads.get(runId);
  if (byHash === undefined) state.payloads.set(runId, (byHash = new Map()));
  if (!byHash.has(sha256)) byHash.set(sha256, Uint8Array.from(data));
}

function get(state: MemoryState, runId: string, sha256: string): Uint8Array | undefined {
  const data = state.payloads.get(runId)?.get(sha256);
  return data === undefined ? undefined : Uint8Array.from(data);
}

function deletePayloads(state: MemoryState, runIds: readonly string[]): void {
  for (const runId of runIds) state.payloads.delete(runId);
}

/** `store.payloads`' operations over the state (its location is the store's). */
export const payloads: OperationsOf<MemoryState, PayloadStore> = { put, get, delete: deletePayloads };
