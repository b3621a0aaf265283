/**
 * `baton console` and `baton serve`: the web console (@baton/console) against the fleet the
 * BATON_* variables and the global flags name, until Ctrl-C or SIGTERM; `serve` adds the HTTP API
 * under `/v1` (docs/http-api.md), with the workflow modules of `--workflows` for its input schemas,
 * and with `--api-only` serves the API alone. Both take `--workflows`: the console's start page makes
 * its forms from those workflows' input schemas and checks starts against them. One server, one port, one set of access rules: the
 * console's flags override their BATON_CONSOLE_* variables for both commands; docs/console.md
 * describes them and the security model.
 */
import { boundedStore, resolveConsoleOptions, startConsole, type ConsoleOptions } from '@baton/console';
import { loadModules, VARIABLES } from '@baton/host';
import type { Command } from 'commander';
import type { CommandContext, CommandGroup } from '../command.js';
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
  /** Workflow modules (each may list several, comma-separated): the start page's input schemas, and `serve`'s API's. */
  workflows?: string[];
  /** `serve` only: the HTTP API without the console. */
  apiOnly?: boolean;
}

/** What one of the two commands serves. */
interface Served {
  name: 'console' | 'serve';
  description: string;
  api: boolean;
}

const SERVED: readonly Served[] = [
  {
    name: 'console',
    description: 'serve the web console (runs, timelines, dead letters, workers, actions) until Ctrl-C',
    api: false,
  },
  {
    name: 'serve',
    description:
      'serve the web console and the HTTP API (/v1: start, describe, wait for, signal, cancel and list runs) until Ctrl-C',
    api: true,
  },
];

export function portOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be a whole number from 0 to 65535, got '${text}'`);
  return port;
}

/** Resolves once the console should stop: the first Ctrl-C, or SIGTERM (a container stopping). */
export function stopRequested(interrupt: AbortSignal): Promise<void> {
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

/** The modules of `--workflows`, each flag's value split at commas. */
function workflowModules(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((m) => m.trim())
    .filter((m) => m !== '');
}

function registerServer(program: Command, context: CommandContext, served: Served): void {
  const command = program.command(served.name).description(served.description);
  // The console's flags, their --help lines and defaults come from its variables' rows.
  for (const variable of VARIABLES) {
    if (variable.readBy.includes('console') && variable.flag !== undefined)
      addVariableFlag(command, variable);
  }
  command.option(
    '--workflows <module>',
    served.api
      ? "workflow modules (built JavaScript, as the workers' BATON_WORKFLOWS) whose input schemas the API and the start page check starts against (the page's form follows them), and whose webhooks (defineWebhook) the API serves at /v1/webhooks/<name>; repeatable"
      : "workflow modules (built JavaScript, as the workers' BATON_WORKFLOWS) whose input schemas the start page makes its forms from and checks starts against; repeatable",
    (value: string, previous: string[] = []) => [...previous, value],
  );
  if (served.api) command.option('--api-only', 'serve the HTTP API alone, without the console');
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
      // A server that would be unsafe (or a typo) fails here, before any connection is made;
      // so does a workflow module that does not load.
      const { storeTimeoutMs } = resolveConsoleOptions(options, env);
      const { workflows, webhooks } = await loadModules(
        workflowModules(flags.workflows),
        process.cwd(),
        '--workflows',
      );
      // Every store call bounded: a frozen store gives the page 503s to retry, not hung requests;
      // so the client does not retry them itself either (its 30 s would hold the request).
      const client = await context
        .session(command)
        .client((store) => boundedStore(store, storeTimeoutMs), { retryUnavailableMs: 0 });
      const apiOnly = served.api && flags.apiOnly === true;
      const server = await startConsole({
        client,
        env,
        options,
        log: (line) => context.io.err(`${line}\n`),
        ...(served.api ? { api: { workflows, webhooks } } : { workflows }),
        ...(apiOnly && { console: false }),
      });
      if (!served.api && workflows.length > 0)
        context.io.err(
          `start page: input schemas of ${workflows.map((w) => `${w.name}@${w.version}`).join(', ')}\n`,
        );
      if (served.api) {
        const loaded = server.apiWorkflows;
        context.io.err(
          loaded.length > 0
            ? `HTTP API: input schemas of ${loaded.join(', ')}\n`
            : 'HTTP API: no --workflows, so starts are checked against the live workers only, not against input schemas\n',
        );
        for (const name of server.apiWebhooks)
          context.io.err(`HTTP API: webhook ${name} at ${server.url}v1/webhooks/${name}\n`);
      }
      const what = apiOnly ? 'Baton HTTP API' : served.api ? 'Baton console and HTTP API' : 'Baton console';
      context.io.out(`${what} on ${server.url} (Ctrl-C to stop)\n`);
      await stopRequested(context.interrupt);
      await server.close();
      return EXIT.done;
    }),
  );
}

export const consoleCommands: CommandGroup = {
  register(program, context) {
    for (const served of SERVED) registerServer(program, context, served);
  },
};
