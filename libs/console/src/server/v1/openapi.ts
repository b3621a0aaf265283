/**
 * The HTTP API's OpenAPI 3.1 document, served at `/v1/openapi.json` and checked in as
 * docs/openapi.json (`npm run api:update` rewrites it; openapi.spec.ts fails while the two differ,
 * and while a route of run-routes.ts and an operation here do not match one for one).
 *
 * Written by hand, next to the routes, as the contract a producer in another language codes
 * against: the shapes are views.ts's, the statuses api-errors.ts's.
 */
import { RUN_STATUSES } from '@baton/client';
import { MAX_BODY_BYTES } from '../http-kit.js';
import { SIGNATURE_HEADER, SIGNATURE_TOLERANCE_MS } from './webhook-signature.js';
import { COMMON, error, json, ref, response, runId } from './openapi-parts.js';
import { STREAM_PATHS, STREAM_SCHEMAS } from './openapi-streams.js';

/** The answers of every POST: a body too large, not JSON, or refused by read-only mode (403). */
const WRITES = { '400': response('BadRequest'), '413': response('TooLarge'), '415': response('NotJson') };

const promiseToken = {
  name: 'token',
  in: 'path',
  required: true,
  description:
    "The promise's token, as `p.token` gave it in the workflow (`bp_` and 32 characters): a secret.",
  schema: { type: 'string' },
};

const timeFilter = (description: string): object => ({
  in: 'query',
  description: `${description}: ms since the epoch (store clock) or an ISO 8601 date.`,
  schema: { type: 'string' },
});

const RUN_FIELDS = {
  runId: { type: 'string' },
  workflow: { type: 'string' },
  version: { type: 'integer', minimum: 1 },
  status: ref('RunStatus'),
  idempotencyKey: { type: ['string', 'null'] },
  createdAt: { type: 'integer', description: 'ms since the epoch, store clock' },
  updatedAt: { type: 'integer', description: 'ms since the epoch, store clock' },
  attempts: { type: 'integer', description: 'how many times the run was claimed (1 = never resumed)' },
};

export const OPENAPI_DOCUMENT = {
  openapi: '3.1.0',
  info: {
    title: 'Baton HTTP API',
    version: '1',
    description:
      'Start Baton workflow runs, read them, wait for their results, signal them, send them updates, ' +
      'ask their queries, follow their streams, cancel them and complete the durable promises they wait on, from any ' +
      'language. Served by `baton serve` beside a fleet (docs/http-api.md). Every error is ' +
      '`{ "error": { "code": "BATON_…", "message": "…" } }`; a 4xx is the caller\'s mistake, a 503 ' +
      '(with Retry-After) a store or bus that did not answer in time.',
  },
  servers: [{ url: '/' }],
  security: [{ bearerToken: [] }],
  paths: {
    '/v1/runs': {
      post: {
        operationId: 'startRun',
        summary: 'Start a run',
        description:
          "The input is checked against the workflow's input schema when this server loaded the " +
          'workflow (`baton serve --workflows`); otherwise the workflow must be registered by a live ' +
          'worker (or `allowUnregistered` be true) and the input is not checked here. With an ' +
          'idempotency key, a key that already names a run answers 200 with that run and sends nothing.',
        security: [{ bearerToken: [] }, { webhookSignature: [] }],
        parameters: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            description: "The same as the body's `idempotencyKey` (send one or the other).",
            schema: { type: 'string' },
          },
        ],
        requestBody: { required: true, ...json(ref('StartRequest')) },
        responses: {
          '201': { description: 'The start was sent.', ...json(ref('StartedRun')) },
          '200': {
            description: 'The idempotency key already names this run; nothing was sent.',
            ...json(ref('StartedRun')),
          },
          ...WRITES,
          '422': error(
            'Unknown workflow (`BATON_UNKNOWN_WORKFLOW`) or input that fails its schema (`BATON_INVALID_INPUT`, with `issues`).',
          ),
          ...COMMON,
        },
      },
      get: {
        operationId: 'listRuns',
        summary: 'List runs by filters, a page at a time',
        parameters: [
          {
            name: 'status',
            in: 'query',
            description: 'One status, or several comma-separated.',
            schema: { type: 'string' },
          },
          { name: 'workflow', in: 'query', schema: { type: 'string' } },
          { name: 'version', in: 'query', schema: { type: 'integer', minimum: 1 } },
          { name: 'runIdPrefix', in: 'query', schema: { type: 'string' } },
          { name: 'idempotencyKeyPrefix', in: 'query', schema: { type: 'string' } },
          {
            name: 'worker',
            in: 'query',
            description: "The worker holding the run's lease.",
            schema: { type: 'string' },
          },
          { name: 'createdAfter', ...timeFilter('Created at or after') },
          { name: 'createdBefore', ...timeFilter('Created before') },
          { name: 'updatedAfter', ...timeFilter('Updated at or after') },
          { name: 'updatedBefore', ...timeFilter('Updated before') },
          { name: 'order', in: 'query', schema: { type: 'string', enum: ['newest', 'oldest'] } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 50 } },
          {
            name: 'cursor',
            in: 'query',
            description: 'The `cursor` of the previous page, with the same filters and order.',
            schema: { type: 'string' },
          },
          {
            name: 'attr',
            in: 'query',
            description:
              'A search attribute the run holds (docs/search-attributes.md), repeatable, all must hold: ' +
              '`name=value` (a keyword), `name:number=42`, `name:boolean=true`, `name:time=<ISO 8601 or ms>`, ' +
              'or a range `name>=10` (also `>`, `<=`, `<`; a number, else a time, unless typed). The same ' +
              'as a parameter of its own: `attr.<name>[:<type>]=<value>` for equality, or with the value ' +
              'starting with the operator (`attr.total=>=100`). Percent-encode `=`, `<`, `>` in a value.',
            style: 'form',
            explode: true,
            schema: { type: 'array', items: { type: 'string' } },
            example: ['customerId=42', 'total>=100'],
          },
        ],
        responses: {
          '200': { description: 'One page of runs.', ...json(ref('RunPage')) },
          '400': response('BadRequest'),
          ...COMMON,
        },
      },
    },
    '/v1/runs/{runId}': {
      get: {
        operationId: 'describeRun',
        summary: 'Describe a run: its status, input, outcome and lease',
        parameters: [runId],
        responses: {
          '200': { description: 'The run.', ...json(ref('Run')) },
          '400': response('BadRequest'),
          '404': response('NotFound'),
          ...COMMON,
        },
      },
    },
    '/v1/runs/{runId}/result': {
      get: {
        operationId: 'runResult',
        summary: "Wait for a run's outcome (long poll)",
        parameters: [
          runId,
          {
            name: 'wait',
            in: 'query',
            description:
              'How long to wait for the run to finish, with its unit (`500ms`, `30s`, `1m`); longer ' +
              'waits are cut to 60 s. None: answer at once. A run not known yet (its start still ' +
              'queued) is waited for too.',
            schema: { type: 'string', examples: ['30s'] },
          },
        ],
        responses: {
          '200': { description: 'The run finished.', ...json(ref('RunOutcome')) },
          '202': { description: 'The run has not finished yet: ask again.', ...json(ref('RunPending')) },
          '400': response('BadRequest'),
          '404': response('NotFound'),
          ...COMMON,
        },
      },
    },
    '/v1/runs/{runId}/signals/{name}': {
      post: {
        operationId: 'signalRun',
        summary: 'Send a signal to a run',
        description:
          "The body is the signal's payload as it is (any JSON; none is null), so a webhook's event " +
          "can be posted here unchanged. `Idempotency-Key` becomes the signal's id: a repeat with the " +
          'same id is delivered once. A run that continued as new passes the signal on to its ' +
          'successor (the chain followed to the first run that keeps it).',
        security: [{ bearerToken: [] }, { webhookSignature: [] }],
        parameters: [
          runId,
          {
            name: 'name',
            in: 'path',
            required: true,
            description: 'The signal name.',
            schema: { type: 'string' },
          },
          {
            name: 'Idempotency-Key',
            in: 'header',
            description: 'The signal id, 1-200 printable characters.',
            schema: { type: 'string' },
          },
        ],
        requestBody: { required: false, content: { 'application/json': { schema: {} } } },
        responses: {
          '202': { description: 'The signal was sent.', ...json(ref('SignalSent')) },
          ...WRITES,
          '404': response('NotFound'),
          '409': response('Finished'),
          '422': error("The payload fails the signal's schema (`BATON_INVALID_INPUT`)."),
          ...COMMON,
        },
      },
    },
    '/v1/runs/{runId}/updates/{name}': {
      post: {
        operationId: 'updateRun',
        summary: "Send an update to a run and wait for its handler's answer",
        description:
          "The run's workflow answers the update with the handler it registered (`ctx.onUpdate`), after " +
          "checking it against the update's schema and validators; a refusal is journaled nowhere. The " +
          'update id (`updateId`, or `Idempotency-Key`; none: a new one) makes a repeat safe: the same ' +
          'id is applied once, and a repeat answers the kept outcome. A wait that runs out answers 202 ' +
          'with the id: the update still applies once; repeat the request with that id (docs/updates.md).',
        parameters: [
          runId,
          {
            name: 'name',
            in: 'path',
            required: true,
            description: 'The update name (`defineUpdate(name)`).',
            schema: { type: 'string' },
          },
          {
            name: 'Idempotency-Key',
            in: 'header',
            description: "The same as the body's `updateId` (send one or the other).",
            schema: { type: 'string' },
          },
        ],
        requestBody: { required: false, ...json(ref('UpdateRequest')) },
        responses: {
          '200': { description: 'The update was handled.', ...json(ref('UpdateOutcome')) },
          '202': {
            description: 'No answer within the wait: repeat with the same `updateId`.',
            ...json(ref('UpdatePending')),
          },
          ...WRITES,
          '404': error(
            'The store does not know the run (`BATON_NOT_FOUND`, `BATON_RUN_DELETED`), or its workflow has no handler of that name (`BATON_UPDATE_UNKNOWN`).',
          ),
          '409': error('The run has finished, or ended before it handled the update (`BATON_RUN_STATE`).'),
          '422': error(
            "The update's schema or a validator refused it; nothing was journaled (`BATON_UPDATE_REJECTED`).",
          ),
          ...COMMON,
        },
      },
    },
    '/v1/runs/{runId}/queries': {
      get: {
        operationId: 'listRunQueries',
        summary: 'List the query names a run registers',
        description:
          'The names of the query handlers the run registers (`ctx.onQuery`) where its code has reached, ' +
          'sorted; asked as a query is (its holder, else a replay), so it costs what a query costs.',
        parameters: [runId],
        responses: {
          '200': { description: 'The names.', ...json(ref('QueryNames')) },
          '404': response('NotFound'),
          '504': error('No worker answered within 10 s (`BATON_QUERY_TIMEOUT`).'),
          ...COMMON,
        },
      },
    },
    '/v1/runs/{runId}/queries/{name}': {
      post: {
        operationId: 'queryRun',
        summary: "Ask a run's query",
        description:
          "Answers the run's query handler (`ctx.onQuery`) with `args`, without changing the run " +
          '(docs/queries.md): the worker holding the run answers from its state in memory; a run nobody ' +
          'holds is answered by a worker that registers its workflow version, by replaying its journal. ' +
          'Allowed in read-only mode: a query writes nothing.',
        parameters: [
          runId,
          {
            name: 'name',
            in: 'path',
            required: true,
            description: 'The query name (`defineQuery(name)`).',
            schema: { type: 'string' },
          },
        ],
        requestBody: { required: false, ...json(ref('QueryRequest')) },
        responses: {
          '200': { description: "The handler's answer.", ...json(ref('QueryAnswer')) },
          '400': response('BadRequest'),
          '413': response('TooLarge'),
          '415': response('NotJson'),
          '404': error(
            'The store does not know the run (`BATON_NOT_FOUND`, `BATON_RUN_DELETED`), or the run has no ' +
              'handler of that name (`BATON_UNKNOWN_QUERY`, with `registered`: the names it has).',
          ),
          '422': error(
            'The handler failed: it threw, or called a ctx method (a handler only reads) (`BATON_QUERY_FAILED`, ' +
              "with `failure`: the handler's error).",
          ),
          '504': error('No worker answered within the timeout (`BATON_QUERY_TIMEOUT`).'),
          ...COMMON,
        },
      },
    },
    '/v1/runs/{runId}/streams': STREAM_PATHS['/v1/runs/{runId}/streams'],
    '/v1/runs/{runId}/streams/{name}': STREAM_PATHS['/v1/runs/{runId}/streams/{name}'],
    '/v1/promises/{token}/resolve': {
      post: {
        operationId: 'resolvePromise',
        summary: 'Resolve a durable promise by its token',
        description:
          "The body is the promise's value as it is (any JSON; none is null), so a webhook's event can be " +
          'posted here unchanged; the workflow awaiting the promise receives it. A promise completes ' +
          'once: the same completion again answers 200 as the first did (retry freely), another one is ' +
          'refused. A token is a secret: whoever has it may complete its promise (docs/promises.md).',
        security: [{ bearerToken: [] }, { webhookSignature: [] }],
        parameters: [promiseToken],
        requestBody: { required: false, content: { 'application/json': { schema: {} } } },
        responses: {
          '200': {
            description: 'The promise is resolved (now, or by the same call before).',
            ...json(ref('PromiseCompleted')),
          },
          ...WRITES,
          '404': response('UnknownToken'),
          '409': response('PromiseSettled'),
          '422': error(
            "The value fails the promise's schema (`BATON_INVALID_INPUT`, `field: value`, with `issues`), or has no JSON form (`BATON_UNENCODABLE`).",
          ),
          ...COMMON,
        },
      },
    },
    '/v1/promises/{token}/reject': {
      post: {
        operationId: 'rejectPromise',
        summary: 'Reject a durable promise by its token',
        description:
          'The workflow awaiting the promise gets a PromiseRejectedError carrying this name, message and ' +
          'code. The same rejection again answers 200 as the first did; another completion is refused.',
        security: [{ bearerToken: [] }, { webhookSignature: [] }],
        parameters: [promiseToken],
        requestBody: { required: true, ...json(ref('PromiseRejection')) },
        responses: {
          '200': {
            description: 'The promise is rejected (now, or by the same call before).',
            ...json(ref('PromiseCompleted')),
          },
          ...WRITES,
          '404': response('UnknownToken'),
          '409': response('PromiseSettled'),
          ...COMMON,
        },
      },
    },
    '/v1/runs/{runId}/cancel': {
      post: {
        operationId: 'cancelRun',
        summary: 'Cancel a run',
        description:
          'The run stops at its next step and ends `cancelled`. A run that continued as new passes the ' +
          "cancel on to its successor, and so on to the chain's current run.",
        security: [{ bearerToken: [] }, { webhookSignature: [] }],
        parameters: [runId],
        requestBody: { required: false, ...json(ref('CancelRequest')) },
        responses: {
          '202': { description: 'The cancel was requested.', ...json(ref('CancelRequested')) },
          ...WRITES,
          '404': response('NotFound'),
          '409': response('Finished'),
          ...COMMON,
        },
      },
    },
    '/v1/webhooks/{name}': {
      post: {
        operationId: 'deliverWebhook',
        summary: 'Deliver a webhook to a handler declared in code',
        description:
          'A sender (a payment provider, a repository host, a system of your own) posts its event to ' +
          'a webhook a module given to the server declares (`defineWebhook`, docs/webhooks.md). The ' +
          "webhook's own check admits it (an HMAC signature in the sender's layout: Baton's, Stripe's, " +
          "Standard Webhooks' or GitHub's), not the bearer token; any body is taken as its bytes. Its " +
          'route makes one action of it: start a run, signal one, resolve or reject a durable promise, ' +
          'or nothing. A repeated delivery (same delivery id) makes no second effect and answers 2xx.',
        security: [{}],
        parameters: [
          {
            name: 'name',
            in: 'path',
            required: true,
            description: "The webhook's name, as `defineWebhook({ name })` gave it.",
            schema: { type: 'string' },
          },
        ],
        requestBody: { required: false, content: { '*/*': { schema: {} } } },
        responses: {
          '201': { description: 'A run was started.', ...json(ref('WebhookDelivered')) },
          '202': { description: 'A signal was sent to the run.', ...json(ref('WebhookDelivered')) },
          '200': {
            description:
              'A repeat of a start (the same run, `created: false`), a promise completed, an event the ' +
              'webhook ignores, or a signal to a finished run (`dropped`).',
            ...json(ref('WebhookDelivered')),
          },
          '400': response('BadRequest'),
          '401': error("The webhook's check refused the delivery's signature (`BATON_BAD_SIGNATURE`)."),
          '403': response('Forbidden'),
          '404': error(
            'No webhook of this name is served (`BATON_NO_WEBHOOK`), or the run a signal names is unknown (`BATON_NOT_FOUND`).',
          ),
          '409': response('PromiseSettled'),
          '413': response('TooLarge'),
          '422': error(
            'The route refused the delivery (`BATON_WEBHOOK_REFUSED`), or the start or value it made fails its schema (`BATON_INVALID_INPUT`).',
          ),
          '500': error(
            "The webhook's route threw, or returned no action it knows (`BATON_WEBHOOK_ROUTE_FAILED`): the server's code to fix; retry after.",
          ),
          '503': response('Unavailable'),
        },
      },
    },
  },
  components: {
    securitySchemes: {
      bearerToken: {
        type: 'http',
        scheme: 'bearer',
        description:
          "The console's access token (BATON_CONSOLE_TOKEN). Behind an authenticating proxy, the " +
          'header BATON_CONSOLE_TRUSTED_HEADER names admits instead; with neither set the server ' +
          'listens on loopback and admits requests for localhost. A console session cookie is not accepted.',
      },
      webhookSignature: {
        type: 'apiKey',
        in: 'header',
        name: 'Baton-Signature',
        description:
          `A POST signed with a secret of BATON_API_WEBHOOK_SECRET: \`t=<unix seconds>,v1=<hex ` +
          `HMAC-SHA256(secret, "<t>.<raw body>")>\`, the timestamp within ${SIGNATURE_TOLERANCE_MS / 60_000} ` +
          `minutes of the server's clock (header ${SIGNATURE_HEADER}).`,
      },
    },
    responses: {
      BadRequest: error(
        'The request is malformed: a body that is not JSON, an unknown or mistyped field, a bad filter or duration (`BATON_BAD_REQUEST`, `BATON_CONFIG`).',
      ),
      Unauthorized: error(
        'No valid token, trusted header or webhook signature (`BATON_UNAUTHORIZED`, `BATON_BAD_SIGNATURE`).',
      ),
      Forbidden: error(
        'Refused: the server is read-only (`BATON_READ_ONLY`), a cross-site request, or a Host beyond loopback without a token (`BATON_FORBIDDEN`).',
      ),
      NotFound: error(
        'The store does not know the run (`BATON_NOT_FOUND`), or its retention deleted it (`BATON_RUN_DELETED`).',
      ),
      Finished: error('The run has finished, and did not continue as new (`BATON_RUN_STATE`).'),
      UnknownToken: error(
        'No durable promise has this token (`BATON_NOT_FOUND`): never made, mistyped, or deleted with its run.',
      ),
      PromiseSettled: error(
        'The promise was completed otherwise before, timed out, or its run finished (`BATON_RUN_STATE`).',
      ),
      TooLarge: error(`The body is over ${MAX_BODY_BYTES} bytes (\`BATON_TOO_LARGE\`).`),
      NotJson: error('The body is not JSON (`BATON_UNSUPPORTED_MEDIA_TYPE`).'),
      TooManyWrongTokens: {
        description: 'Too many wrong tokens from this address: try again after Retry-After seconds.',
        headers: { 'Retry-After': { schema: { type: 'integer' } } },
        ...json(ref('Error')),
      },
      Unavailable: {
        description: 'The store or the bus did not answer in time: try again after Retry-After seconds.',
        headers: { 'Retry-After': { schema: { type: 'integer' } } },
        ...json(ref('Error')),
      },
      InternalError: error('A fault of the server (`BATON_INTERNAL`), never a mistake of the caller.'),
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code', 'message'],
            properties: {
              code: { type: 'string', examples: ['BATON_NOT_FOUND'] },
              message: { type: 'string' },
              field: { type: 'string', description: 'For BATON_INVALID_INPUT: what was refused.' },
              registered: {
                type: 'array',
                items: { type: 'string' },
                description: 'For BATON_UNKNOWN_QUERY: the query names the run registers.',
              },
              failure: {
                ...ref('ErrorInfo'),
                description: "For BATON_QUERY_FAILED: the query handler's error.",
              },
              issues: {
                type: 'array',
                items: { type: 'string' },
                description:
                  "For BATON_INVALID_INPUT: each problem as `$.path: message`, in the schema's order.",
              },
            },
          },
        },
      },
      StartRequest: {
        type: 'object',
        required: ['workflow'],
        additionalProperties: false,
        properties: {
          workflow: { type: 'string', description: 'The workflow name.' },
          version: {
            type: 'integer',
            minimum: 1,
            description:
              'The version; none: the highest loaded here, else the highest a live worker registers.',
          },
          input: { description: "The run's input, any JSON." },
          idempotencyKey: {
            type: 'string',
            description: 'The same key, for the same workflow, always names the same run.',
          },
          allowUnregistered: {
            type: 'boolean',
            default: false,
            description: 'Start a version no live worker registers (it waits for one).',
          },
        },
      },
      StartedRun: { type: 'object', required: ['runId'], properties: { runId: { type: 'string' } } },
      RunStatus: { type: 'string', enum: [...RUN_STATUSES] },
      ErrorInfo: {
        type: 'object',
        required: ['name', 'message'],
        properties: { name: { type: 'string' }, message: { type: 'string' }, code: { type: 'string' } },
      },
      RunSummary: {
        type: 'object',
        required: [...Object.keys(RUN_FIELDS), 'owner'],
        properties: {
          ...RUN_FIELDS,
          attributes: ref('Attributes'),
          owner: { type: ['string', 'null'], description: "The worker holding the run's lease now." },
        },
      },
      Attributes: {
        type: 'object',
        description:
          "The run's search attributes by name (`ctx.setAttributes`); absent when it set none. A time's " +
          'value is ms since the epoch.',
        additionalProperties: {
          type: 'object',
          required: ['type', 'value'],
          properties: {
            type: { type: 'string', enum: ['keyword', 'number', 'boolean', 'time'] },
            value: { type: ['string', 'number', 'boolean'] },
          },
        },
      },
      Run: {
        type: 'object',
        required: [...Object.keys(RUN_FIELDS), 'lease'],
        properties: {
          ...RUN_FIELDS,
          attributes: ref('Attributes'),
          input: { description: "The run's input." },
          result: { description: 'Set when completed.' },
          error: { ...ref('ErrorInfo'), description: 'Set when failed or cancelled.' },
          parent: {
            type: 'object',
            description: 'For a child workflow: the parent run and the step that started it.',
            properties: { runId: { type: 'string' }, seq: { type: 'integer' } },
          },
          forkedFrom: {
            type: 'object',
            properties: {
              runId: { type: 'string' },
              checkpoint: { type: 'integer' },
              journalPosition: { type: 'integer' },
            },
          },
          lease: {
            oneOf: [
              { type: 'null' },
              {
                type: 'object',
                required: ['state', 'epoch', 'owner', 'expiresAt', 'cancelRequested', 'pauseRequested'],
                properties: {
                  state: { type: 'string' },
                  epoch: { type: 'integer' },
                  owner: { type: ['string', 'null'] },
                  expiresAt: { type: ['integer', 'null'] },
                  cancelRequested: { type: 'boolean' },
                  pauseRequested: { type: 'boolean' },
                },
              },
            ],
          },
        },
      },
      RunPage: {
        type: 'object',
        required: ['runs'],
        properties: {
          runs: { type: 'array', items: ref('RunSummary') },
          cursor: { type: 'string', description: 'Where the next page starts; absent on the last page.' },
        },
      },
      RunOutcome: {
        oneOf: [
          {
            type: 'object',
            required: ['runId', 'status', 'result'],
            properties: { runId: { type: 'string' }, status: { const: 'completed' }, result: {} },
          },
          {
            type: 'object',
            required: ['runId', 'status', 'error'],
            properties: {
              runId: { type: 'string' },
              status: { type: 'string', enum: ['failed', 'cancelled'] },
              error: ref('ErrorInfo'),
            },
          },
        ],
      },
      RunPending: {
        type: 'object',
        required: ['runId', 'status'],
        properties: {
          runId: { type: 'string' },
          status: { type: 'string', enum: ['pending', 'running', 'suspended', 'paused'] },
        },
      },
      SignalSent: {
        type: 'object',
        required: ['runId', 'signal'],
        properties: { runId: { type: 'string' }, signal: { type: 'string' } },
      },
      UpdateRequest: {
        type: 'object',
        additionalProperties: false,
        properties: {
          args: { description: "The update's arguments, any JSON; none is null." },
          updateId: {
            type: 'string',
            minLength: 1,
            maxLength: 256,
            description: 'The update id: the same id is applied once. None: a new one (answered back).',
          },
          timeoutMs: {
            type: 'integer',
            minimum: 0,
            default: 30_000,
            description: 'How long to wait for the answer (ms); longer waits are cut to 60 s.',
          },
        },
      },
      UpdateOutcome: {
        oneOf: [
          {
            type: 'object',
            required: ['runId', 'updateId', 'status', 'result'],
            properties: {
              runId: { type: 'string' },
              updateId: { type: 'string' },
              status: { const: 'completed' },
              result: { description: "The handler's result." },
            },
          },
          {
            type: 'object',
            required: ['runId', 'updateId', 'status', 'error'],
            properties: {
              runId: { type: 'string' },
              updateId: { type: 'string' },
              status: { const: 'failed' },
              error: { ...ref('ErrorInfo'), description: 'What the handler threw.' },
            },
          },
        ],
      },
      UpdatePending: {
        type: 'object',
        required: ['runId', 'updateId', 'status'],
        properties: { runId: { type: 'string' }, updateId: { type: 'string' }, status: { const: 'pending' } },
      },
      PromiseCompleted: {
        type: 'object',
        required: ['status'],
        properties: { status: { type: 'string', enum: ['resolved', 'rejected'] } },
      },
      PromiseRejection: {
        type: 'object',
        required: ['message'],
        additionalProperties: false,
        properties: {
          message: { type: 'string', minLength: 1, description: 'Why the promise is rejected.' },
          name: { type: 'string', default: 'Error' },
          code: { type: 'string' },
        },
      },
      QueryRequest: {
        type: 'object',
        additionalProperties: false,
        properties: {
          args: { description: "The query's arguments, any JSON; none for a query that takes none." },
          timeoutMs: {
            type: 'integer',
            minimum: 1,
            default: 10_000,
            description: "How long to wait for the answer, cut to the server's longest wait.",
          },
        },
      },
      QueryNames: {
        type: 'object',
        required: ['names'],
        properties: { names: { type: 'array', items: { type: 'string' } } },
      },
      QueryAnswer: {
        type: 'object',
        required: ['result'],
        properties: { result: { description: "The handler's answer (null for none)." } },
      },
      WebhookDelivered: {
        type: 'object',
        required: ['webhook', 'deliveryId', 'action'],
        properties: {
          webhook: { type: 'string' },
          deliveryId: {
            type: 'string',
            description: "The delivery's id: repeats of one delivery share it (docs/webhooks.md).",
          },
          action: { type: 'string', enum: ['start', 'signal', 'resolve', 'reject', 'ignore'] },
          runId: { type: 'string' },
          created: { type: 'boolean', description: 'A start: false when the delivery was seen before.' },
          signal: { type: 'string' },
          dropped: { type: 'string', description: 'A signal to a finished run: not sent, and why.' },
          status: { type: 'string', enum: ['resolved', 'rejected'] },
          reason: { type: 'string', description: 'Why an ignored event was ignored.' },
        },
      },
      CancelRequest: {
        type: 'object',
        additionalProperties: false,
        properties: { reason: { type: 'string' } },
      },
      StreamNames: STREAM_SCHEMAS.StreamNames,
      StreamItem: STREAM_SCHEMAS.StreamItem,
      StreamEnd: STREAM_SCHEMAS.StreamEnd,
      CancelRequested: {
        type: 'object',
        required: ['runId', 'status'],
        properties: { runId: { type: 'string' }, status: { const: 'cancel-requested' } },
      },
    },
  },
} as const;
