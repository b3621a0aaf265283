/**
 * `baton console`: serves the web console (@baton/console) against the fleet the BATON_*
 * variables and the global flags name, until Ctrl-C or SIGTERM. The console's own flags override
 * their BATON_CONSOLE_* variables; docs/console.md describes them and the security model.
 */
import { boundedStore, resolveConsoleOptions, startConsole, type ConsoleOptions } from '@baton/console';
import { VARIABLES } from '@baton/host';
import type { Command } from 'commander';
import type { CommandGroup } from '../command.js';
import { parseDuration } from '../arguments.js';
import { addVariableFlag, envWithFlags } from '../context.js';
import { EXIT, UsageError } from '../errors.js';

interface ConsoleFlags {
  port?: string;
  host?: string;
  readOnly?: boolean;
  token?: string;
  metricsUrl?: string[];
  storeTimeout?: string;
}

function portOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be a whole number from 0 to 65535, got '${text}'`);
  return port;
}

/** Resolves once the console should stop: the first Ctrl-C, or SIGTERM (a container stopping). */
function stopRequested(interrupt: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGTERM', done);
      interrupt.removeEventListener('abort', done);
      resolve();
    };
    process.once('SIGTERM', done);
    interrupt.addEventListener('abort', done, { once: true });
    if (interrupt.aborted) done();
  });
}

export const consoleCommands: CommandGroup = {
  register(program, context) {
    const command = program
      .command('console')
      .description('serve the web console (runs, timelines, dead letters, workers, actions) until Ctrl-C');
    // The console's flags, their --help lines and defaults come from its variables' rows.
    for (const variable of VARIABLES) {
      if (variable.readBy.includes('console') && variable.flag !== undefined)
        addVariableFlag(command, variable);
    }
    command.action((flags: ConsoleFlags, command: Command) =>
      context.run(async () => {
        const env = envWithFlags(context.env, context.flags(command));
        const options: ConsoleOptions = {
          ...(flags.port !== undefined && { port: portOf(flags.port) }),
          ...(flags.host !== undefined && { host: flags.host }),
          ...(flags.readOnly && { readOnly: true }),
          ...(flags.token !== undefined && { token: flags.token }),
          ...(flags.metricsUrl !== undefined && { metricsUrls: flags.metricsUrl }),
          ...(flags.storeTimeout !== undefined && {
            storeTimeoutMs: parseDuration('--store-timeout', flags.storeTimeout),
          }),
        };
        // A console that would be unsafe (or a typo) fails here, before any connection is made.
        const { storeTimeoutMs } = resolveConsoleOptions(options, env);
        // Every store call bounded: a frozen store gives the page 503s to retry, not hung requests;
        // so the client does not retry them itself either (its 30 s would hold the request).
        const client = await context
          .session(command)
          .client((store) => boundedStore(store, storeTimeoutMs), { retryUnavailableMs: 0 });
        const server = await startConsole({
          client,
          env,
          options,
          log: (line) => context.io.err(`${line}\n`),
        });
        context.io.out(`Baton console on ${server.url} (Ctrl-C to stop)\n`);
        await stopRequested(context.interrupt);
        await server.close();
        return EXIT.done;
      }),
    );
  },
};
