/**
 * `baton dev` as a user runs it: the real binary (`node apps/cli/dist/main.js`, built first) as a
 * process, in a project folder of its own holding one TypeScript workflow module, with no server
 * at all (the embedded bus and store). Runs are started, signalled and awaited over its HTTP API
 * with fetch, as any HTTP client would.
 *
 * In order, on one process: the start-up lines; a run started and left waiting for a signal; an
 * edit that reorders the workflow's steps, which the reload reports as breaking that run at its
 * step; a run started after the reload completing with the new code's result; an edit that does
 * not parse, which changes nothing (the console's banner, GET /api/dev, reports both edits); then SIGTERM ends the command with exit code 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@baton/testing/crash';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');

/** A workflow in erasable TypeScript: `first` then a signal wait then `second`, or the reverse. */
function workflowSource(order: 'first-then-second' | 'second-then-first', greeting: string): string {
  const [a, b] = order === 'first-then-second' ? ['first', 'second'] : ['second', 'first'];
  return `import { defineActivity, defineWorkflow } from '@baton/core';

interface Input { name: string }

const first = defineActivity({ name: 'first', idempotent: true, run: async (input: Input) => \`1:\${input.name}\` });
const second = defineActivity({ name: 'second', idempotent: true, run: async (input: Input) => \`2:\${input.name}\` });

export const greet = defineWorkflow({
  name: 'greet',
  version: 1,
  run: async (ctx, input: Input) => {
    const one: string = await ctx.run(${a}, input);
    await ctx.waitForSignal<boolean>('go');
    const two: string = await ctx.run(${b}, input);
    return { text: '${greeting}', steps: [one, two] };
  },
});
`;
}

/** The command's output, line by line, and a way to wait for a line. */
class Lines {
  readonly all: string[] = [];
  private waiters: { test: RegExp; done: (line: string) => void }[] = [];

  constructor(stream: NodeJS.ReadableStream) {
    createInterface({ input: stream }).on('line', (line) => {
      this.all.push(line);
      this.waiters = this.waiters.filter((w) => (w.test.test(line) ? (w.done(line), false) : true));
    });
  }

  /** The first line (from `from` on) matching `test`, waiting up to `timeoutMs` for it. */
  next(test: RegExp, from = 0, timeoutMs = 30_000): Promise<string> {
    const seen = this.all.slice(from).find((line) => test.test(line));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`no line matching ${test} in ${timeoutMs} ms; output:\n${this.all.join('\n')}`)),
        timeoutMs,
      );
      this.waiters.push({
        test,
        done: (line) => {
          clearTimeout(timer);
          done(line);
        },
      });
    });
  }
}

async function api(
  url: string,
  method: 'GET' | 'POST',
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await fetch(url, {
    method,
    headers: { 'Content-Type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

describe('baton dev (the binary, embedded bus and store, HTTP API over fetch)', () => {
  let project = '';
  let dev: ChildProcess | undefined;
  let out: Lines;
  let base = '';

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'baton-dev-'));
    // The project's dependencies: this repository's packages, as an installed project would have them.
    await symlink(join(REPO_ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
    await writeFile(join(project, 'workflows.ts'), workflowSource('first-then-second', 'v1'));
    dev = spawn(process.execPath, [CLI_MAIN, 'dev', './workflows.ts', '--port', '0'], {
      cwd: project,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    out = new Lines(dev.stdout!);
    new Lines(dev.stderr!).next(/$^/).catch(() => undefined); // drained, so the child never blocks
    const consoleLine = await out.next(/^ {2}console {2}http:\/\//, 0, 60_000);
    base = consoleLine.trim().split(/\s+/)[1]!;
    await out.next(/^ {2}watching /);
  }, 90_000);

  afterAll(async () => {
    if (dev !== undefined && dev.exitCode === null) dev.kill('SIGKILL');
    await rm(project, { recursive: true, force: true });
  });

  it('starts: the workers, the workflows, the console and API URLs, the folder it watches', () => {
    expect(out.all[0]).toMatch(/^baton dev: 2 worker\(s\) running greet@1 on the embedded bus and store/);
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(out.all.join('\n')).toContain(`HTTP API ${base}v1/`);
    expect(out.all.join('\n')).toMatch(/watching \. \(Ctrl-C to stop\)/);
  });

  it('reports the run in flight an edit would break, at its step, then runs the new code', async () => {
    const started = await api(`${base}v1/runs`, 'POST', { workflow: 'greet', input: { name: 'ada' } });
    expect(started.status).toBe(201);
    const runId = started.body['runId'] as string;
    // The run waits for its signal once `first` is journaled.
    await expect
      .poll(async () => (await api(`${base}v1/runs/${runId}`, 'GET')).body['status'], { timeout: 20_000 })
      .toBe('suspended');

    const from = out.all.length;
    await writeFile(join(project, 'workflows.ts'), workflowSource('second-then-first', 'v2'));
    const checked = await out.next(/run\(s\) in flight checked against the new code/, from);
    expect(checked).toMatch(
      /^ {2}1 run\(s\) in flight checked against the new code: 0 resume on it, 1 would break$/,
    );
    const broken = await out.next(/^ {2}✗ .* would break at /, from);
    expect(broken).toContain(`greet@1 run ${runId} would break at step #`);
    expect(broken).toMatch(/the journal has activity:first, the new code asks for activity:second/);
    await out.next(/^ {2}reloaded greet@1 in \d+ ms$/, from);
    // The console's banner says the same (the page polls GET /api/dev).
    const banner = await api(`${base}api/dev`, 'GET');
    expect(banner).toMatchObject({
      status: 200,
      body: {
        workflows: ['greet@1'],
        broken: [
          {
            runId,
            workflow: 'greet@1',
            detail: expect.stringContaining('the new code asks for activity:second'),
          },
        ],
      },
    });
    expect(banner.body['reloadedAt']).toEqual(expect.any(Number));

    // A run started now runs the new code from its first step.
    const fresh = await api(`${base}v1/runs`, 'POST', { workflow: 'greet', input: { name: 'bob' } });
    expect(fresh.status).toBe(201);
    const freshId = fresh.body['runId'] as string;
    await expect
      .poll(async () => (await api(`${base}v1/runs/${freshId}`, 'GET')).body['status'], { timeout: 20_000 })
      .toBe('suspended');
    expect((await api(`${base}v1/runs/${freshId}/signals/go`, 'POST', true)).status).toBe(202);
    const result = await api(`${base}v1/runs/${freshId}/result?wait=20s`, 'GET');
    expect(result).toMatchObject({
      status: 200,
      body: { status: 'completed', result: { text: 'v2', steps: ['2:bob', '1:bob'] } },
    });
    expect(out.all.join('\n')).toContain(`greet run ${freshId} completed`);
  }, 90_000);

  it('an edit that does not parse changes nothing; the workers keep the code they had', async () => {
    const from = out.all.length;
    await writeFile(join(project, 'workflows.ts'), 'export const = ;\n');
    const refused = await out.next(/not reloaded/, from);
    expect(refused).toMatch(
      /the workers keep the code they had: .*could not be loaded.*fix the syntax error/,
    );
    expect((await api(`${base}api/dev`, 'GET')).body['notLoaded']).toMatch(/could not be loaded/);
    const still = await api(`${base}v1/runs`, 'POST', { workflow: 'greet', input: { name: 'cy' } });
    expect(still.status).toBe(201);
  }, 60_000);

  it('SIGTERM stops it: the workers hand their runs back, exit code 0', async () => {
    const exited = new Promise<number | null>((done) => dev!.once('exit', (code) => done(code)));
    dev!.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out.all).toContain('stopping: the workers hand their runs back');
  }, 60_000);
});
