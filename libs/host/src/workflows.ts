/**
 * Loads the workflow modules named by BATON_WORKFLOWS and collects every workflow definition they
 * export (named exports, the default export, and arrays of definitions); for a server (`baton
 * serve`, `baton dev`), the webhooks they export too.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, type AnyWorkflowDefinition } from '@baton/core';
import { isWebhook, type WebhookDefinition } from '@baton/client/webhooks';
import { ENV } from './config.js';

function isWorkflow(value: unknown): value is AnyWorkflowDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'workflow' &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { run?: unknown }).run === 'function'
  );
}

/** Paths (./x, ../x, /x) resolve from the working directory; anything else is a package name. */
function importTarget(specifier: string, cwd: string): string {
  if (specifier.startsWith('.') || isAbsolute(specifier)) {
    return pathToFileURL(resolve(cwd, specifier)).href;
  }
  return specifier;
}

/**
 * What to do about a module that did not load. Node resolves `@baton/*` to the packages' built
 * `dist` unless the `@baton/source` condition is on, so a clone that was never built fails on a
 * `dist` file that does not exist: name both ways out (docs/workflows.md, "Your own workflow module").
 */
function loadHint(err: unknown): string {
  const message = (err as Error).message ?? '';
  if (
    (err as Error).name === 'SyntaxError' ||
    (err as { code?: unknown }).code === 'ERR_INVALID_TYPESCRIPT_SYNTAX'
  )
    return 'fix the syntax error in the module or a file it imports';
  if (
    (err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' &&
    /@baton[/\\].*[/\\]dist[/\\]/.test(message)
  ) {
    return (
      'the @baton packages are not built: run `npm run build`, or run the worker on the TypeScript ' +
      'sources with `npm run worker` (node --import tsx --conditions=@baton/source)'
    );
  }
  return 'check the path (relative paths start at the working directory) and that it is built';
}

/** Where a definition came from, for errors: the module and the export (with an array's index). */
interface Origin {
  definition: AnyWorkflowDefinition;
  from: string;
}

/**
 * Imports `modules` (paths resolve from `cwd`; anything else is a package name) and returns every
 * workflow definition they export, one per name@version. ConfigError, starting with `source` (what
 * named the modules: the worker's BATON_WORKFLOWS, a command's flag), for a module that does not
 * load, one that exports no workflow, and two different definitions of one name@version.
 */
export async function loadWorkflows(
  modules: readonly string[],
  cwd: string = process.cwd(),
  source: string = ENV.workflows,
): Promise<AnyWorkflowDefinition[]> {
  return (await loadModules(modules, cwd, source, { webhooks: false })).workflows;
}

/** What the modules given to a server (`baton serve`, `baton dev`) export. */
export interface LoadedModules {
  workflows: AnyWorkflowDefinition[];
  /** Webhooks (`defineWebhook`, @baton/client/webhooks), one per name. */
  webhooks: WebhookDefinition[];
}

/**
 * As {@link loadWorkflows}, and with `webhooks` (a server's modules) also every webhook the
 * modules export: then a module may export webhooks only, and two different webhooks of one name
 * are refused as two workflows of one name@version are.
 */
export async function loadModules(
  modules: readonly string[],
  cwd: string = process.cwd(),
  source: string = ENV.workflows,
  options: { webhooks: boolean } = { webhooks: true },
): Promise<LoadedModules> {
  const found = new Map<string, Origin>();
  const hooks = new Map<string, { webhook: WebhookDefinition; from: string }>();
  for (const specifier of modules) {
    let exports: Record<string, unknown>;
    try {
      exports = (await import(importTarget(specifier, cwd))) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(
        `${source}: module '${specifier}' could not be loaded (${(err as Error).message}); ` + loadHint(err),
        { cause: err },
      );
    }
    let exported = 0;
    for (const [name, value] of Object.entries(exports)) {
      const candidates = Array.isArray(value)
        ? value.map((item: unknown, i) => [item, `export '${name}'[${i}]`] as const)
        : [[value, `export '${name}'`] as const];
      for (const [candidate, where] of candidates) {
        const from = `module '${specifier}' ${where}`;
        if (isWorkflow(candidate)) {
          exported++;
          addDefinition(found, candidate, from, source);
        } else if (options.webhooks && isWebhook(candidate)) {
          exported++;
          const first = hooks.get(candidate.name);
          if (first !== undefined && first.webhook !== candidate)
            throw new ConfigError(
              `${source}: webhook '${candidate.name}' has two different definitions, ${first.from} and ${from}; ` +
                'a webhook name must have exactly one: remove one, or rename it',
            );
          hooks.set(candidate.name, { webhook: candidate, from });
        }
      }
    }
    if (exported === 0) {
      throw new ConfigError(
        options.webhooks
          ? `${source}: module '${specifier}' exports no workflow and no webhook; export the result of defineWorkflow() or defineWebhook()`
          : `${source}: module '${specifier}' exports no workflow; export the result of defineWorkflow()`,
      );
    }
  }
  return {
    workflows: [...found.values()].map((origin) => origin.definition),
    webhooks: [...hooks.values()].map((h) => h.webhook),
  };
}

/**
 * Keeps one definition per name@version. The same object exported twice (a default export that is
 * also named, a module listed twice) is one workflow; two different objects are refused, naming
 * both: only one of them would run, chosen by the order of the exports.
 */
function addDefinition(
  found: Map<string, Origin>,
  definition: AnyWorkflowDefinition,
  from: string,
  source: string,
): void {
  const key = `${definition.name}@${definition.version}`;
  const first = found.get(key);
  if (first === undefined) {
    found.set(key, { definition, from });
    return;
  }
  if (first.definition === definition) return;
  throw new ConfigError(
    `${source}: workflow ${key} has two different definitions, ${first.from} and ${from}; ` +
      'a name@version must have exactly one: remove one, or give the changed one a new version',
  );
}
