/**
 * Loads the workflow modules named by BATON_WORKFLOWS and collects every workflow definition they
 * export (named exports, the default export, and arrays of definitions).
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, type AnyWorkflowDefinition } from '@baton/core';
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

export async function loadWorkflows(
  modules: readonly string[],
  cwd: string = process.cwd(),
): Promise<AnyWorkflowDefinition[]> {
  const found = new Map<string, AnyWorkflowDefinition>();
  for (const specifier of modules) {
    let exports: Record<string, unknown>;
    try {
      exports = (await import(importTarget(specifier, cwd))) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(
        `${ENV.workflows}: module '${specifier}' could not be loaded (${(err as Error).message}); ` +
          'check the path (relative paths start at the working directory) and that it is built',
        { cause: err },
      );
    }
    const before = found.size;
    for (const value of Object.values(exports)) {
      for (const candidate of Array.isArray(value) ? value : [value]) {
        if (isWorkflow(candidate)) found.set(`${candidate.name}@${candidate.version}`, candidate);
      }
    }
    if (found.size === before) {
      throw new ConfigError(
        `${ENV.workflows}: module '${specifier}' exports no workflow; export the result of defineWorkflow()`,
      );
    }
  }
  return [...found.values()];
}
