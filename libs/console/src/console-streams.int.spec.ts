/**
 * A run's streams on the console's run page, in a real headless Chromium (browser.spec-helper.ts),
 * on a console served in this process over a real in-process worker on the in-memory bus and
 * store. While the run writes: its tokens appear in the live view as they are written (the run
 * still running); its activity's failed first attempt is superseded by the second, which the view
 * shows as a divider with the first attempt's output greyed and struck; the close ends the view
 * ("closed"). The other stream (JSON values, never closed) shows a line per value and "run
 * finished" at the end. The view reads in both themes, every control is named, and the page
 * raised no error. When the server cannot read a stream further (its bus failing mid-stream, played
 * here by cutting the console client's reads), the view opens it again by itself once reads work,
 * from after the last item shown. Saves screenshots under .tmp/console-screenshots/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Worker } from '@baton/worker';
import { launchChromium, screenshot, unnamedControls } from './browser.spec-helper.js';
import { buildConsole, until } from './console-fleet.spec-helper.js';
import { freeConsolePort } from './console-port.spec-helper.js';
import { startConsole, type ConsoleServer } from './index.js';

/** Gates the spec opens, by name. */
const gates = new Map<string, () => void>();
const opened = new Map<string, Promise<void>>();
function gate(name: string): Promise<void> {
  let found = opened.get(name);
  if (found === undefined) {
    found = new Promise<void>((resolve) => gates.set(name, resolve));
    opened.set(name, found);
  }
  return found;
}
function open(name: string): void {
  void gate(name);
  gates.get(name)!();
}

/**
 * Writes `Hel`, `lo`; the first attempt then waits for the gate `fail` and fails; the second
 * waits for `finish` after its `Hel`, `lo`, then writes the rest.
 */
const speak = defineActivity({
  name: 'page_speak',
  retry: { maxAttempts: 2, initialDelayMs: 10 },
  run: async (words: string[], io) => {
    const out = io.stream<string>('tokens');
    for (const [i, word] of words.entries()) {
      if (i === 2) {
        if (io.attempt === 1) {
          await gate('fail');
          throw new Error('the model timed out');
        }
        await gate('finish');
      }
      await out.write(word);
    }
    return words.length;
  },
});

const speaker = defineWorkflow({
  name: 'page_speaker',
  version: 1,
  run: async (ctx, words: string[]) => {
    const progress = ctx.stream<{ phase: string; words?: number }>('progress');
    progress.write({ phase: 'speaking' });
    const count = await ctx.run(speak, words);
    progress.write({ phase: 'spoken', words: count });
    const tokens = ctx.stream('tokens');
    tokens.write({ words: count });
    tokens.close();
    return count;
  },
});

/** Writes `A`, then `B` once the gate `relay` opens, then closes the stream. */
const relay = defineWorkflow({
  name: 'page_relay',
  version: 1,
  run: async (ctx) => {
    const out = ctx.stream<string>('relay');
    out.write('A');
    await ctx.activity('wait_relay', () => gate('relay'));
    out.write('B');
    out.close();
  },
});

/**
 * The console client's stream reads, breakable: `cutReads` makes every read under way fail and
 * every new one fail at once, as a bus that stopped answering would, until `mendReads`.
 */
let readsCut = false;
const reading = new Set<AbortController>();
const CUT = 'the bus stopped answering (a test)';
function cutReads(): void {
  readsCut = true;
  for (const read of reading) read.abort(new Error(CUT));
}
function mendReads(): void {
  readsCut = false;
}
function breakable(target: Client): void {
  const original = target.stream.bind(target);
  target.stream = ((runId: string, name: string, options: { signal?: AbortSignal } = {}) => {
    const read = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, read.signal]) : read.signal;
    return (async function* () {
      reading.add(read);
      try {
        if (readsCut) throw new Error(CUT);
        yield* original(runId, name, { ...options, signal });
        if (read.signal.aborted) throw read.signal.reason;
      } finally {
        reading.delete(read);
      }
    })();
  }) as Client['stream'];
}

let transport: ReturnType<typeof memoryTransport>;
let store: ReturnType<typeof memoryStore>;
let worker: Worker;
let client: Client;
let server: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  await buildConsole();
  transport = memoryTransport();
  store = memoryStore();
  worker = new Worker({ transport, store, workflows: [speaker, relay] });
  await worker.start();
  client = new Client({ transport, store });
  breakable(client);
  server = await startConsole({ client, options: { port: await freeConsolePort() }, env: {}, log: () => {} });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  for (const name of ['fail', 'finish', 'relay']) open(name);
  await browser?.close();
  await server?.close();
  await worker?.stop();
  await client?.close();
});

const output = (page: Page) => page.getByRole('log', { name: 'Stream tokens' });

/** Evaluated in the page (a string: this spec is compiled without the DOM's types). */
function styleOf(page: Page, selector: string, property: string): Promise<string> {
  return page.evaluate(
    `getComputedStyle(document.querySelector(${JSON.stringify(selector)})).getPropertyValue(${JSON.stringify(property)})`,
  ) as Promise<string>;
}

describe('a run’s streams on the console’s run page', () => {
  it(
    'shows the tokens live, a restarted step’s output superseded, and the end',
    { timeout: 120_000 },
    async () => {
      const run = await client.start(speaker, ['Hel', 'lo', ', ', 'wor', 'ld']);
      const errors: string[] = [];
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(new URL(`/runs/${encodeURIComponent(run.runId)}`, server.url).toString());
      const streams = page.getByRole('group', { name: 'Streams' });
      await streams.getByRole('button', { name: 'tokens' }).click();
      // The first attempt's tokens, live: the run is still running.
      await until('the first tokens on the page', async () =>
        (await output(page).textContent()) === 'Hello' ? true : undefined,
      );
      expect(await page.getByTestId('stream-state').textContent()).toMatch(/^live/);
      expect((await store.runs.get(run.runId))?.status).toBe('running');
      expect(await unnamedControls(page)).toEqual([]);

      // The first attempt fails; the second starts with a reset: a divider, the first output struck.
      open('fail');
      const divider = page.getByRole('separator');
      await divider.waitFor();
      expect(await divider.textContent()).toBe(
        'step #0 restarted (attempt 2): its output above is superseded',
      );
      await until('the second attempt’s first tokens', async () =>
        (await output(page).textContent())?.endsWith('superseded' + 'Hello') === true ? true : undefined,
      );
      const superseded = page.locator('.stream-chunk.superseded');
      expect(await superseded.allTextContents()).toEqual(['Hel', 'lo']);
      expect(await styleOf(page, '.stream-chunk.superseded', 'text-decoration-line')).toBe('line-through');
      await screenshot(page, 'run-stream-restarted');

      // The rest, then the close: the view ends, with each token once after the divider.
      open('finish');
      await until('the close', async () =>
        (await page.getByTestId('stream-state').getAttribute('data-state')) === 'ended' ? true : undefined,
      );
      expect(await page.getByTestId('stream-state').textContent()).toBe('closed: the run closed this stream');
      expect(await page.locator('.stream-chunk:not(.superseded)').allTextContents()).toEqual([
        'Hel',
        'lo',
        ', ',
        'wor',
        'ld',
        '\n{"words":5}\n',
      ]);
      expect(await output(page).textContent()).toBe(
        'Hello' +
          'step #0 restarted (attempt 2): its output above is superseded' +
          'Hello, world\n{"words":5}\n',
      );
      await screenshot(page, 'run-stream-closed');

      // The other stream: a JSON line per value, and the run's end (it was never closed).
      await until('the run to complete', async () =>
        (await store.runs.get(run.runId))?.status === 'completed' ? true : undefined,
      );
      await streams.getByRole('button', { name: 'progress' }).click();
      expect(await streams.getByRole('button', { name: 'progress' }).getAttribute('aria-pressed')).toBe(
        'true',
      );
      const progress = page.getByRole('log', { name: 'Stream progress' });
      await until('the progress stream’s end', async () =>
        (await page.getByTestId('stream-state').getAttribute('data-state')) === 'ended' ? true : undefined,
      );
      expect(await progress.textContent()).toBe('{"phase":"speaking"}\n{"phase":"spoken","words":5}\n');
      expect(await page.getByTestId('stream-state').textContent()).toBe(
        'run finished (completed): nothing more will come',
      );
      expect(errors).toEqual([]);
      await page.close();
    },
  );

  it('reads in the light and the dark theme', { timeout: 60_000 }, async () => {
    const [finished] = (await client.runs.list({ workflow: 'page_speaker' })).runs;
    const colours = async (colorScheme: 'light' | 'dark'): Promise<string[]> => {
      const page = await browser.newPage({ colorScheme, viewport: { width: 1280, height: 1000 } });
      await page.goto(new URL(`/runs/${encodeURIComponent(finished!.runId)}`, server.url).toString());
      await page.getByRole('group', { name: 'Streams' }).getByRole('button', { name: 'tokens' }).click();
      await page.getByRole('separator').waitFor();
      await until('the end', async () =>
        (await page.getByTestId('stream-state').getAttribute('data-state')) === 'ended' ? true : undefined,
      );
      const found = [
        await styleOf(page, '.stream-output', 'background-color'),
        await styleOf(page, '.stream-chunk:not(.superseded)', 'color'),
        await styleOf(page, '.stream-chunk.superseded', 'color'),
        await styleOf(page, '.stream-reset', 'color'),
      ];
      if (colorScheme === 'dark') await screenshot(page, 'run-stream-dark');
      await page.close();
      return found;
    };
    // --bg-alt, --fg, --muted and --wait of each theme (styles.css).
    expect(await colours('light')).toEqual([
      'rgb(245, 246, 248)',
      'rgb(17, 24, 39)',
      'rgb(107, 114, 128)',
      'rgb(214, 137, 16)',
    ]);
    expect(await colours('dark')).toEqual([
      'rgb(31, 41, 55)',
      'rgb(229, 231, 235)',
      'rgb(156, 163, 175)',
      'rgb(251, 191, 36)',
    ]);
  });

  it(
    'opens a stream again by itself after the server could not read it, from after the last item shown',
    { timeout: 120_000 },
    async () => {
      const run = await client.start(relay, undefined);
      const errors: string[] = [];
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(new URL(`/runs/${encodeURIComponent(run.runId)}`, server.url).toString());
      const view = page.getByRole('log', { name: 'Stream relay' });
      const state = page.getByTestId('stream-state');
      await until('the first item live', async () => ((await view.textContent()) === 'A' ? true : undefined));

      // The server's read fails mid-stream: the view says so and opens the stream again, later.
      cutReads();
      await until('the view to reopen', async () =>
        (await state.getAttribute('data-state')) === 'reopening' ? true : undefined,
      );
      expect(await state.textContent()).toMatch(
        /^interrupted \(.*the bus stopped answering.*\): opening it again in \d+ s/,
      );
      // Reads still fail: it tries again (a longer wait), and keeps what it showed.
      await until('a second try', async () =>
        (await state.textContent())?.includes('in 2 s') ? true : undefined,
      );
      expect(await view.textContent()).toBe('A');

      // Reads work again: the view is live from after `A`, and shows `B` once, then the close.
      mendReads();
      await until('live again', async () =>
        (await state.getAttribute('data-state')) === 'live' ? true : undefined,
      );
      open('relay');
      await until('the end', async () =>
        (await state.getAttribute('data-state')) === 'ended' ? true : undefined,
      );
      expect(await view.textContent()).toBe('AB');
      expect(await state.textContent()).toBe('closed: the run closed this stream');
      expect(errors).toEqual([]);
      await page.close();
    },
  );
});
