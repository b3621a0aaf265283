/**
 * A compile-time guard, no code: the shapes the page writes out itself (web/src/types.ts; the
 * client's it imports as types) must stay assignable from what the server sends as JSON. A field
 * renamed or retyped on the server fails `npm run typecheck` here instead of showing up as a blank
 * cell in a browser.
 */
import type * as Web from '../../web/src/types.js';
import type * as Metrics from './metrics-history.js';
import type * as Dev from './dev-report.js';

/** Compiles only when `Sent` can be read as `Read`. */
type Readable<Read, Sent extends Read> = [Read, Sent];

export type WebTypesMatchTheServer = [
  Readable<Web.MetricsHistorySnapshot, Metrics.MetricsHistorySnapshot>,
  Readable<Web.DevReport, Dev.DevReport>,
];
