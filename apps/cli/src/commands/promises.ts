/**
 * `baton promises …`: complete a durable promise by its token as any outside system would
 * (client.promises.resolve and reject), and list a run's pending promises with their tokens (an
 * operator's view: a token is a secret, whoever has it may complete its promise; docs/promises.md).
 */
import type { PromisesApi } from '@baton/client';
import type { Command } from 'commander';
import type { CommandGroup } from '../command.js';
import { parseJson } from '../arguments.js';
import { EXIT } from '../errors.js';
import { json, time } from '../output.js';
import { listTable } from '../table.js';

/** A run's pending promises as `runs describe` and `promises list` show them. */
type PendingPromise = Awaited<ReturnType<PromisesApi['pending']>>[number];

export function promisesTable(promises: readonly PendingPromise[], wide = false): string {
  if (promises.length === 0) return 'no pending durable promise\n';
  const rows = promises.map((p) => [
    `#${p.seq}`,
    p.token,
    time(p.createdAt),
    p.timeoutAt === null ? '-' : time(p.timeoutAt),
  ]);
  const columns = ['step', { head: 'token', min: 35 }, 'created', 'times out'] as const;
  return `${listTable(columns, rows, wide)}\n${promises.length} pending promise(s); a token is a secret: whoever has it may complete its promise\n`;
}

export const promisesCommands: CommandGroup = {
  register(program, context) {
    const promises = program
      .command('promises')
      .description('complete durable promises by their tokens, list a run’s pending ones (docs/promises.md)');

    promises
      .command('resolve')
      .description('resolve a durable promise: the workflow awaiting it receives the value')
      .argument('<token>', 'the promise token (p.token in the workflow)')
      .option('--value <json>', 'the value as JSON (default: null)')
      .action((token: string, flags: { value?: string }, command: Command) =>
        context.run(async () => {
          const value = flags.value === undefined ? null : parseJson('--value', flags.value);
          const client = await context.session(command).client();
          const { state } = await client.promises.resolve(token, value);
          context.io.out(context.flags(command).json ? json({ status: state }) : `promise ${state}\n`);
          return EXIT.done;
        }),
      );

    promises
      .command('reject')
      .description('reject a durable promise: the workflow awaiting it gets PromiseRejectedError')
      .argument('<token>', 'the promise token (p.token in the workflow)')
      .requiredOption('--message <text>', 'why it is rejected')
      .option('--name <name>', 'the error name the workflow sees (default: Error)')
      .option('--code <code>', 'an error code the workflow may branch on')
      .action((token: string, flags: { message: string; name?: string; code?: string }, command: Command) =>
        context.run(async () => {
          const client = await context.session(command).client();
          const { state } = await client.promises.reject(token, {
            message: flags.message,
            ...(flags.name !== undefined && { name: flags.name }),
            ...(flags.code !== undefined && { code: flags.code }),
          });
          context.io.out(context.flags(command).json ? json({ status: state }) : `promise ${state}\n`);
          return EXIT.done;
        }),
      );

    promises
      .command('list')
      .description('a run’s pending durable promises, with their tokens (secrets: share them with care)')
      .argument('<run-id>')
      .action((runId: string, _flags: unknown, command: Command) =>
        context.run(async () => {
          const pending = await (await context.session(command).client()).promises.pending(runId);
          context.io.out(
            context.flags(command).json
              ? json({ runId, promises: pending })
              : promisesTable(pending, context.flags(command).wide === true),
          );
          return EXIT.done;
        }),
      );
  },
};
