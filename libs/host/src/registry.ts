/**
 * The adapters a Baton process (the worker, the producer, the CLI, the console, the bench) can
 * build, by URL scheme. Everything adapter-specific in those processes (their variables and their
 * validation, adapter construction, error messages, the worker's `ready` line, the producer's bus
 * variables) is derived from this list: a new transport or
 * store adds its package's registration here and nothing else (docs/architecture.md, "Adding an
 * adapter"). The `memory:` adapters are not here on purpose: they cannot be shared by a fleet.
 *
 * Each registration comes from its package's `/registration` export, without the adapter's code:
 * a process loads the code of the bus and the store it builds (`loadAdapterCode` in adapters.ts),
 * not every client library the worker could use.
 */
import type { AnyAdapterRegistration, AdapterKind } from '@baton/core/adapter';
import { kafkaRegistration } from '@baton/transport-kafka/registration';
import { natsRegistration } from '@baton/transport-nats/registration';
import { redisBusRegistration } from '@baton/transport-redis/registration';
import { postgresRegistration } from '@baton/store-postgres/registration';
import { redisRegistration } from '@baton/store-redis/registration';

export const ADAPTERS = [
  natsRegistration,
  kafkaRegistration,
  redisBusRegistration,
  redisRegistration,
  postgresRegistration,
] as const;

export type RegisteredAdapter = (typeof ADAPTERS)[number];

/** The URL's scheme, lowercase and without `:`; undefined when it has none. */
export function schemeOf(url: string): string | undefined {
  return /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
}

/** The registration of this kind serving the URL's scheme, if any. */
export function registrationFor(kind: AdapterKind, url: string): AnyAdapterRegistration | undefined {
  const scheme = schemeOf(url);
  return ADAPTERS.find((r) => r.kind === kind && (r.schemes as readonly string[]).includes(scheme ?? ''));
}

/** The registrations of one kind. */
export function registrationsOf(kind: AdapterKind): AnyAdapterRegistration[] {
  return ADAPTERS.filter((r) => r.kind === kind);
}
