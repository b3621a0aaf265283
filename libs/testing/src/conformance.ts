/**
 * The conformance suites, for adapters' specs: `describeStoreConformance` and
 * `describeTransportConformance`.
 */
export { describeStoreConformance } from './store-conformance.js';
export { describeTransportConformance } from './transport-conformance.js';
export type { TransportConformanceOptions } from './transport-conformance.js';
