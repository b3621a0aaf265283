/**
 * `npm run bench:console`: how long the run page takes to draw a run of N steps (default 1,000)
 * once the timeline's data has arrived, in a real headless Chromium (Debian's chromium, as the
 * e2e specs). A benchmark, not a test: it prints figures and asserts nothing about them.
 *
 * The run is real: a Worker on the in-memory bus and store executes a workflow of N activities,
 * and the console serves it through @baton/client like any other. Each sample loads the run page
 * afresh and reads, from the page's own Performance timeline, the end of the
 * /api/runs/<id>/timeline response and the `baton:timeline-rendered` mark the page sets once the
 * chart and the event list of every step (the compact view, the page's default) are in the DOM (a
 * layout effect, before paint).
 *
 * Options: `--steps N` (default 1000), `--samples N` (default 5), `--port N` (default: a free
 * one of 8300-8399). `--runs-page` times the runs page over a seeded store instead
 * (runs-page-bench.ts).
 */
import { parseArgs } from 'node:util';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Worker } from '@baton/worker';
import { launchChromium } from '../browser.spec-helper.js';
import { freeConsolePort } from '../console-port.spec-helper.js';
import { startConsole } from '../index.js';
import { runsPageBench } from './runs-page-bench.js';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '1000' },
    samples: { type: 'string', default: '5' },
    port: { type: 'string' },
    'runs-page': { type: 'boolean' },
  },
});
const steps = Number(values.steps);
const samples = Number(values.samples);
if (!Number.isInteger(steps) || steps < 1 || !Number.isInteger(samples) || samples < 1) {
  console.error('--steps and --samples must be whole numbers ≥ 1');
  process.exit(2);
}
if (values['runs-page'] === true) {
  await runsPageBench(samples, values.port !== undefined ? Number(values.port) : undefined);
  process.exit(0);
}

const benchStep = defineActivity({ name: 'bench_step', run: async (n: number) => n });
const benchSteps = defineWorkflow({
  name: 'bench_steps',
  version: 1,
  run: async (ctx, input: { steps: number }) => {
    let total = 0;
    for (let n = 0; n < input.steps; n++) total += await ctx.run(benchStep, n);
    return total;
  },
});

const PAGE_FIGURES = `(() => {
  const mark = performance.getEntriesByName('baton:timeline-rendered')[0];
  const response = performance
    .getEntriesByType('resource')
    .find((e) => /\\/api\\/runs\\/[^/]+\\/timeline$/.test(e.name));
  if (!mark || !response) return undefined;
  return { renderMs: mark.startTime - response.responseEnd, bars: document.querySelectorAll('svg.timeline-chart [data-kind="activity"]').length };
})()`;

const transport = memoryTransport();
const store = memoryStore();
const worker = new Worker({ transport, store, workflows: [benchSteps], workerId: 'bench-worker' });
await worker.start();
const client = new Client({ transport, store });
const started = Date.now();
const run = await client.start(benchSteps, { steps });
await run.result({ timeoutMs: 300_000 });
await worker.stop();
console.log(`run ${run.runId}: ${steps} steps executed in ${Date.now() - started} ms`);

const server = await startConsole({
  client,
  options: { port: values.port !== undefined ? Number(values.port) : await freeConsolePort() },
  env: {},
  log: () => {},
});
const browser = await launchChromium();
const figures: number[] = [];
try {
  for (let i = 0; i < samples; i++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(new URL(`/runs/${run.runId}`, server.url).toString());
    // Polled with page.evaluate (run over the DevTools protocol): waitForFunction would evaluate a
    // string inside the page, which the console's CSP (no 'unsafe-eval') rightly refuses.
    let sample: { renderMs: number; bars: number } | undefined;
    const deadline = Date.now() + 60_000;
    while (sample === undefined) {
      if (Date.now() > deadline) throw new Error('the run page did not draw its timeline within 60 s');
      sample = await page.evaluate<{ renderMs: number; bars: number } | undefined>(PAGE_FIGURES);
      if (sample === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    const { renderMs, bars } = sample;
    if (bars !== steps) throw new Error(`the page drew ${bars} bars for ${steps} steps`);
    figures.push(renderMs);
    console.log(`sample ${i + 1}: rendered ${bars} steps ${renderMs.toFixed(1)} ms after the data arrived`);
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
}
const sorted = [...figures].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)]!;
console.log(
  `run page, ${steps} steps: median ${median.toFixed(1)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms ` +
    `over ${samples} sample(s) (data arrived -> chart and event list in the DOM)`,
);
