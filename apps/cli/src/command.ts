/** What every command file uses: the context its actions get, and the group it exports. */
import type { Command } from 'commander';
import type { GlobalFlags, Session } from './context.js';
import type { ExitCode } from './errors.js';
import type { Io } from './output.js';

/** What a command's action gets: where to write, the flags, and the client (built on first use). */
export interface CommandContext {
  io: Io;
  /** The global flags (connection, --json) wherever they were given on the line. */
  flags(command: Command): GlobalFlags;
  /** The session built from the environment and the flags; one per invocation. */
  session(command: Command): Session;
  /** Runs an action and keeps its exit code; errors are turned into codes by runCli. */
  run(action: () => Promise<ExitCode>): Promise<void>;
  /** Aborted on the first Ctrl-C (SIGINT): a bulk action stops taking new items and reports. */
  interrupt: AbortSignal;
  /** The environment the invocation was given (BATON_* variables). */
  env: Record<string, string | undefined>;
  /** Reads the whole of standard input (for `--input -`). */
  stdin(): Promise<string>;
}

/** A group of commands (`runs`, `dlq`, …): registers its commands on the program. */
export interface CommandGroup {
  register(program: Command, context: CommandContext): void;
}
