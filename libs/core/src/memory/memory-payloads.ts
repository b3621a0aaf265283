/** The in-process store's {@link PayloadStore} part: large payloads by run and hash, kept as copies. */
import type { MemoryState } from './memory-state.js';

export function putPayload(state: MemoryState, runId: string, sha256: string, data: Uint8Array): void {
  let byHash = state.payloads.get(runId);
  if (byHash === undefined) state.payloads.set(runId, (byHash = new Map()));
  if (!byHash.has(sha256)) byHash.set(sha256, Uint8Array.from(data));
}

export function getPayload(state: MemoryState, runId: string, sha256: string): Uint8Array | undefined {
  const data = state.payloads.get(runId)?.get(sha256);
  return data === undefined ? undefined : Uint8Array.from(data);
}

export function deletePayloads(state: MemoryState, runIds: readonly string[]): void {
  for (const runId of runIds) state.payloads.delete(runId);
}
