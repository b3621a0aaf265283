/**
 * `npm run bench:group-commit -- [--runs N] [--steps N] [--out FILE]`: the group-commit probe
 * (group-commit-probe.ts) on the test servers, printed as a table and written as JSON.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import { parseCommandArgs, runCommand, wholeNumber } from './command.js';
import { groupCommitProbe, type GroupCommitProbeResult } from './group-commit-probe.js';

const USAGE = `Usage: npm run bench:group-commit -- [--runs N] [--steps N] [--out FILE]

  --runs N     concurrent runs (default 1000)
  --steps N    sequential steps per run (default 10)
  --out FILE   JSON report (default .tmp/bench/group-commit-<time>.json)
  --help       this text

Servers: BATON_TEST_NATS_URL, BATON_TEST_REDIS_URL (the tests' variables and defaults).`;

function parse(argv: string[]): { runs: number; steps: number; out: string } | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    runs: { type: 'string' },
    steps: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  return {
    runs: values.runs === undefined ? 1000 : wholeNumber('--runs', values.runs),
    steps: values.steps === undefined ? 10 : wholeNumber('--steps', values.steps),
    out: values.out ?? `.tmp/bench/group-commit-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  };
}

function table(result: GroupCommitProbeResult): string {
  const rows = [
    [
      'mode',
      'steps/s',
      'step p50/p99 ms',
      'records',
      'entries/record',
      'store calls',
      'client CPU s',
      'client µs/step',
      'nats-server CPU s',
      'redis CPU s',
      'resume p50 ms',
      'bytes read/run p50',
    ],
    ...result.modes.map((m) => [
      m.mode,
      Math.round(m.stepsPerSecond).toLocaleString('en-US'),
      `${m.stepLatency.p50.toFixed(2)} / ${m.stepLatency.p99.toFixed(2)}`,
      String(m.publishes),
      m.entriesPerRecord.toFixed(1),
      String(m.storeCalls),
      m.cpuSeconds.client.toFixed(2),
      m.clientCpuPerStepMicros.toFixed(1),
      m.cpuSeconds.natsServer.toFixed(2),
      m.cpuSeconds.redisServer.toFixed(2),
      m.resume.latency.p50.toFixed(2),
      String(Math.round(m.resume.bytesPerRun.p50)),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')).join('\n');
}

await runCommand(USAGE, parse, async (config) => {
  const result = await groupCommitProbe({
    natsUrl: natsTestUrl(),
    redisUrl: redisTestUrl(),
    runs: config.runs,
    steps: config.steps,
    log: (line) => console.log(line),
  });
  console.log(
    `\n${result.runs} runs x ${result.stepsPerRun} steps, ${result.entryBytes}-byte entries, NATS + Redis\n`,
  );
  console.log(table(result));
  const out = resolve(config.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, ...result }, null, 2)}\n`,
  );
  console.log(`\nJSON report: ${out}`);
});
