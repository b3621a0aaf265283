/**
 * The conformance suites, for adapters' specs: `describeStoreConformance` and
 * `describeTransportConformance`.
 */
export { describeStoreConformance } from './store-conformance.js';
export type { StoreConformanceOptions } from './store-conformance.js';
export type { StorePairFactory } from './store-conformance-presence.js';
export { describeTransportConformance } from './transport-conformance.js';
export type { TransportConformanceOptions } from './transport-conformance.js';
