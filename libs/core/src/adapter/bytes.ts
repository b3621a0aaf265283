/**
 * Bytes between Baton's Uint8Array and the Node Buffers drivers speak (ioredis, pg): views where
 * that is safe, copies where it is not.
 */

/** The same bytes as a Buffer, without copying (drivers send Buffer arguments as they are). */
export function bufferView(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * A plain Uint8Array of a driver's Buffer: a view when the Buffer owns its whole memory, else a
 * copy (a small Buffer may be a slice of a shared pool, which its reader must not see).
 */
export function ownedBytes(value: Buffer): Uint8Array {
  return value.byteOffset === 0 && value.byteLength === value.buffer.byteLength
    ? new Uint8Array(value.buffer, 0, value.byteLength)
    : new Uint8Array(value);
}
