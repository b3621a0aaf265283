/**
 * The `baton` program: global flags, the command groups (one file each under commands/), and
 * the translation of every outcome into an exit code. `runCli` is what main.ts calls and what the
 * unit specs drive, with their own output streams and environment.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { COMMAND_GROUPS } from './commands/index.js';
import { Session, addGlobalFlags, type GlobalFlags } from './context.js';
import { EXIT, describeError, exitCodeOf, type ExitCode } from './errors.js';
import type { Io } from './output.js';
import type { CommandContext } from './command.js';

export interface CliEnvironment {
  env: Record<string, string | undefined>;
  io: Io;
  stdin?: () => Promise<string>;
  /** Aborted to interrupt a bulk action (main.ts: the first SIGINT). */
  interrupt?: AbortSignal;
}

/**
 * The CLI's own version, from its package.json (one directory above both src/ and dist/, so the
 * same path serves the sources under tsx and the built files in an installed package).
 */
export const CLI_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Builds the program for one invocation (exported for the specs that check its help). */
export function buildProgram(context: CommandContext): Command {
  const program = new Command('baton')
    .description(
      'Find, inspect and steer Baton runs and dead letters (configured like the worker: BATON_*).\n' +
        '`baton --version` prints the version.',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (s) => context.io.out(s),
      writeErr: (s) => context.io.err(s),
      outputError: (s, write) => write(suggestionInline(s)),
    });
  addGlobalFlags(program);
  for (const group of COMMAND_GROUPS) group.register(program, context);
  return program;
}

/** Runs one command line (without `node` and the script); resolves the exit code. */
export async function runCli(argv: readonly string[], environment: CliEnvironment): Promise<ExitCode> {
  let code: ExitCode = EXIT.done;
  let session: Session | undefined;
  const context: CommandContext = {
    io: environment.io,
    env: environment.env,
    flags: (command) => command.optsWithGlobals<GlobalFlags>(),
    session: (command) => (session ??= new Session(environment.env, command.optsWithGlobals<GlobalFlags>())),
    run: async (action) => {
      code = await action();
    },
    stdin: environment.stdin ?? readStdin,
    interrupt: environment.interrupt ?? new AbortController().signal,
  };
  // `baton --version` / `-V`, as the first word only: Commander's own version option would also
  // answer `baton runs list --version 2`, where --version is a filter.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    environment.io.out(`${CLI_VERSION}\n`);
    return EXIT.done;
  }
  const program = buildProgram(context);
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander printed its one-line message; a usage mistake gets a pointer to the help, not
      // the whole help (which buries the message above a screenful of flags).
      code = err.exitCode === 0 ? EXIT.done : EXIT.usage;
      if (code === EXIT.usage && err.code !== 'commander.help')
        environment.io.err(`${helpHint(program, argv)}\n`);
    } else if (environment.interrupt?.aborted === true && err === environment.interrupt.reason) {
      // A command that rejects with the interrupt's reason (replay-check) stopped part way.
      environment.io.err('interrupted: stopped before every item was reached; run the same command again\n');
      code = EXIT.interrupted;
    } else {
      environment.io.err(`${describeError(err)}\n`);
      code = exitCodeOf(err);
    }
  } finally {
    if (session !== undefined) await closeBounded(session, environment.io);
  }
  return code;
}

/**
 * Commander's message with its suggestion on the same line: `error: unknown option '--statuss'
 * (did you mean --status?)`, so a usage mistake is one line, and the pointer to the help the next.
 */
export function suggestionInline(message: string): string {
  return message.replace(
    /\n\(Did you mean (one of )?([^\n]+)\?\)\n?$/,
    (_all, oneOf: string | undefined, names: string) => ` (did you mean ${oneOf ?? ''}${names}?)\n`,
  );
}

/**
 * `(see 'baton runs list --help')`: the help of the deepest command `argv` names, found by
 * walking its words that are subcommand names (a flag's value that happens to be one is taken
 * for a command too; the hint then names a parent's help, which still lists the way down).
 */
export function helpHint(program: Command, argv: readonly string[]): string {
  let command = program;
  for (const word of argv) {
    if (word === '--') break;
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub !== undefined) command = sub;
  }
  const path: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) path.unshift(c.name());
  return `(see '${path.join(' ')} --help')`;
}

/**
 * How long closing the bus and store connections may take before the CLI exits anyway. Every
 * action has been acknowledged by then (a command reports only what its awaited calls confirmed), so
 * giving up on a slow close loses nothing; it only keeps a hung client library from hanging the
 * command.
 */
export const CLOSE_TIMEOUT_MS = 10_000;

async function closeBounded(session: Session, io: CliEnvironment['io']): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), CLOSE_TIMEOUT_MS);
    timer.unref();
  });
  const closed = session.close().then(
    () => 'closed' as const,
    (err: unknown) => {
      io.err(`closing the connections failed (${describeError(err)}); what was done above stands\n`);
      return 'closed' as const;
    },
  );
  if ((await Promise.race([closed, timedOut])) === 'timeout')
    io.err(
      `closing the bus and store connections took over ${CLOSE_TIMEOUT_MS / 1000} s; exiting anyway ` +
        '(what was done above was acknowledged and stands)\n',
    );
  clearTimeout(timer);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
