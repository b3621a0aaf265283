/**
 * `npm run bench:executor -- [--runs N] [--repeat N] [--journal per-run|group]`: Baton's own CPU
 * per durable step with no I/O at all. One process runs a Worker and a Client on the in-memory transport and store and
 * executes chain10 (`--runs` runs enqueued at once, `--repeat` times); it reports steps/s and the
 * process's CPU per step (worker and client together). The figure is the floor under every
 * real-adapter number: what the executor, the journal writer, the worker and telemetry cost before
 * a single byte goes to a bus or a store (docs/performance.md). The journal is per run unless
 * `--journal group` says otherwise: with nothing to save on the way to a server, the group journal
 * is only the cost of its records (the memory store's default, which the embedded demo and the
 * unit specs use, is group; this floor is the executor's).
 *
 * Run it on the built packages (`npx nx run-many -t build` first; the npm script does), as a
 * worker process runs them: through the sources, tsx's helpers add their own cost per call.
 */
import { performance } from 'node:perf_hooks';
import { Client } from '@baton/client';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Worker, type WorkerOptions } from '@baton/worker';
import { parseCommandArgs, runCommand, UsageError, wholeNumber } from './command.js';
import { chain10, STEPS_PER_RUN } from './workflows.js';

const USAGE = `Usage: npm run bench:executor -- [--runs N] [--repeat N] [--journal per-run|group]

  --runs N         chain10 runs enqueued at once per round (default 5000)
  --repeat N       rounds, each on fresh adapters (default 3)
  --journal MODE   per-run (default: the executor's floor) or group (the memory store's default)
  --help           this text`;

interface ExecutorBenchConfig {
  runs: number;
  repeat: number;
  journal: NonNullable<WorkerOptions['journal']>;
}

function parse(argv: string[]): ExecutorBenchConfig | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    runs: { type: 'string' },
    repeat: { type: 'string' },
    journal: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  const journal = values.journal ?? 'per-run';
  if (journal !== 'per-run' && journal !== 'group') {
    throw new UsageError(`--journal is '${journal}'; use per-run or group`);
  }
  return {
    runs: values.runs === undefined ? 5000 : wholeNumber('--runs', values.runs),
    repeat: values.repeat === undefined ? 3 : wholeNumber('--repeat', values.repeat),
    journal,
  };
}

interface Round {
  stepsPerSecond: number;
  cpuMicrosPerStep: number;
}

async function round(runs: number, journal: ExecutorBenchConfig['journal']): Promise<Round> {
  const transport = memoryTransport();
  const store = memoryStore();
  const client = new Client({ transport, store, pollIntervalMs: 5 });
  const worker = new Worker({ transport, store, workflows: [chain10], concurrency: 1000, journal });
  await client.connect();
  await worker.start();
  try {
    // Warm-up: the first runs pay for compilation.
    for (let i = 0; i < 50; i++) await (await client.start(chain10, i)).result();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const handles = [];
    for (let i = 0; i < runs; i++) handles.push(await client.start(chain10, i));
    for (const [i, handle] of handles.entries()) {
      const result = await handle.result({ timeoutMs: 120_000 });
      if (result !== i + STEPS_PER_RUN.chain10)
        throw new Error(`run ${handle.runId} returned ${String(result)}`);
    }
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const steps = runs * STEPS_PER_RUN.chain10;
    return { stepsPerSecond: steps / seconds, cpuMicrosPerStep: (used.user + used.system) / steps };
  } finally {
    await worker.stop();
    await Promise.allSettled([transport.close(), store.close()]);
  }
}

await runCommand(USAGE, parse, async (config) => {
  console.log(
    `chain10 on the memory adapters, ${config.runs} runs per round, journal ${config.journal}, node ${process.version}`,
  );
  for (let i = 1; i <= config.repeat; i++) {
    const r = await round(config.runs, config.journal);
    console.log(
      `round ${i}: ${Math.round(r.stepsPerSecond).toLocaleString('en-US')} steps/s, ` +
        `${r.cpuMicrosPerStep.toFixed(1)} µs of CPU per step (worker and client)`,
    );
  }
});
