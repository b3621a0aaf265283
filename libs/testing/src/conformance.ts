/**
 * The conformance suites, for adapters' specs: `describeStoreConformance` and
 * `describeTransportConformance`.
 */
export { describeStoreConformance } from './store/index.js';
export type { StoreConformanceOptions } from './store/index.js';
export type { StorePairFactory } from './store/presence.js';
export { describeTransportConformance } from './transport/index.js';
export type { TransportConformanceOptions } from './transport/index.js';
