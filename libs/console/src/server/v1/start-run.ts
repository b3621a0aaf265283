/**
 * `POST /v1/runs`: which workflow version a start names, whether its input passes the workflow's
 * schema, and whether its idempotency key already names a run.
 *
 * Which version, and whether the name is known:
 * 1. A workflow this server loaded (`baton serve --workflows`): the version given, or the highest
 *    loaded one; its input is checked against its schema (client.start does, with the definition).
 * 2. Otherwise the live workers' reports (client.fleet.workers, as `baton runs start` checks): the
 *    version given if a live worker registers it, or the highest one they register. The input is
 *    not checked (this server has no schema for it). A version no live worker registers is refused
 *    unless the start says `allowUnregistered` (a fleet that is not up yet: the run waits for a
 *    worker of its version, and is dead-lettered unknown-workflow after the workers' grace).
 *
 * Idempotency: a start with a key names its run before it is sent (client.runIdForKey). When the
 * store knows that run, nothing is sent and the answer is 200 with it; otherwise the start is sent
 * and the answer is 201. A repeat that arrives while the first start still waits in the run queue
 * (no worker took it yet) is sent again and answered 201 with the same run id: the workers still
 * make one run of it (the store de-duplicates by key), and the caller cannot tell the difference.
 */
import type { AnyWorkflowDefinition } from '@baton/core';
import { NotFoundError } from '@baton/core';
import type { Client, FleetWorker } from '@baton/client';
import { API_CODES, ApiError } from './api-errors.js';

/** How long a version found registered is taken as registered without asking the store again. */
export const REGISTERED_CACHE_MS = 2_000;

/** A start as the body of `POST /v1/runs` gives it, checked for types. */
export interface StartRequest {
  workflow: string;
  version?: number;
  input?: unknown;
  idempotencyKey?: string;
  allowUnregistered?: boolean;
}

/** What a start resolved to: the version to send, and the definition when this server loaded it. */
export interface ResolvedWorkflow {
  name: string;
  version: number;
  definition?: AnyWorkflowDefinition;
}

/** The answer of a start: created (201) or the run the key already named (200). */
export interface StartOutcome {
  runId: string;
  created: boolean;
}

/** Live: reporting, not draining (it takes nothing new), and its presence up where the store tells. */
function live(worker: FleetWorker): boolean {
  return !worker.draining && worker.connected !== false;
}

/** The workflows a start may name: those this server loaded, then those the live workers register. */
export class WorkflowCatalog {
  /** Loaded definitions by name, then version. */
  private readonly loaded = new Map<string, Map<number, AnyWorkflowDefinition>>();
  /** `name@version` found registered by a live worker, and when. */
  private readonly registered = new Map<string, number>();

  constructor(
    definitions: readonly AnyWorkflowDefinition[],
    private readonly fleet: () => Promise<FleetWorker[]>,
    private readonly now: () => number = Date.now,
  ) {
    this.replace(definitions);
  }

  /** Serves `definitions` from now on instead of the loaded ones (`baton dev` after a reload). */
  replace(definitions: readonly AnyWorkflowDefinition[]): void {
    this.loaded.clear();
    for (const definition of definitions) {
      const versions = this.loaded.get(definition.name) ?? new Map<number, AnyWorkflowDefinition>();
      versions.set(definition.version, definition);
      this.loaded.set(definition.name, versions);
    }
  }

  /** The loaded workflows as `name@version`, sorted (the log line of `baton serve`). */
  get loadedKeys(): string[] {
    return [...this.loaded.values()]
      .flatMap((versions) => [...versions.values()].map((d) => `${d.name}@${d.version}`))
      .sort();
  }

  /** The loaded definitions (the console's start form reads their input schemas). */
  get definitions(): AnyWorkflowDefinition[] {
    return [...this.loaded.values()].flatMap((versions) => [...versions.values()]);
  }

  /** The version a start sends, and its definition when loaded here; ApiError when unknown. */
  async resolve(request: StartRequest): Promise<ResolvedWorkflow> {
    const { workflow: name, version } = request;
    const loaded = this.loaded.get(name);
    if (loaded !== undefined) {
      const chosen = version ?? Math.max(...loaded.keys());
      const definition = loaded.get(chosen);
      if (definition !== undefined) return { name, version: chosen, definition };
    }
    if (version !== undefined && this.recentlyRegistered(`${name}@${version}`)) return { name, version };
    const versions = await this.liveVersions(name);
    for (const v of versions) this.registered.set(`${name}@${v}`, this.now());
    if (version === undefined) {
      const highest = versions.at(-1);
      if (highest !== undefined) return { name, version: highest };
      throw new ApiError(
        API_CODES.unknownWorkflow,
        `workflow '${name}' is not loaded by this server and no live worker registers it: ` +
          `check the name, or give its version to start it for a fleet that is not up yet ` +
          `(with allowUnregistered: true)`,
      );
    }
    if (versions.includes(version) || request.allowUnregistered === true) return { name, version };
    const found =
      versions.length > 0
        ? `the live workers register ${name}@${versions.join(',')}`
        : loaded !== undefined
          ? `this server loaded ${name}@${[...loaded.keys()].sort((a, b) => a - b).join(',')}`
          : `neither this server nor any live worker has workflow '${name}'`;
    throw new ApiError(
      API_CODES.unknownWorkflow,
      `no live worker registers ${name}@${version} (${found}), so nothing was sent; deploy a worker ` +
        'with it, or send allowUnregistered: true to start it anyway (it waits for such a worker, and ' +
        "is dead-lettered unknown-workflow after the workers' missing-version grace)",
    );
  }

  private recentlyRegistered(key: string): boolean {
    const at = this.registered.get(key);
    return at !== undefined && this.now() - at < REGISTERED_CACHE_MS;
  }

  private async liveVersions(name: string): Promise<number[]> {
    const versions = new Set<number>();
    for (const worker of (await this.fleet()).filter(live)) {
      for (const w of worker.workflows) if (w.name === name) w.versions.forEach((v) => versions.add(v));
    }
    return [...versions].sort((a, b) => a - b);
  }
}

/** True when the store knows the run (a run it deleted or lost is not known: it may start again). */
async function runExists(client: Client, runId: string): Promise<boolean> {
  try {
    await client.describe(runId);
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

/**
 * Starts the run a request names, or finds the one its key already named. The input is checked
 * against the loaded definition's schema (InvalidInputError: a 422 with the issues).
 */
export async function startRun(
  client: Client,
  catalog: WorkflowCatalog,
  request: StartRequest,
): Promise<StartOutcome> {
  const workflow = await catalog.resolve(request);
  const { idempotencyKey } = request;
  if (idempotencyKey !== undefined) {
    const runId = client.runIdForKey(workflow.name, idempotencyKey);
    if (await runExists(client, runId)) return { runId, created: false };
  }
  const options = idempotencyKey === undefined ? {} : { idempotencyKey };
  const handle =
    workflow.definition !== undefined
      ? await client.start(workflow.definition, request.input as never, options)
      : await client.start({ name: workflow.name, version: workflow.version }, request.input, options);
  return { runId: handle.runId, created: true };
}
