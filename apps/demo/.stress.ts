import { runDemo } from './src/demo.js';
const configs = [
  { runs: 50 },
  { runs: 50, seed: 1 },
  { runs: 80, concurrency: 5 },
  { runs: 50, leaseMs: 1000 },
  { runs: 50, workers: 5, concurrency: 4 },
  { runs: 100, startIntervalMs: 5 },
  { runs: 30, crashDeadlineMs: 200, crashAfterPulledShare: 0.1 },
  { runs: 50, concurrency: 2 },
];
const n = Number(process.argv[2] ?? 2);
let bad = 0;
for (let i = 0; i < n; i++)
  for (const c of configs) {
    const s = await runDemo({ ...c, output: 'silent' });
    const failed = s.invariants.filter((x) => !x.ok);
    if (!s.ok) bad++;
    console.log(
      JSON.stringify(c),
      s.ok ? 'ok' : 'FAIL',
      `${(s.wallTimeMs / 1000).toFixed(1)}s owned=${s.ownedAtCrash} resumed=${s.resumedAfterCrash} recon=${s.reconciled} absorbed=${s.absorbedReexecutions}`,
      failed.map((f) => `${f.name}: ${f.detail}`).join(' | '),
      s.ok ? '' : s.warnings.join(' / '),
    );
  }
console.log('bad', bad);
process.exit(0);
