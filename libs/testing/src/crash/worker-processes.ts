/**
 * Real worker processes for crash tests: each is `apps/worker` started with node + tsx, configured
 * by environment, logging JSON lines that the test keeps (and prints when a test fails). Killed
 * with real signals: SIGKILL, SIGTERM, SIGSTOP/SIGCONT.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';

/** The repository root (this file is libs/testing/src/crash/). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const WORKER_MAIN = resolve(REPO_ROOT, 'apps/worker/src/main.ts');

/**
 * How worker processes run: `source` (default) is node + tsx on the TypeScript sources, as the
 * tests do; `dist` is plain node on the built JavaScript (`npm run build` first), as the image
 * does, so benchmarks measure no transpiler. Chosen by BATON_WORKER_RUNTIME.
 */
export type WorkerRuntime = 'source' | 'dist';

/** NODE_OPTIONS of the worker image (the Dockerfile's runtime stage), given to `dist` workers too. */
export const IMAGE_NODE_OPTIONS = '--max-semi-space-size=32';

export function workerRuntime(env: NodeJS.ProcessEnv = process.env): WorkerRuntime {
  const value = env.BATON_WORKER_RUNTIME ?? 'source';
  if (value !== 'source' && value !== 'dist') {
    throw new Error(`BATON_WORKER_RUNTIME is '${value}'; use source or dist`);
  }
  return value;
}

/** The built counterpart of a source module of this repository (src/x.ts -> dist/x.js). */
export function builtModule(sourcePath: string): string {
  const built = sourcePath.replace(/\/src\/(.*)\.ts$/, '/dist/$1.js');
  if (built === sourcePath || !existsSync(built)) {
    throw new Error(`${sourcePath} has no build at ${built}: run \`npm run build\` first`);
  }
  return built;
}

/**
 * How to start node on `sourceModule` (a `.ts` module of this repository) the way worker
 * processes run: its built counterpart on plain node with the image's NODE_OPTIONS under `dist`,
 * the source through tsx under `source`; either way with the node flags of
 * BATON_WORKER_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile the workers of a bench
 * run; node refuses --cpu-prof in NODE_OPTIONS). Used for apps/worker and for the bench's other
 * measured processes, so they all run alike.
 */
export function nodeInvocation(
  sourceModule: string,
  runtime: WorkerRuntime = workerRuntime(),
): { args: string[]; env: Record<string, string> } {
  const nodeArgs = (process.env.BATON_WORKER_NODE_ARGS ?? '').split(' ').filter((a) => a.length > 0);
  return runtime === 'dist'
    ? { args: [...nodeArgs, builtModule(sourceModule)], env: { NODE_OPTIONS: IMAGE_NODE_OPTIONS } }
    : { args: [...nodeArgs, '--import', 'tsx', '--conditions=@baton/source', sourceModule], env: {} };
}

/** The workflow module the crash suite's workers load. */
export const CRASH_WORKFLOW_MODULE = resolve(REPO_ROOT, 'libs/testing/src/crash/crash-workflow.ts');

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export class WorkerProcess {
  readonly logs: LogLine[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private readonly readyWaiters: Array<() => void> = [];
  private isReady = false;
  /** True once the process logged 'worker ready' (it claims runs). */
  get started(): boolean {
    return this.isReady;
  }
  /** Local time the last signal was sent. */
  signalledAt: number | undefined;

  /** `nodeArgs` go to node before the worker's own (e.g. `--import` of a test's preload). */
  constructor(
    readonly name: string,
    env: Record<string, string>,
    nodeArgs: readonly string[] = [],
  ) {
    const runtime = workerRuntime();
    const dist = runtime === 'dist';
    const node = nodeInvocation(WORKER_MAIN, runtime);
    const workflows =
      dist && env.BATON_WORKFLOWS?.endsWith('.ts')
        ? { BATON_WORKFLOWS: builtModule(env.BATON_WORKFLOWS) }
        : {};
    this.child = spawn(process.execPath, [...nodeArgs, ...node.args], {
      cwd: REPO_ROOT,
      // Many workers share this host in tests: each serves its probes on a free port.
      env: {
        ...process.env,
        BATON_LOG_LEVEL: 'info',
        BATON_HTTP_PORT: '0',
        ...node.env,
        ...env,
        ...workflows,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolveExit) =>
      this.child.once('exit', (code, signal) => resolveExit({ code, signal })),
    );
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.onLine(line));
    createInterface({ input: this.child.stderr! }).on('line', (line) => this.stderr.push(line));
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** The port of its probes and `/metrics`, from its 'worker ready' line; throws before that. */
  get httpPort(): number {
    const ready = this.logs.find((l) => l.msg === 'worker ready') as { httpPort?: unknown } | undefined;
    if (typeof ready?.httpPort !== 'number') {
      throw new Error(`worker ${this.pid} logged no httpPort in 'worker ready':\n${this.describe(5)}`);
    }
    return ready.httpPort;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private onLine(line: string): void {
    let parsed: LogLine;
    try {
      parsed = JSON.parse(line) as LogLine;
    } catch {
      parsed = { level: 30, msg: line };
    }
    this.logs.push(parsed);
    if (parsed.msg === 'worker ready') {
      this.isReady = true;
      for (const waiter of this.readyWaiters.splice(0)) waiter();
    }
  }

  /** Resolves when the worker logged 'worker ready'; rejects if it exits first or takes too long. */
  async ready(timeoutMs = 30_000): Promise<void> {
    if (this.isReady) return;
    let timer: NodeJS.Timeout | undefined;
    const exitedFirst = this.exited.then((e) => {
      if (this.isReady) return;
      throw new Error(`${this.name} exited (${e.code ?? e.signal}) before it was ready:\n${this.describe()}`);
    });
    // When the wait timed out, the process exits later (shutdown): that must not be an
    // unhandled rejection, which would end the test process before its cleanup.
    exitedFirst.catch(() => undefined);
    await Promise.race([
      new Promise<void>((r) => this.readyWaiters.push(r)),
      exitedFirst,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${this.name} not ready after ${timeoutMs} ms:\n${this.describe()}`)),
          timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
  }

  signal(signal: NodeJS.Signals): void {
    this.signalledAt = Date.now();
    this.child.kill(signal);
  }

  /** The last log lines and stderr, for failure messages. */
  describe(lines = 30): string {
    const logs = this.logs.slice(-lines).map((l) => JSON.stringify(l));
    return [
      `-- ${this.name} (pid ${this.pid}) logs:`,
      ...logs,
      '-- stderr:',
      ...this.stderr.slice(-lines),
    ].join('\n');
  }
}

/** Spawns workers and makes sure none outlives the test. */
export class WorkerFleet {
  readonly all: WorkerProcess[] = [];
  private counter = 0;

  constructor(readonly env: Record<string, string>) {}

  /** Starts a worker and waits until it is ready (`readyTimeoutMs`, 30 s unless given). */
  async spawn(extraEnv: Record<string, string> = {}, readyTimeoutMs?: number): Promise<WorkerProcess> {
    const worker = new WorkerProcess(`worker-${++this.counter}`, { ...this.env, ...extraEnv });
    this.all.push(worker);
    await worker.ready(readyTimeoutMs);
    return worker;
  }

  /** SIGKILL to every live worker, synchronously: the last resort of a process that is exiting. */
  killAllNow(): void {
    for (const w of this.alive) w.signal('SIGKILL');
  }

  get alive(): WorkerProcess[] {
    return this.all.filter((w) => w.alive);
  }

  /** SIGTERM to every live worker, SIGKILL to those still alive after `graceMs`. */
  async shutdown(graceMs = 15_000): Promise<void> {
    const live = this.alive;
    for (const w of live) {
      w.signal('SIGCONT');
      w.signal('SIGTERM');
    }
    const timer = setTimeout(() => live.forEach((w) => w.alive && w.signal('SIGKILL')), graceMs);
    await Promise.all(live.map((w) => w.exited));
    clearTimeout(timer);
  }

  describe(): string {
    return this.all.map((w) => w.describe(15)).join('\n');
  }
}
