/**
 * A compile-time guard, no code: the page's own copies of the API's shapes
 * (web/src/types.ts, written out so the browser program needs no Node types) must stay
 * assignable from the `@baton/client` types the server sends as JSON. A field renamed or retyped
 * in the client fails `npm run typecheck` here instead of showing up as a blank cell in a browser.
 */
import type * as Client from '@baton/client';
import type * as Web from '../../web/src/types.js';
import type * as Metrics from './metrics-history.js';

/** Compiles only when `Sent` can be read as `Read`. */
type Readable<Read, Sent extends Read> = [Read, Sent];

export type WebTypesMatchTheClient = [
  Readable<Web.RunPage, Client.RunPage>,
  Readable<Web.RunCounts, Client.RunCounts>,
  Readable<Web.RunDescription, Client.RunDescription>,
  Readable<Web.RunTimeline, Client.RunTimeline>,
  Readable<Web.FleetWorker, Client.FleetWorker>,
  Readable<Web.FleetBacklog, Client.FleetBacklog>,
  Readable<Web.MetricsHistorySnapshot, Metrics.MetricsHistorySnapshot>,
];
