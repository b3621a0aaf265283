/**
 * PayloadStore on Redis: one hash per run (`<prefix>payload:<runId>`, field = the hex SHA-256, value =
 * the bytes), so deleting a run's payloads is one DEL, and delete-run.lua drops the hash in the
 * same script as the run. Values travel as binary (Buffer arguments, `hgetBuffer`), never as
 * strings, so every byte comes back as it was written.
 */
import type { StoreContext } from './context.js';

/** HSETNX: a hash already stored keeps its first copy (the bytes are the same by definition). */
export async function putPayload(
  ctx: StoreContext,
  runId: string,
  sha256: string,
  data: Uint8Array,
): Promise<void> {
  await ctx.redis.hsetnx(ctx.keys.payloads(runId), sha256, asBuffer(data));
}

export async function getPayload(
  ctx: StoreContext,
  runId: string,
  sha256: string,
): Promise<Uint8Array | undefined> {
  const value = await ctx.redis.hgetBuffer(ctx.keys.payloads(runId), sha256);
  return value === null ? undefined : plainBytes(value);
}

export async function deletePayloads(ctx: StoreContext, runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0) return;
  await ctx.redis.del(...runIds.map((runId) => ctx.keys.payloads(runId)));
}

/** The same bytes as a Buffer, without copying (ioredis sends Buffer arguments as they are). */
function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * A plain Uint8Array of the reply's bytes: a view when the Buffer owns its whole memory, else a
 * copy (a small Buffer may be a slice of a shared pool, which its reader must not see).
 */
function plainBytes(value: Buffer): Uint8Array {
  return value.byteOffset === 0 && value.byteLength === value.buffer.byteLength
    ? new Uint8Array(value.buffer, 0, value.byteLength)
    : new Uint8Array(value);
}
