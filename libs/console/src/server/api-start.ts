/**
 * The start page's and the versions page's API: which workflow versions a run can be started of
 * (those the console loaded with `--workflows`, with their input's JSON Schema when the schema has
 * one, and those the live workers register, without), the start itself (an action: refused in
 * read-only mode and without a valid CSRF token before it gets here), and per workflow version the
 * work that needs it and the live workers that can take it (client.fleet.versions, what
 * `baton versions` prints).
 *
 * The workers do not report their workflows' input schemas, so a version only they register has
 * no form: the page falls back to a JSON editor and the workers check the input when they start
 * the run. A start of a loaded version is checked against its schema here, before anything is
 * sent: a refusal is a 422 with the schema's `issues` (`$.path: message`) for the page to show
 * beside its fields.
 */
import { InvalidInputError, type AnyWorkflowDefinition } from '@baton/core';
import { bodyObject, HttpError, optionalString, type Route } from './http-kit.js';
import { ApiError } from './v1/api-errors.js';
import { startRun, type StartRequest } from './v1/start-run.js';

/** One workflow version a run can be started of, as the start page lists it. */
export interface StartableVersion {
  name: string;
  version: number;
  /** Registered by a live worker that is not draining. */
  live: boolean;
  /** Loaded by this console (`--workflows`): its starts are checked against its input schema here. */
  loaded: boolean;
  /** Its input's JSON Schema (draft-07), when loaded and its schema library writes one. */
  inputSchema?: Record<string, unknown>;
}

/** The JSON Schema of a definition's input (Standard JSON Schema), or undefined when it has none. */
export function inputJsonSchemaOf(definition: AnyWorkflowDefinition): Record<string, unknown> | undefined {
  const standard = (definition.input as { '~standard'?: { jsonSchema?: { input?: unknown } } } | undefined)?.[
    '~standard'
  ];
  const convert = standard?.jsonSchema?.input;
  if (typeof convert !== 'function') return undefined;
  try {
    const json = (convert as (options: { target: string }) => unknown)({ target: 'draft-07' });
    return typeof json === 'object' && json !== null && !Array.isArray(json)
      ? (json as Record<string, unknown>)
      : undefined;
  } catch {
    // A schema of types JSON cannot describe (dates, maps): the page offers the JSON editor.
    return undefined;
  }
}

/** The start request a form sends, checked for types. */
function startRequestOf(body: unknown): StartRequest {
  const fields = bodyObject(body);
  const workflow = optionalString(fields, 'workflow');
  if (workflow === undefined) throw new HttpError(400, "a start needs a 'workflow' (its name)");
  const version = fields['version'];
  if (version !== undefined && (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1))
    throw new HttpError(400, "'version' must be a whole number ≥ 1");
  const idempotencyKey = optionalString(fields, 'idempotencyKey');
  return {
    workflow,
    ...(version !== undefined && { version }),
    ...('input' in fields && { input: fields['input'] }),
    ...(idempotencyKey !== undefined && { idempotencyKey }),
  };
}

export const START_ROUTES: Route[] = [
  {
    method: 'GET',
    path: /^\/api\/startable$/,
    handle: async ({ client, workflows }) => {
      const byKey = new Map<string, StartableVersion>();
      for (const definition of workflows.definitions) {
        const schema = inputJsonSchemaOf(definition);
        byKey.set(`${definition.name}@${definition.version}`, {
          name: definition.name,
          version: definition.version,
          live: false,
          loaded: true,
          ...(schema !== undefined && { inputSchema: schema }),
        });
      }
      for (const worker of await client.fleet.workers()) {
        if (worker.draining || worker.connected === false) continue;
        for (const wf of worker.workflows) {
          for (const version of wf.versions) {
            const key = `${wf.name}@${version}`;
            const known = byKey.get(key);
            if (known !== undefined) known.live = true;
            else byKey.set(key, { name: wf.name, version, live: true, loaded: false });
          }
        }
      }
      return [...byKey.values()].sort((a, b) =>
        a.name === b.name ? b.version - a.version : a.name < b.name ? -1 : 1,
      );
    },
  },
  {
    method: 'POST',
    path: /^\/api\/start$/,
    action: true,
    handle: async ({ client, workflows, body }) => {
      const request = startRequestOf(body);
      try {
        const started = await startRun(client, workflows, request);
        return {
          done: started.created
            ? `started run ${started.runId}`
            : `the idempotency key already names run ${started.runId}: nothing new was started`,
          ...started,
        };
      } catch (err) {
        if (err instanceof InvalidInputError)
          throw new HttpError(422, err.message, { issues: [...err.issues], field: err.field });
        if (err instanceof ApiError) throw new HttpError(err.status, err.message, err.details);
        throw err;
      }
    },
  },
  {
    method: 'GET',
    path: /^\/api\/versions$/,
    handle: ({ client, query }) => {
      const workflow = query.get('workflow');
      return client.fleet.versions(workflow ? { workflow } : {});
    },
  },
];
