/**
 * Refuses, before anything is sent, a start or a signal the fleet could not read (docs/integrity.md,
 * "Values outside the journal"): live workers that require encryption refuse values in the clear
 * (the message would be dead-lettered `unprotected-payload` while `start()` succeeded), and a value
 * sealed with a key no live worker holds would wait for that key.
 *
 * Invariants:
 * 1. Judged from the fleet's reports (`WorkerReport.encryption`). A reading that lets calls through
 *    is used for {@link FLEET_PROTECTION_TTL_MS}, so a burst of starts costs one listing; a refusal
 *    is always judged on a fresh listing, so a fleet that changed since (its protected workers
 *    stopped, a key was added) is never refused from an old reading. A failed listing (the store
 *    away) refuses nothing: the call goes on, as it would have before the check.
 * 2. Only what a live worker reports counts. With no live worker (a fleet that is not up yet), or
 *    workers from releases that do not report encryption, nothing is refused; the worker's own
 *    check still stands behind it.
 * 3. Refused: a client without an encryption key while a live worker requires encryption (it does
 *    not allow plaintext); a client whose active key no live encrypting worker holds. The error is
 *    a ConfigError naming the key ids (never key material) and what to set.
 */
import { ConfigError } from '@baton/core';
import type { FleetStore, ReportedWorker } from '@baton/core/adapter';
import { PAYLOAD_ENV, type PayloadProtection } from '@baton/core/runtime';

/** How long one reading of the fleet's encryption is used. */
export const FLEET_PROTECTION_TTL_MS = 5_000;

export class FleetProtectionCheck {
  /** Until when the last reading, which refused nothing, lets calls through without another. */
  private passUntil = 0;

  constructor(
    private readonly store: FleetStore | undefined,
    private readonly protection: PayloadProtection,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws ConfigError, prefixed with `operation`, when the fleet could not read what this client sends. */
  async check(operation: string): Promise<void> {
    if (this.store === undefined || this.now() < this.passUntil) return;
    let workers: ReportedWorker[];
    try {
      workers = await this.store.list();
    } catch {
      return; // invariant 1: the call goes on; the worker still checks what it receives
    }
    const refusal = refusalFor(workers, this.protection);
    if (refusal !== undefined) throw new ConfigError(`${operation}: ${refusal}`);
    this.passUntil = this.now() + FLEET_PROTECTION_TTL_MS;
  }
}

/** Why this client's values would not be read by the live `workers`, or undefined (invariant 3). */
export function refusalFor(
  workers: readonly ReportedWorker[],
  protection: PayloadProtection,
): string | undefined {
  const encrypting = workers.filter((w) => w.encryption !== undefined);
  if (encrypting.length === 0) return undefined;
  const own = protection.encryption;
  if (own === undefined) {
    const requiring = encrypting.filter((w) => !w.encryption!.allowsPlaintext);
    if (requiring.length === 0) return undefined;
    const keys = [...new Set(requiring.map((w) => w.encryption!.activeKey))];
    return (
      `the fleet requires encryption with key ${keys.join(', ')} (values sent in the clear are refused by ` +
      `${describeWorkers(requiring)}), and this client has no encryption key; give it the workers' ` +
      `payloadProtection (${PAYLOAD_ENV.encryptionKeys} with key ${keys.join(', ')}). Nothing was sent`
    );
  }
  const readers = encrypting.filter((w) => w.encryption!.keys.includes(own.activeId));
  if (readers.length > 0) return undefined;
  const held = [...new Set(encrypting.flatMap((w) => w.encryption!.keys))].sort();
  return (
    `this client encrypts with key ${own.activeId}, which no live worker holds (keys held: ${held.join(', ')}, by ` +
    `${describeWorkers(encrypting)}); add key ${own.activeId} to the workers' ${PAYLOAD_ENV.encryptionKeys} first, ` +
    `or make one of theirs this client's active key. Nothing was sent`
  );
}

function describeWorkers(workers: readonly ReportedWorker[]): string {
  const ids = workers.slice(0, 3).map((w) => w.workerId);
  const more = workers.length > 3 ? ` and ${workers.length - 3} more` : '';
  return `${workers.length === 1 ? 'worker' : 'workers'} ${ids.join(', ')}${more}`;
}
