/**
 * The HTTP API's run stream routes (docs/streams.md): the names of a run's streams, and one
 * stream followed as Server-Sent Events (run-stream-events.ts writes them, for the console's run
 * page too). Reads: allowed in read-only mode, admitted as every other route.
 */
import { checkStreamRequest, sendRunStreamEvents, streamStart } from '../run-stream-events.js';
import type { ApiRoute } from './run-routes.js';

export const STREAM_ROUTES: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/v1/runs/{runId}/streams',
    write: false,
    handle: async ({ client, params }) => {
      const runId = params['runId']!;
      // An unknown run is a 404 at once (client.streamNames would wait for a run just started).
      await client.describe(runId);
      return { status: 200, body: { streams: await client.streamNames(runId) } };
    },
  },
  {
    method: 'GET',
    path: '/v1/runs/{runId}/streams/{name}',
    write: false,
    handle: async ({ client, params, query, headers, signal, streamHeartbeatMs }) => {
      const runId = params['runId']!;
      const name = params['name']!;
      // Refusals first, as JSON errors: a bad `from` or Last-Event-ID, a bad name (400), no such run (404).
      const from = streamStart(query, headers);
      await checkStreamRequest(client, runId, name);
      return {
        status: 200,
        body: null,
        stream: (res, failure) =>
          sendRunStreamEvents(res, client, runId, name, {
            from,
            signal,
            failure,
            ...(streamHeartbeatMs !== undefined && { heartbeatMs: streamHeartbeatMs }),
          }),
      };
    },
  },
];
