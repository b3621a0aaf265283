/**
 * `baton dlq …`: list, show, redrive and purge dead letters. A redrive by id or in bulk
 * (`--all [--code X] --yes`) refuses a letter whose message does not decode: it would only be
 * dead-lettered again.
 */
import type { ShownDeadLetter } from '@baton/client';
import { NotFoundError } from '@baton/core';
import type { Command } from 'commander';
import type { CommandContext, CommandGroup } from '../command.js';
import { EXIT, RefusedError, UsageError } from '../errors.js';
import { parseTime } from '../filters.js';
import { json, letterJson, lettersTable, summaryText, time, valueText } from '../output.js';
import { fieldTable } from '../table.js';
import { bulkExit, bulkProgress } from './progress.js';

export const dlqCommands: CommandGroup = {
  register(program, context) {
    const dlq = program.command('dlq').description('dead letters: poison messages and why');

    dlq
      .command('list')
      .description('dead letters, newest first, a page at a time')
      .option('--limit <n>', 'letters per page, 1-1000 (default 100)')
      .option('--cursor <cursor>', 'the cursor a previous page printed, for older letters')
      .option('--code <code>', 'only letters with this code (on this page)')
      .action((flags: { limit?: string; cursor?: string; code?: string }, command: Command) =>
        context.run(async () => {
          const page = await (
            await context.session(command).client()
          ).deadLetters.list({
            ...(flags.limit !== undefined && { limit: whole('--limit', flags.limit) }),
            ...(flags.cursor !== undefined && { cursor: flags.cursor }),
          });
          const letters = page.letters.filter((l) => flags.code === undefined || l.code === flags.code);
          context.io.out(
            context.flags(command).json
              ? json({
                  letters: letters.map(letterJson),
                  ...(page.cursor !== undefined && { cursor: page.cursor }),
                })
              : lettersTable(letters, page.cursor, context.flags(command).wide),
          );
          return EXIT.done;
        }),
      );

    dlq
      .command('show')
      .description('one dead letter with its original message decoded (or why it does not decode)')
      .argument('<id>')
      .action((id: string, _flags: unknown, command: Command) =>
        context.run(async () => {
          const letter = await shown(context, command, id);
          context.io.out(
            context.flags(command).json
              ? json(letterJson(letter))
              : showText(letter, context.flags(command).wide === true),
          );
          return EXIT.done;
        }),
      );

    dlq
      .command('redrive')
      .description('put a letter’s message back on the run queue (one by id, or --all [--code X] --yes)')
      .argument('[id]')
      .option('--all', 'every letter (with --code: every letter with that code)')
      .option('--code <code>', 'with --all: only letters with this code')
      .option('--yes', 'with --all: act (without it, only count)')
      .action(
        (id: string | undefined, flags: { all?: boolean; code?: string; yes?: boolean }, command: Command) =>
          context.run(async () => {
            if ((id === undefined) === (flags.all !== true))
              throw new UsageError('dlq redrive takes a letter id, or --all [--code X] (not both)');
            if (flags.code !== undefined && flags.all !== true)
              throw new UsageError('dlq redrive --code goes with --all');
            const client = await context.session(command).client();
            const asJson = context.flags(command).json === true;
            if (id !== undefined) {
              const letter = await shown(context, command, id);
              if (!letter.message.readable)
                throw new RefusedError(
                  `dead letter ${id} is not redriven: ${letter.message.problem}; redriven, it would only be ` +
                    'dead-lettered again. Fix the producer and purge it (dlq purge ' +
                    id +
                    ')',
                );
              const result = await client.deadLetters.redrive(id);
              context.io.out(asJson ? json(result) : `redrove dead letter ${id} (${result.bytes} bytes)\n`);
              return EXIT.done;
            }
            const matched = await countLetters(context, command, flags.code);
            if (flags.yes !== true) {
              context.io.out(
                asJson
                  ? json({ action: 'redrive', matched, dryRun: true })
                  : `${matched} letter(s) match; nothing done (dry run). Add --yes to redrive them.\n`,
              );
              return EXIT.done;
            }
            context.io.err(`redrive: ${matched} letter(s) match\n`);
            const summary = await client.bulk.redriveDeadLetters(
              flags.code !== undefined ? { code: flags.code } : {},
              { onProgress: bulkProgress(context.io, 'redrive', matched), signal: context.interrupt },
            );
            context.io.out(asJson ? json(summary) : summaryText(summary));
            return bulkExit(context.io, summary, matched, 'letter');
          }),
      );

    dlq
      .command('purge')
      .description('remove letters for good: by id, --older-than <time>, or --all (with --yes)')
      .argument('[ids...]')
      .option('--all', 'every letter')
      .option('--older-than <time>', 'letters dead-lettered before this (ISO time, ms, or an age like 7d)')
      .option('--yes', 'with --all or --older-than: act (without it, only count)')
      .action(
        (ids: string[], flags: { all?: boolean; olderThan?: string; yes?: boolean }, command: Command) =>
          context.run(async () => {
            const ways = [ids.length > 0, flags.all === true, flags.olderThan !== undefined].filter(Boolean);
            if (ways.length !== 1)
              throw new UsageError(
                'dlq purge takes letter ids, or --older-than <time>, or --all (one of them)',
              );
            const client = await context.session(command).client();
            const asJson = context.flags(command).json === true;
            if (ids.length > 0) {
              const removed = await client.deadLetters.purge({ ids });
              context.io.out(asJson ? json({ removed }) : `purged ${removed} letter(s)\n`);
              if (removed < ids.length) {
                context.io.err(
                  `refused: ${ids.length - removed} of the ids name no letter (never were, or already redriven or purged)\n`,
                );
                return EXIT.refused;
              }
              return EXIT.done;
            }
            const olderThan =
              flags.olderThan !== undefined ? parseTime('--older-than', flags.olderThan) : undefined;
            if (flags.yes !== true) {
              const matched = await countLetters(context, command, undefined, olderThan);
              context.io.out(
                asJson
                  ? json({ action: 'purge', matched, dryRun: true })
                  : `${matched} letter(s) match; nothing done (dry run). Add --yes to purge them.\n`,
              );
              return EXIT.done;
            }
            const removed = await client.deadLetters.purge(
              olderThan !== undefined ? { olderThan } : { all: true },
            );
            context.io.out(asJson ? json({ removed }) : `purged ${removed} letter(s)\n`);
            return EXIT.done;
          }),
      );
  },
};

async function shown(context: CommandContext, command: Command, id: string): Promise<ShownDeadLetter> {
  try {
    return await (await context.session(command).client()).deadLetters.show(id);
  } catch (err) {
    if (err instanceof NotFoundError)
      throw new RefusedError(
        `no dead letter ${id}: it never was, or was already redriven or purged; list them with dlq list`,
      );
    throw err;
  }
}

/** How many letters there are (with `code`, or dead-lettered before `olderThan`). */
async function countLetters(
  context: CommandContext,
  command: Command,
  code?: string,
  olderThan?: number,
): Promise<number> {
  const client = await context.session(command).client();
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await client.deadLetters.list({ limit: 1_000, ...(cursor !== undefined && { cursor }) });
    count += page.letters.filter(
      (l) => (code === undefined || l.code === code) && (olderThan === undefined || l.at < olderThan),
    ).length;
    cursor = page.cursor;
  } while (cursor !== undefined);
  return count;
}

function showText(letter: ShownDeadLetter, wide: boolean): string {
  const rows: [string, string][] = [
    ['id', letter.id],
    ['code', letter.code],
    ['reason', letter.reason],
    ['dead-lettered', time(letter.at)],
    ['bytes', String(letter.data.byteLength)],
    ['headers', JSON.stringify(letter.headers)],
  ];
  if (letter.message.readable) rows.push(['message', valueText(letter.message.message)]);
  else rows.push(['message', `unreadable: ${letter.message.problem}`]);
  return `${fieldTable(rows, wide)}\n`;
}

function whole(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} '${value}' is not a whole number`);
  return Number(value);
}
