/**
 * `baton console`: serves the web console (@baton/console) against the fleet the BATON_*
 * variables and the global flags name, until Ctrl-C or SIGTERM. The console's own flags override
 * their BATON_CONSOLE_* variables; docs/console.md describes them and the security model.
 */
import {
  boundedStore,
  CONSOLE_ENV,
  DEFAULT_CONSOLE_HOST,
  DEFAULT_CONSOLE_PORT,
  DEFAULT_STORE_TIMEOUT_MS,
  resolveConsoleOptions,
  startConsole,
  type ConsoleOptions,
} from '@baton/console';
import type { Command } from 'commander';
import type { CommandGroup } from '../command.js';
import { envWithFlags } from '../context.js';
import { EXIT, UsageError } from '../errors.js';

interface ConsoleFlags {
  port?: string;
  host?: string;
  readOnly?: boolean;
  token?: string;
  metricsUrl?: string[];
  storeTimeout?: string;
}

function storeTimeoutOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()))
    throw new UsageError(`--store-timeout must be a whole number of milliseconds, got '${text}'`);
  return Number(text.trim());
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
    program
      .command('console')
      .description('serve the web console (runs, timelines, dead letters, workers, actions) until Ctrl-C')
      .option('--port <port>', `port to listen on (${CONSOLE_ENV.port}; default ${DEFAULT_CONSOLE_PORT})`)
      .option(
        '--host <host>',
        `address to bind (${CONSOLE_ENV.host}; default ${DEFAULT_CONSOLE_HOST}, loopback)`,
      )
      .option('--read-only', `hide and refuse every action (${CONSOLE_ENV.readOnly})`)
      .option(
        '--token <token>',
        `access token, required beyond loopback (${CONSOLE_ENV.token}; prefer the variable: a flag shows in ps)`,
      )
      .option(
        '--metrics-url <url>',
        `a worker's /metrics URL for the workers page's figures; repeat for each worker (${CONSOLE_ENV.metricsUrls}: comma-separated)`,
        (url: string, urls: string[] = []) => [...urls, url],
      )
      .option(
        '--store-timeout <ms>',
        `how long one store call may take before the page gets a 503 to retry (${CONSOLE_ENV.storeTimeoutMs}; default ${DEFAULT_STORE_TIMEOUT_MS})`,
      )
      .action((flags: ConsoleFlags, command: Command) =>
        context.run(async () => {
          const env = envWithFlags(context.env, context.flags(command));
          const options: ConsoleOptions = {
            ...(flags.port !== undefined && { port: portOf(flags.port) }),
            ...(flags.host !== undefined && { host: flags.host }),
            ...(flags.readOnly && { readOnly: true }),
            ...(flags.token !== undefined && { token: flags.token }),
            ...(flags.metricsUrl !== undefined && { metricsUrls: flags.metricsUrl }),
            ...(flags.storeTimeout !== undefined && { storeTimeoutMs: storeTimeoutOf(flags.storeTimeout) }),
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
