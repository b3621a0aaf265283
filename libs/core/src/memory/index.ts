/**
 * @baton/core/memory: the embedded adapters. A transport and a store in this process's memory,
 * for the demo (`npm start`), unit tests and trying Baton without a server. They never stand in
 * for a real adapter's test, and nothing survives the process.
 */
export type { MemoryTransportOptions } from './memory-transport.js';
export { memoryTransport } from './memory-transport.js';
export type { MemoryStoreOptions } from './memory-store.js';
export { damageMemoryCheckpoint, memoryStore } from './memory-store.js';
