/**
 * `baton dev [module…]`: one command, no servers. Runs the workflows the modules export
 * (TypeScript or JavaScript) on a few workers in this process, on the embedded bus and store
 * (or on the servers BATON_TRANSPORT_URL / BATON_STORE_URL, or --bus / --store, name), serves the
 * console and the HTTP API (`/v1`, docs/http-api.md) on one loopback port, and reloads the workflows when a file under the modules'
 * folders changes. Before a reload takes effect, the runs in flight are replayed against the new
 * code (the same check as `baton replay-check`), and the ones it would break are listed with the
 * step where code and journal part.
 *
 * Invariants:
 * 1. A reload whose modules do not load (a syntax error, a module that exports no workflow)
 *    changes nothing: the workers keep the code they had, and the error is printed.
 * 2. Reloads never overlap: a change during a reload schedules one more reload after it.
 * 3. Ctrl-C or SIGTERM stops the watcher, the console, then the workers (handing their runs back),
 *    then the adapters; the command then exits 0.
 */
import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { Client } from '@baton/client';
import type { AnyWorkflowDefinition } from '@baton/core';
import { startConsole, type DevReport } from '@baton/console';
import { DevFleet, freshWorkflowLoader, type DevAdapters, type LoadedModules } from '@baton/host';
import type { Command } from 'commander';
import type { CommandContext, CommandGroup } from '../command.js';
import { EXIT, UsageError, type ExitCode } from '../errors.js';
import { envWithFlags } from '../context.js';
import { replayDetail } from './replay-check.js';
import { portOf, stopRequested } from './console.js';

interface DevFlags {
  port?: string;
  host?: string;
  workers?: string;
  watch?: boolean;
  bus?: string;
  store?: string;
}

/** Files whose change reloads the workflows; everything else (logs, data, editors' swap files) does not. */
const SOURCE_FILE = /\.(?:[cm]?[jt]s|json)$/;
/** Folders never watched into. */
const IGNORED = /(?:^|[/\\])(?:node_modules|\.git|dist|\.tmp|coverage)(?:[/\\]|$)/;
/** Editors write a file in several steps: one reload for a burst of changes. */
const SETTLE_MS = 150;

function workersOf(text: string | undefined): number {
  if (text === undefined) return 2;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new UsageError(`--workers must be a whole number from 1 to 64, got '${text}'`);
  return n;
}

function names(workflows: readonly AnyWorkflowDefinition[]): string {
  return workflows.map((w) => `${w.name}@${w.version}`).join(', ');
}

function where(adapters: DevAdapters): string {
  return adapters.embedded
    ? 'the embedded bus and store (in this process; nothing is kept when it stops)'
    : `${adapters.transportKind} and ${adapters.storeKind}`;
}

/** The folders to watch: each module's own folder (paths only; a package is not watched). */
function watchedFolders(modules: readonly string[], cwd: string): string[] {
  const folders = modules
    .filter((m) => m.startsWith('.') || isAbsolute(m))
    .map((m) => dirname(resolve(cwd, m)));
  // A folder inside another watched one is covered by its recursive watch.
  return [...new Set(folders)].filter(
    (f, _, all) => !all.some((other) => other !== f && !relative(other, f).startsWith('..')),
  );
}

/**
 * Watches `folders` and the folders below them (not the IGNORED ones); `onChange` gets the
 * changed file, once per burst. Each folder is watched on its own rather than with
 * `{ recursive: true }`: a folder's watch reports a file by name however an editor writes it
 * (in place, or a new file renamed over the old one), where a recursive watch on Linux can lose a
 * file replaced by a rename. A folder created later is watched from its creation on.
 */
function watchSources(folders: readonly string[], onChange: (file: string) => void): { close(): void } {
  const watchers = new Map<string, FSWatcher>();
  let timer: NodeJS.Timeout | undefined;
  let last = '';
  const add = (folder: string): void => {
    if (watchers.has(folder) || IGNORED.test(folder)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(folder, (_event, name) => {
        if (name === null) return;
        const path = join(folder, String(name));
        if (isFolder(path)) {
          add(path);
          return;
        }
        if (!SOURCE_FILE.test(path)) return;
        last = path;
        clearTimeout(timer);
        timer = setTimeout(() => onChange(last), SETTLE_MS);
      });
    } catch {
      return; // gone already
    }
    watcher.on('error', () => {
      watcher.close();
      watchers.delete(folder);
    });
    watchers.set(folder, watcher);
    for (const entry of readdirSync(folder, { withFileTypes: true }))
      if (entry.isDirectory()) add(join(folder, entry.name));
  };
  for (const folder of folders) add(folder);
  return {
    close() {
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export const devCommands: CommandGroup = {
  register(program, context) {
    program
      .command('dev')
      .description(
        'run your workflows on workers in this process with the console, reloading them when a file ' +
          'changes (the embedded bus and store unless --bus/--store or BATON_* name servers)',
      )
      .argument('[modules...]', 'workflow modules (.ts or .js) exporting defineWorkflow() results')
      .option('--port <n>', 'the console port on loopback; 0 picks a free one', '8636')
      .option('--host <address>', 'the address the console listens on', '127.0.0.1')
      .option('--workers <n>', 'workers in this process', '2')
      .option('--no-watch', 'do not reload on changes')
      .option('--bus <url>', 'run on this bus instead of the embedded one (BATON_TRANSPORT_URL)')
      .option('--store <url>', 'run on this store instead of the embedded one (BATON_STORE_URL)')
      .action((modules: string[], flags: DevFlags, command: Command) =>
        context.run(() => dev(context, command, modules, flags)),
      );
  },
};

async function dev(
  context: CommandContext,
  command: Command,
  modules: string[],
  flags: DevFlags,
): Promise<ExitCode> {
  const { io } = context;
  const given =
    modules.length > 0 ? modules : (context.env['BATON_WORKFLOWS'] ?? '').split(',').filter(Boolean);
  if (given.length === 0)
    throw new UsageError('name the module(s) exporting your workflows, e.g. `baton dev ./src/workflows.ts`');
  const port = portOf(flags.port);
  const workers = workersOf(flags.workers);
  const env: Record<string, string | undefined> = {
    ...envWithFlags(context.env, context.flags(command)),
    ...(flags.bus !== undefined && { BATON_TRANSPORT_URL: flags.bus }),
    ...(flags.store !== undefined && { BATON_STORE_URL: flags.store }),
  };

  const loader = freshWorkflowLoader(given, process.cwd(), 'baton dev');
  const { workflows, webhooks } = await loader.load();
  if (workflows.length === 0)
    throw new UsageError(
      `the module(s) ${given.join(', ')} export webhooks but no workflow: give baton dev the module(s) exporting your workflows too`,
    );
  const fleet = await DevFleet.start({
    workflows,
    workers,
    env,
    logger: terminalLogger(io),
    onEvent: (event, run) => {
      const workflow = run?.workflow ?? '';
      if (event.type === 'run-completed') io.out(`  ✓ ${workflow} run ${event.runId} completed\n`);
      else if (event.type === 'run-failed')
        io.out(`  ✗ ${workflow} run ${event.runId} failed: ${event.error}\n`);
      else if (event.type === 'run-cancelled') io.out(`  ○ ${workflow} run ${event.runId} cancelled\n`);
      else if (event.type === 'dead-lettered') io.out(`  ! dead-lettered (${event.code}): ${event.reason}\n`);
    },
  });
  const client = new Client({
    transport: fleet.adapters.transport,
    store: fleet.adapters.store,
    ...(fleet.adapters.payloadProtection !== undefined && {
      payloadProtection: fleet.adapters.payloadProtection,
    }),
    ...(fleet.adapters.largePayloads !== undefined && { largePayloads: fleet.adapters.largePayloads }),
  });
  const watchers: { close(): void }[] = [];
  // What the console's banner shows (GET /api/dev): the last reload's outcome.
  const report: DevReport = { workflows: workflows.map((w) => `${w.name}@${w.version}`), broken: [] };
  try {
    await client.connect();
    const consoleEnv = Object.fromEntries(
      Object.entries(env).filter(([name]) => name.startsWith('BATON_CONSOLE_')),
    );
    const server = await startConsole({
      client,
      env: fleet.adapters.embedded
        ? { ...consoleEnv, BATON_TRANSPORT_URL: 'memory:', BATON_STORE_URL: 'memory:' }
        : env,
      options: { port, ...(flags.host !== undefined && { host: flags.host }) },
      log: (line) => io.err(`${line}\n`),
      api: { workflows, webhooks },
      devReport: () => report,
    });
    io.out(
      `baton dev: ${workers} worker(s) running ${names(workflows)} on ${where(fleet.adapters)}\n` +
        `  console  ${server.url}\n` +
        `  HTTP API ${server.url}v1/ (docs/http-api.md), e.g.\n` +
        `           curl -X POST ${server.url}v1/runs -H 'Content-Type: application/json' ` +
        `-d '{"workflow":"${workflows[0]!.name}","input":{}}'\n` +
        webhooks.map((w) => `  webhook  ${server.url}v1/webhooks/${w.name} (docs/webhooks.md)\n`).join(''),
    );
    if (flags.watch !== false) {
      const folders = watchedFolders(given, process.cwd());
      const reloader = serialReloads(async (file) => {
        io.out(`\nchanged: ${relative(process.cwd(), file) || file}; reloading\n`);
        const reloaded = await reload(io, client, fleet, loader, report);
        if (reloaded !== undefined) server.replaceApiWorkflows(reloaded.workflows, reloaded.webhooks);
      });
      watchers.push(watchSources(folders, reloader));
      io.out(
        `  watching ${folders.map((f) => relative(process.cwd(), f) || '.').join(', ')} (Ctrl-C to stop)\n`,
      );
    } else {
      io.out('  not watching for changes (Ctrl-C to stop)\n');
    }
    await stopRequested(context.interrupt);
    io.out('stopping: the workers hand their runs back\n');
    for (const watcher of watchers) watcher.close();
    await server.close();
  } finally {
    for (const watcher of watchers) watcher.close();
    await fleet.close();
  }
  return EXIT.done;
}

/** Runs `reload` for each change, one at a time; changes during a reload make one more (invariant 2). */
function serialReloads(reload: (file: string) => Promise<void>): (file: string) => void {
  let running: Promise<void> | undefined;
  let pending: string | undefined;
  const next = (file: string): void => {
    running = reload(file).finally(() => {
      running = undefined;
      if (pending !== undefined) {
        const again = pending;
        pending = undefined;
        next(again);
      }
    });
  };
  return (file) => {
    if (running !== undefined) pending = file;
    else next(file);
  };
}

/** Loads the new code, checks the runs in flight against it, then swaps the workers (invariant 1). */
async function reload(
  io: CommandContext['io'],
  client: Client,
  fleet: DevFleet,
  loader: ReturnType<typeof freshWorkflowLoader>,
  report: DevReport,
): Promise<LoadedModules | undefined> {
  const started = Date.now();
  let loaded: LoadedModules;
  try {
    loaded = await loader.load();
    if (loaded.workflows.length === 0) throw new Error('the modules export no workflow now');
  } catch (err) {
    io.out(`  not reloaded, the workers keep the code they had: ${(err as Error).message}\n`);
    report.notLoaded = (err as Error).message;
    return undefined;
  }
  const { workflows } = loaded;
  try {
    const check = await client.fleet.replayCheck({ workflows, runTimeoutMs: 5_000 });
    const broken = check.runs.filter((r) => r.result === 'nondeterministic' || r.result === 'failed');
    if (check.counts.checked > 0)
      io.out(
        `  ${check.counts.checked} run(s) in flight checked against the new code: ` +
          `${check.counts.ok} resume on it, ${broken.length} would break\n`,
      );
    for (const run of broken)
      io.out(`  ✗ ${run.workflow}@${run.version} run ${run.runId} would break at ${replayDetail(run)}\n`);
    report.broken = broken.map((run) => ({
      runId: run.runId,
      workflow: `${run.workflow}@${run.version}`,
      detail: replayDetail(run),
    }));
  } catch (err) {
    report.broken = [];
    io.out(`  the runs in flight could not be checked: ${(err as Error).message}\n`);
  }
  await fleet.reload(workflows);
  report.workflows = workflows.map((w) => `${w.name}@${w.version}`);
  report.reloadedAt = Date.now();
  delete report.notLoaded;
  io.out(`  reloaded ${names(workflows)} in ${Date.now() - started} ms\n`);
  return loaded;
}

/** The workers' warnings and errors, one line each (info and debug stay quiet in dev). */
function terminalLogger(io: CommandContext['io']) {
  const line =
    (level: string) =>
    (obj: object, msg?: string): void => {
      const err = (obj as { err?: { message?: string } }).err;
      io.err(`  [${level}] ${msg ?? ''}${err?.message !== undefined ? `: ${err.message}` : ''}\n`);
    };
  const quiet = (): void => undefined;
  return { debug: quiet, info: quiet, warn: line('warn'), error: line('error') };
}
