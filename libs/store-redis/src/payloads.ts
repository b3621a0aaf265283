/**
 * PayloadStore on Redis (`store.payloads`): one hash per run (`<prefix>payload:<runId>`, field = the hex SHA-256, value =
 * the bytes), so deleting a run's payloads is one DEL, and delete-run.lua drops the hash in the
 * same script as the run. Values travel as binary (Buffer arguments, `hgetBuffer`), never as
 * strings, so every byte comes back as it was written.
 */
import { bufferView, ownedBytes, type OperationsOf, type PayloadStore } from '@baton/core/adapter';
import type { StoreContext } from './context.js';

/** HSETNX: a hash already stored keeps its first copy (the bytes are the same by definition). */
async function put(ctx: StoreContext, runId: string, sha256: string, data: Uint8Array): Promise<void> {
  await ctx.redis.hsetnx(ctx.keys.payloads(runId), sha256, bufferView(data));
}

async function get(ctx: StoreContext, runId: string, sha256: string): Promise<Uint8Array | undefined> {
  const value = await ctx.redis.hgetBuffer(ctx.keys.payloads(runId), sha256);
  return value === null ? undefined : ownedBytes(value);
}

async function deletePayloads(ctx: StoreContext, runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0) return;
  await ctx.redis.del(...runIds.map((runId) => ctx.keys.payloads(runId)));
}

/** `store.payloads`' operations on the connection (its location is the store's). */
export const payloads: OperationsOf<StoreContext, PayloadStore> = { put, get, delete: deletePayloads };
