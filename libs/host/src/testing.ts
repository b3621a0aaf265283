/**
 * `@baton/host/testing`: for tests and benchmarks only, never for a production entry point. Puts
 * an adapter under a namespace of its own on a shared server, and deletes that namespace after.
 */
import type { AdapterKind } from '@baton/core/adapter';
import { registrationFor, schemeOf } from './registry.js';

/** The isolation of the registration `url` picks, and its settings for namespace `id`. */
function isolationOf(kind: AdapterKind, url: string, id: string) {
  const registration = registrationFor(kind, url);
  const isolation = registration?.isolation;
  if (registration === undefined || isolation === undefined) {
    throw new Error(`no registered ${kind} for '${schemeOf(url) ?? url}' can isolate a namespace`);
  }
  const settings: Record<string, string> = isolation.settings(id);
  return { registration, isolation, settings };
}

/**
 * For tests and benchmarks: the variables that put the adapter `url` picks under namespace `id`
 * (`{ BATON_NATS_PREFIX: id }`, `{ BATON_REDIS_KEY_PREFIX: 'id:' }`).
 */
export function isolatedEnv(kind: AdapterKind, url: string, id: string): Record<string, string> {
  const { registration, settings } = isolationOf(kind, url, id);
  const variables = registration.variables as Record<string, { name: string }>;
  return Object.fromEntries(Object.entries(settings).map(([key, value]) => [variables[key]!.name, value]));
}

/**
 * Deletes everything under namespace `id` on the server `url` names (the registration's
 * `installation.drop`, as `baton admin drop` does). Irreversible.
 */
export async function removeIsolated(kind: AdapterKind, url: string, id: string): Promise<void> {
  const { registration, settings } = isolationOf(kind, url, id);
  await registration.load?.();
  await registration.installation.drop(url, settings);
}
