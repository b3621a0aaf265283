/**
 * `baton admin drop [--yes]`: everything one installation keeps on its bus and its store (the
 * streams or topics and consumer groups of its bus prefix, the keys of its Redis prefix, its
 * Postgres schema), listed from the servers (`@baton/host`'s listInstallation), and removed only
 * with `--yes`. Without it, a dry run: the list and exit 0, as the bulk actions' dry runs.
 *
 * Refused (exit 1, nothing removed) when removing the namespace would remove data that is not the
 * installation's: keys under the Redis prefix that are not the adapter's (another installation
 * whose prefix starts with this one), objects in the Postgres schema the store does not create.
 * Stop the installation's workers first: a running worker (or client) creates its streams, topics
 * and schema again, which the check after the drop reports (exit 1).
 */
import { dropInstallation, listInstallation, readOperatorConfig } from '@baton/host';
import type { Command } from 'commander';
import type { CommandGroup } from '../command.js';
import { envWithFlags } from '../context.js';
import { EXIT, RefusedError } from '../errors.js';
import { json } from '../output.js';
import { listTable } from '../table.js';

/** One installation's part on one server, as listInstallation reads it: the bus's or the store's. */
export type InstallationPart = Awaited<ReturnType<typeof listInstallation>>['parts'][number];

/** How long the check after a drop waits for the servers to stop listing what was removed (Kafka deletes topics in the background). */
const SETTLE_MS = 15_000;
const SETTLE_STEP_MS = 500;

/** `bus:   nats://h:4222 (nats, transportPrefix c1)`. */
function partText(part: InstallationPart): string {
  const namespace = Object.entries(part.namespace)
    .map(([field, value]) => `${field} ${value}`)
    .join(', ');
  return `${`${part.role}:`.padEnd(7)}${part.server} (${part.adapter}${namespace === '' ? '' : `, ${namespace}`})\n`;
}

/** The listing as a table, with the installation it is of above and what is kept below. */
export function installationText(
  parts: readonly InstallationPart[],
  kept: readonly string[],
  wide = false,
): string {
  const heading = parts.map(partText).join('');
  const rows = parts.flatMap((part) =>
    part.listing.items.map((item) => [part.role, item.kind, item.name, item.detail ?? '']),
  );
  const body =
    rows.length === 0
      ? 'nothing of it is on the bus or the store\n'
      : `${listTable(['where', 'kind', { head: 'name', shorten: 'middle', min: 24 }, 'holds'], rows, wide)}\n`;
  return heading + body + kept.map((k) => `kept: ${k}\n`).join('');
}

/** What is left after a drop, waiting a little for the servers to catch up. */
async function leftAfterDrop(
  list: () => Promise<{ parts: InstallationPart[] }>,
): Promise<InstallationPart[]> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const left = (await list()).parts.filter((p) => p.listing.items.length > 0);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_STEP_MS));
  }
}

export const adminCommands: CommandGroup = {
  register(program, context) {
    const admin = program
      .command('admin')
      .description('an installation as a whole: what it keeps, and its removal');

    admin
      .command('drop')
      .description(
        'list everything this installation keeps on its bus and its store (streams or topics, keys, schema); ' +
          'remove it all with --yes (stop its workers first)',
      )
      .option('--yes', 'remove it (without it, only list it)')
      .action((flags: { yes?: boolean }, command: Command) =>
        context.run(async () => {
          const global = context.flags(command);
          const config = readOperatorConfig(envWithFlags(context.env, global));
          const { parts, kept } = await listInstallation(config);
          const asJson = global.json === true;
          const shared = parts.filter((p) => p.listing.shared !== undefined);
          const empty = parts.every((p) => p.listing.items.length === 0);
          const report = (extra: object): string => json({ parts, kept, ...extra });
          if (!asJson) context.io.out(installationText(parts, kept, global.wide === true));
          if (shared.length > 0) {
            if (asJson) context.io.out(report({ removed: false, refused: true }));
            throw new RefusedError(
              `nothing was removed: ${shared.map((p) => `the ${p.role} (${p.server}): ${p.listing.shared}`).join('; ')}`,
            );
          }
          if (flags.yes !== true || empty) {
            context.io.out(
              asJson
                ? report({ removed: false, dryRun: flags.yes !== true })
                : empty
                  ? 'nothing to remove\n'
                  : 'nothing removed (dry run). Add --yes to remove all of it.\n',
            );
            return EXIT.done;
          }
          context.io.err('removing it…\n');
          await dropInstallation(config);
          const left = await leftAfterDrop(() => listInstallation(config));
          if (asJson) context.io.out(report({ removed: true, left }));
          if (left.length > 0) {
            if (!asJson) context.io.out(installationText(left, []));
            throw new RefusedError(
              'removed, but the servers list the above again: a worker or a client of this installation is ' +
                'still running and created it anew; stop them and run the same command again',
            );
          }
          if (!asJson) context.io.out('removed: the bus and the store hold nothing of this installation\n');
          return EXIT.done;
        }),
      );
  },
};
