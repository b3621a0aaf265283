/**
 * `baton runs tail <run-id> [--stream <name>] [--from <seq>] [--json]`: follows one of a run's
 * streams (docs/streams.md) as the run writes it, until the stream is closed or the run has
 * finished and everything it wrote was printed.
 *
 * Which run: one the store does not know yet (its start still queued, as right after `runs start`)
 * is waited for, up to `--wait` (30 s), then refused. Which stream: `--stream`, else the run's only
 * one; a run with several is refused naming them (exit 2), and one with none yet is waited for
 * until it writes one (or finishes without: exit 1).
 *
 * What is printed: text chunks on stdout as written (no newline added between them: tokens run
 * together as the model wrote them), any other value as one JSON line; a reset (an activity's step
 * started again, after a failed attempt or its worker's crash) as a marker line on stderr, since
 * the output above it from that step is superseded; and a final newline when the output did not
 * end with one. `--json`: every item as it is, one JSON object a line, resets and the close
 * included.
 *
 * Ctrl-C stops it with exit 130, as an interrupted bulk action: the stream was not followed to its
 * end, and stderr says how to go on from the item after the last one printed (`--from`). Each
 * sequence number is printed once, so a tail resumed that way prints nothing twice.
 */
import { checkRunStreamName, isFinishedRun, RunLostError, type Client, type StreamItem } from '@baton/client';
import { NotFoundError } from '@baton/core';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { parseDuration } from '../arguments.js';
import type { CommandContext } from '../command.js';
import { EXIT, RefusedError, UsageError, type ExitCode } from '../errors.js';
import type { Io } from '../output.js';
import { described } from './run-lookup.js';

/** How often a run with no stream yet, or not known yet, is asked again. */
const POLL_MS = 250;
/** How long an unknown run is waited for before the wait is said on stderr. */
const QUIET_WAIT_MS = 1_000;

interface TailFlags {
  stream?: string;
  from?: string;
  wait: string;
}

export function registerTail(runs: Command, context: CommandContext): void {
  runs
    .command('tail')
    .description(
      "follow a run's stream as it is written (docs/streams.md): text as written, other values one " +
        'JSON line each, restarts marked on stderr; ends at the close or when the run has finished',
    )
    .argument('<run-id>')
    .option('--stream <name>', 'the stream to follow (needed when the run has several)')
    .option('--from <seq>', 'the first sequence number to print: the last one seen plus one resumes', '1')
    .option(
      '--wait <duration>',
      'how long to wait for a run the store does not know yet (its start still queued)',
      '30s',
    )
    .action((runId: string, flags: TailFlags, command: Command) =>
      context.run(async () => {
        const from = fromFlag(flags.from ?? '1');
        const waitMs = parseDuration('--wait', flags.wait);
        if (flags.stream !== undefined) checkRunStreamName(flags.stream);
        const client = await context.session(command).client();
        if (!(await knownRun(client, runId, waitMs, context)))
          return interrupted(context.io, runId, flags.stream, from - 1);
        if (flags.stream !== undefined) await sayIfAbsent(client, runId, flags.stream, context.io);
        const name = flags.stream ?? (await onlyStream(client, runId, context));
        if (name === undefined) return interrupted(context.io, runId, undefined, from - 1);
        const asJson = context.flags(command).json === true;
        return tail(client, runId, name, from, asJson, context);
      }),
    );
}

function fromFlag(text: string): number {
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1)
    throw new UsageError(`--from '${text}' is not a sequence number (a whole number of at least 1)`);
  return Number(text);
}

/**
 * Waits until the store knows the run, for up to `waitMs` (said on stderr after a second); false
 * when Ctrl-C came first. Past the wait, the refusal every `runs` command gives an unknown run.
 */
async function knownRun(
  client: Client,
  runId: string,
  waitMs: number,
  context: CommandContext,
): Promise<boolean> {
  const startedAt = Date.now();
  let told = false;
  for (;;) {
    try {
      await client.describe(runId);
      return true;
    } catch (err) {
      // A run lost with the store's data will not come: refused at once.
      if (!(err instanceof NotFoundError) || err instanceof RunLostError) throw err;
    }
    const waited = Date.now() - startedAt;
    if (waited >= waitMs) {
      await described(client, runId);
      return true;
    }
    if (!told && waited >= QUIET_WAIT_MS) {
      context.io.err(
        `run ${runId} is not known yet (its start may still be queued): waiting up to ` +
          `${Math.ceil(waitMs / 1000)} s (--wait)\n`,
      );
      told = true;
    }
    try {
      await sleep(POLL_MS, undefined, { signal: context.interrupt });
    } catch {
      return false;
    }
  }
}

/**
 * The run's one stream. Several: refused, naming them. None yet: waits for the first, saying so
 * once on stderr; undefined when Ctrl-C came first, RefusedError when the run finished without one.
 */
async function onlyStream(
  client: Client,
  runId: string,
  context: CommandContext,
): Promise<string | undefined> {
  let told = false;
  for (;;) {
    // Finished before the names are read: a finished run's streams are all written.
    const { status } = await described(client, runId);
    const names = await client.streamNames(runId);
    if (names.length === 1) return names[0]!;
    if (names.length > 1)
      throw new UsageError(
        `run ${runId} has ${names.length} streams (${names.join(', ')}): name one with --stream <name>`,
      );
    if (isFinishedRun(status))
      throw new RefusedError(`run ${runId} is ${status} and wrote no stream: there is nothing to tail`);
    if (!told) {
      context.io.err(`run ${runId} has written no stream yet: waiting for its first (Ctrl-C to stop)\n`);
      told = true;
    }
    try {
      await sleep(POLL_MS, undefined, { signal: context.interrupt });
    } catch {
      return undefined;
    }
  }
}

/** A `--stream` the run has not written: refused for a finished run, else said once (it may come). */
async function sayIfAbsent(client: Client, runId: string, name: string, io: Io): Promise<void> {
  const { status } = await described(client, runId);
  const names = await client.streamNames(runId);
  if (names.includes(name)) return;
  const known = names.length === 0 ? 'none' : names.join(', ');
  if (isFinishedRun(status))
    throw new RefusedError(`run ${runId} is ${status} and has no stream '${name}' (its streams: ${known})`);
  io.err(`run ${runId} has no stream '${name}' yet (its streams: ${known}): waiting for it\n`);
}

/** Prints items as text: see the module's comment. */
class TextOutput {
  private atLineStart = true;

  constructor(private readonly io: Io) {}

  print(item: StreamItem): void {
    if (item.kind === 'chunk') {
      const text =
        typeof item.value === 'string'
          ? item.value
          : `${this.atLineStart ? '' : '\n'}${JSON.stringify(item.value) ?? 'undefined'}\n`;
      if (text === '') return;
      this.io.out(text);
      this.atLineStart = text.endsWith('\n');
    } else if (item.kind === 'reset') {
      // The marker goes on a line of its own in a terminal showing both streams.
      this.finishLine();
      this.io.err(`[step ${item.step} restarted: attempt ${item.attempt}; its earlier output superseded]\n`);
    }
  }

  finishLine(): void {
    if (!this.atLineStart) this.io.out('\n');
    this.atLineStart = true;
  }
}

async function tail(
  client: Client,
  runId: string,
  name: string,
  from: number,
  asJson: boolean,
  context: CommandContext,
): Promise<ExitCode> {
  const text = new TextOutput(context.io);
  let lastSeq = from - 1;
  let closed = false;
  // Read from the start and skip what is before `from`: the reader folds the whole stream anyway,
  // and this way a close before `from` is still seen as the end it is.
  for await (const item of client.stream(runId, name, { signal: context.interrupt })) {
    if (context.interrupt.aborted) break;
    if (item.kind === 'close') closed = true;
    if (item.seq < from) continue;
    if (asJson) context.io.out(`${JSON.stringify(item)}\n`);
    else text.print(item);
    lastSeq = item.seq;
  }
  text.finishLine();
  if (context.interrupt.aborted) return interrupted(context.io, runId, name, lastSeq);
  if (!asJson)
    context.io.err(`[stream '${name}' ended: ${closed ? 'closed' : await runEnd(client, runId)}]\n`);
  return EXIT.done;
}

/** How the run ended, for a stream that ends with it (not closed). */
async function runEnd(client: Client, runId: string): Promise<string> {
  const status = await client.describe(runId).then(
    (run) => run.status,
    () => undefined,
  );
  return status === undefined ? 'run finished' : `run ${status}`;
}

/** Ctrl-C: where the tail stopped and how to go on from there. */
function interrupted(io: Io, runId: string, name: string | undefined, lastSeq: number): ExitCode {
  const stream = name === undefined ? '' : ` --stream ${name}`;
  io.err(
    `interrupted${lastSeq > 0 ? ` after item ${lastSeq}` : ''}: to go on, ` +
      `baton runs tail ${runId}${stream} --from ${lastSeq + 1}\n`,
  );
  return EXIT.interrupted;
}
