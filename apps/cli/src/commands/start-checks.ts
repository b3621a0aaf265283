/**
 * What `baton runs start` checks before it sends a start: the fields every worker would refuse
 * (core's startFieldProblem, the check client.start and the workers' decoder share), as a usage
 * error naming the argument or flag; then that a live worker registers the workflow@version, as
 * the fleet's reports say (client.fleet.workers), unless `--allow-unregistered`.
 *
 * Why the fleet check is the CLI's and not client.start's: a producer in an application starts
 * runs before, during and after deploys, and a run may wait for a worker of its version by design
 * (the missing-version grace); an operator typing a workflow@version by hand wants to hear at once
 * that nothing live can run it (a typo, a version not deployed yet).
 */
import { startFieldProblem, type Client, type FleetWorker } from '@baton/client';
import { RefusedError, UsageError } from '../errors.js';

/** Where each start field comes from on the command line. */
const SOURCES = {
  workflow: '<workflow> name',
  version: '<workflow> version',
  idempotencyKey: '--key',
  runId: '--run-id',
} as const;

/** UsageError naming the argument or flag a worker would refuse, before any connection. */
export function checkStartArguments(
  ref: { name: string; version: number },
  flags: { key?: string | undefined; runId?: string | undefined },
): void {
  const refused = startFieldProblem({
    workflow: ref.name,
    version: ref.version,
    idempotencyKey: flags.key,
    runId: flags.runId,
  });
  if (refused !== undefined) {
    throw new UsageError(`${SOURCES[refused.field]} ${refused.problem}; a worker would refuse this start`);
  }
}

/**
 * A live worker: reporting, not draining (it takes nothing new), and on a store with presence
 * its presence connection up (else it died and its report has not expired yet).
 */
function live(worker: FleetWorker): boolean {
  return !worker.draining && worker.connected !== false;
}

/**
 * RefusedError, in one line naming the live versions of the workflow (or that none registers it),
 * when no live worker registers `ref`; nothing sent.
 */
export async function checkRegistered(client: Client, ref: { name: string; version: number }): Promise<void> {
  const workers = (await client.fleet.workers()).filter(live);
  const versions = new Set<number>();
  for (const worker of workers) {
    for (const w of worker.workflows) if (w.name === ref.name) w.versions.forEach((v) => versions.add(v));
  }
  if (versions.has(ref.version)) return;
  const key = `${ref.name}@${ref.version}`;
  const found =
    workers.length === 0
      ? 'no live worker reports to this store'
      : versions.size === 0
        ? `none of the ${workers.length} live worker(s) registers workflow ${ref.name} at any version`
        : `the live workers register ${ref.name}@${[...versions].sort((a, b) => a - b).join(',')}`;
  throw new RefusedError(
    `no live worker registers ${key} (${found}), so nothing was sent; deploy a worker with it, ` +
      'or pass --allow-unregistered to start it anyway (it waits for such a worker, and is ' +
      'dead-lettered unknown-workflow after the workers’ missing-version grace)',
  );
}
