/**
 * The OpenAPI document's run stream operations and shapes (stream-routes.ts, run-stream-events.ts),
 * spread into openapi.ts's document.
 */
import { COMMON, error, json, ref, response, runId } from './openapi-parts.js';

export const STREAM_PATHS = {
  '/v1/runs/{runId}/streams': {
    get: {
      operationId: 'listRunStreams',
      summary: "List a run's streams",
      description:
        'The names of the streams the run has written (`ctx.stream(name)`, `io.stream(name)`), in the ' +
        'order first written; none yet is an empty list (docs/streams.md).',
      parameters: [runId],
      responses: {
        '200': { description: 'The names.', ...json(ref('StreamNames')) },
        '404': response('NotFound'),
        ...COMMON,
      },
    },
  },
  '/v1/runs/{runId}/streams/{name}': {
    get: {
      operationId: 'followRunStream',
      summary: 'Follow a run stream as Server-Sent Events',
      description:
        'Sends the stream as it is written, each item once: one event per item, its `id` the sequence ' +
        'number, its `event` the kind (`chunk`, `reset`: the activity of step `step` started again and ' +
        'its earlier chunks are superseded, `close`), its `data` the item as JSON (`StreamItem`). Then ' +
        'one `end` event (`StreamEnd`, no id) once the stream was closed or the run finished, and the ' +
        'answer ends: a reader stops there (a browser: `EventSource.close()`, else it reconnects and ' +
        'gets the `end` again). A failure after the answer began is an `error` event (`Error`). A ' +
        'comment line `: keep-alive` comes every 15 s. To resume after a disconnect send ' +
        '`Last-Event-ID` (an EventSource does) or `?from=` the last id plus one. Allowed in read-only ' +
        'mode.',
      parameters: [
        runId,
        {
          name: 'name',
          in: 'path',
          required: true,
          description: "The stream's name: 1 to 64 letters, digits, `-` or `_`.",
          schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
        },
        {
          name: 'from',
          in: 'query',
          description: 'The first sequence number to send.',
          schema: { type: 'integer', minimum: 1, default: 1 },
        },
        {
          name: 'Last-Event-ID',
          in: 'header',
          description: 'The last id received: sending resumes after it (when later than `from`).',
          schema: { type: 'integer', minimum: 0 },
        },
      ],
      responses: {
        '200': {
          description:
            'The events, as the stream is written (`id: 3`, `event: chunk`, `data: {"seq":3,"kind":"chunk","value":"Hel"}`).',
          content: {
            'text/event-stream': {
              schema: { type: 'string' },
              examples: {
                tokens: {
                  value:
                    'retry: 2000\n\nid: 1\nevent: chunk\ndata: {"seq":1,"kind":"chunk","value":"Hel","step":2,"attempt":1}\n\n' +
                    'id: 2\nevent: close\ndata: {"seq":2,"kind":"close"}\n\nevent: end\ndata: {"reason":"closed"}\n\n',
                },
              },
            },
          },
        },
        '400': error(
          'A stream name the rule refuses (`BATON_CONFIG`), or a `from` or `Last-Event-ID` that is not a whole number (`BATON_BAD_REQUEST`).',
        ),
        '404': response('NotFound'),
        ...COMMON,
      },
    },
  },
} as const;

export const STREAM_SCHEMAS = {
  StreamNames: {
    type: 'object',
    required: ['streams'],
    properties: { streams: { type: 'array', items: { type: 'string' } } },
  },
  StreamItem: {
    type: 'object',
    required: ['seq', 'kind'],
    description: "The `data` of a `chunk`, `reset` or `close` event: one item of a run's stream.",
    properties: {
      seq: { type: 'integer', minimum: 1, description: 'The sequence number, 1, 2, 3… with no gaps.' },
      kind: { type: 'string', enum: ['chunk', 'reset', 'close'] },
      value: { description: 'A chunk: the value written, any JSON.' },
      step: {
        type: 'integer',
        description:
          "A chunk an activity wrote, or a reset: the activity's step. A reset supersedes that step's earlier chunks.",
      },
      attempt: { type: 'integer', description: 'A chunk an activity wrote, or a reset: the attempt.' },
    },
  },
  StreamEnd: {
    type: 'object',
    required: ['reason'],
    description: 'The `data` of the `end` event: why the stream is over.',
    properties: {
      reason: { type: 'string', enum: ['closed', 'run-finished'] },
      status: { type: 'string', description: "For `run-finished`: the run's status." },
    },
  },
} as const;
