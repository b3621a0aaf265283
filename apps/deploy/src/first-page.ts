/**
 * What keeps the README a first page (issue 35): a line budget, links that resolve, and shell
 * commands that something runs. The README says what Baton is, how to try it, how to run a workflow
 * of your own and how to move to real servers; everything else lives in docs/, which it links to.
 *
 * - Links: every relative link of README.md, docs/*.md and the READMEs of the packages, the chart
 *   and infra/ names a file that exists, and a link to
 *   a heading of a Markdown file (`page.md#slug`) names one that is there, by the slug GitHub
 *   gives it. Fenced blocks and inline code are not Markdown, so links and headings in them are
 *   not looked at.
 * - Commands: every command of the README's ```sh blocks is listed in README_COMMANDS with the
 *   files that run it (a spec, or CI's script) and a text each file must hold, so a command the
 *   README shows cannot drift from what is tested, and a new one must say what runs it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT } from './helm.js';

/**
 * The README's length, in lines: a page read top to bottom in a few minutes (issue 35 asks for
 * "at most about 200"). A section that would push it over belongs in docs/ with a link.
 */
export const README_LINE_BUDGET = 200;

/** README.md and docs/*.md, relative to the repository root: the pages whose marked snippets are compiled. */
export function docPages(): string[] {
  return ['README.md', ...markdownIn('docs')];
}

/** The Markdown pages whose links are checked: docPages, and the READMEs of the packages, the chart and infra/. */
export function linkedPages(): string[] {
  const readmes = ['libs', 'apps', 'tests', 'helm', 'infra', 'infra/clusters'].flatMap((parent) =>
    readdirSync(join(REPO_ROOT, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(REPO_ROOT, parent, entry.name, 'README.md')))
      .map((entry) => `${parent}/${entry.name}/README.md`),
  );
  return [...docPages(), ...readmes.sort()];
}

function markdownIn(folder: string): string[] {
  return readdirSync(join(REPO_ROOT, folder))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `${folder}/${name}`);
}

/** Markdown with its fenced blocks blanked (line count kept), so nothing inside them is read as Markdown. */
export function withoutFences(markdown: string): string {
  let fence: string | undefined;
  return markdown
    .split('\n')
    .map((line) => {
      const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === undefined) {
        if (opener === undefined) return line;
        fence = opener;
        return '';
      }
      if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      return '';
    })
    .join('\n');
}

/** Inline code spans blanked: a `](x)` inside backticks is text, not a link. */
function withoutInlineCode(text: string): string {
  return text.replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
}

/** The anchor GitHub gives a heading: its text lowercased, punctuation dropped, spaces as hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every heading anchor of a Markdown page; a repeated heading's second anchor ends `-1`, as on GitHub. */
export function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  for (const line of withoutFences(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = headingSlug(heading);
    let slug = base;
    for (let n = 1; slugs.has(slug); n++) slug = `${base}-${n}`;
    slugs.add(slug);
  }
  return slugs;
}

export interface Link {
  /** 1-based line of the link's target in its page. */
  line: number;
  target: string;
}

/** The link and image targets of a page that point inside the repository (no URL scheme, no mail). */
export function relativeLinks(markdown: string): Link[] {
  const text = withoutInlineCode(withoutFences(markdown));
  const links: Link[] = [];
  for (const match of text.matchAll(/\]\(([^()\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    links.push({ line: text.slice(0, match.index).split('\n').length, target });
  }
  return links;
}

/** What is wrong with each relative link of `page` (a path from the repository root): a missing file or heading. */
export function brokenLinks(page: string, markdown: string, root: string = REPO_ROOT): string[] {
  const problems: string[] = [];
  const slugCache = new Map<string, Set<string>>();
  const slugsOf = (file: string): Set<string> => {
    let slugs = slugCache.get(file);
    if (slugs === undefined) {
      slugs = headingSlugs(readFileSync(file, 'utf8'));
      slugCache.set(file, slugs);
    }
    return slugs;
  };
  for (const { line, target } of relativeLinks(markdown)) {
    const hash = target.indexOf('#');
    const path = hash < 0 ? target : target.slice(0, hash);
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const file = path === '' ? resolve(root, page) : resolve(root, dirname(page), path);
    const where = `${page}:${line}: ${target}`;
    if (!existsSync(file)) {
      problems.push(`${where}: no such file (${relative(root, file)})`);
      continue;
    }
    if (anchor === undefined || !file.endsWith('.md')) continue;
    const slugs = path === '' ? headingSlugs(markdown) : slugsOf(file);
    if (!slugs.has(anchor))
      problems.push(`${where}: ${relative(root, file)} has no heading with this anchor`);
  }
  return problems;
}

/**
 * The commands of a page's ```sh (or bash, shell) blocks: one per line, a line ending in `\`
 * joined with the next, a trailing `# comment` dropped, spaces collapsed.
 */
export function shellCommands(markdown: string): string[] {
  const commands: string[] = [];
  let inShell = false;
  let pending = '';
  for (const line of markdown.split('\n')) {
    const fence = /^\s*```\s*(\w*)/.exec(line);
    if (fence !== null) {
      inShell = !inShell && ['sh', 'bash', 'shell'].includes(fence[1]!);
      continue;
    }
    if (!inShell) continue;
    const joined = pending + line;
    if (/\\\s*$/.test(joined)) {
      pending = joined.replace(/\\\s*$/, ' ');
      continue;
    }
    pending = '';
    const command = joined
      .replace(/(^|\s)#.*$/, '')
      .replace(/\s+/g, ' ')
      .trim();
    if (command !== '') commands.push(command);
  }
  return commands;
}

/** A README command and what runs it. */
export interface RunCommand {
  /** As shellCommands gives it. */
  command: string;
  /** Each file (from the repository root) must hold its text: the command, or the code that runs it. */
  runBy: ReadonlyArray<{ file: string; text: string }>;
  /** How those files run it, when they run the same code rather than the same text. */
  how?: string;
}

/** Every command of the README's ```sh blocks, with the spec or CI step that runs it. */
export const README_COMMANDS: readonly RunCommand[] = [
  {
    command: 'npx baton dev ./workflows.ts',
    runBy: [
      { file: 'apps/cli/src/dev.int.spec.ts', text: "[CLI_MAIN, 'dev', './workflows.ts', '--port', '0']" },
      { file: '.ci/run', text: 'npx --no-install baton --version' },
    ],
    how:
      'dev.int.spec.ts runs the built CLI (what `npx baton` starts) with `dev ./workflows.ts` on a ' +
      'free port; CI checks that `npx baton` starts the built CLI in a fresh clone',
  },
  {
    command:
      'curl -X POST http://127.0.0.1:8636/v1/runs -H \'Content-Type: application/json\' -d \'{"workflow":"greet","input":{"name":"ada"}}\'',
    runBy: [
      {
        file: 'apps/cli/src/dev.int.spec.ts',
        text: "api(`${base}v1/runs`, 'POST', { workflow: 'greet', input: { name: 'ada' } })",
      },
      { file: 'apps/cli/src/http-api.serial.int.spec.ts', text: "'curl'" },
    ],
    how:
      "dev.int.spec.ts posts this body to the dev server's /v1/runs (on the free port it picked); " +
      'http-api.int.spec.ts drives every route with curl itself',
  },
  {
    command: 'npm install && npm start',
    runBy: [
      { file: '.ci/run', text: 'npm ci --no-audit --no-fund' },
      { file: 'package.json', text: '"start": "npm run --silent demo --workspace @baton/demo --"' },
      { file: 'apps/demo/package.json', text: '"demo": "tsx --conditions=@baton/source src/main.ts"' },
      { file: 'apps/demo/src/main.ts', text: 'runDemo(' },
      { file: 'apps/demo/src/demo.spec.ts', text: 'await runDemo({' },
    ],
    how:
      'CI installs from the lockfile with npm ci; `npm start` runs the demo workspace, whose main calls ' +
      'runDemo with the parsed options, and demo.spec.ts runs runDemo and checks every invariant',
  },
  {
    command: 'npx tsx --conditions=@baton/source my-workflows/src/try-it.ts',
    runBy: [
      {
        file: 'tests/system/src/own-workflow.int.spec.ts',
        text: "run(TSX, ['--conditions=@baton/source', `${relativeFolder}/src/try-it.ts`])",
      },
    ],
    how: 'the spec writes such a folder under .tmp/ and runs the tsx binary on its try-it.ts',
  },
  {
    command: 'export BATON_TRANSPORT_URL=nats://127.0.0.1:4222',
    runBy: [
      {
        file: 'tests/system/src/crash-environment.spec-helper.ts',
        text: 'BATON_TRANSPORT_URL: transportUrl',
      },
      { file: 'tests/system/src/own-workflow.int.spec.ts', text: "crashEnvironment('redis', 'nats')" },
    ],
    how: "own-workflow.int.spec.ts gives the worker the test NATS server's URL (crashEnvironment's workerEnv)",
  },
  {
    command: 'export BATON_STORE_URL=redis://127.0.0.1:6379',
    runBy: [
      { file: 'tests/system/src/crash-environment.spec-helper.ts', text: 'BATON_STORE_URL: storeUrl' },
      { file: 'tests/system/src/own-workflow.int.spec.ts', text: "crashEnvironment('redis', 'nats')" },
    ],
    how: "own-workflow.int.spec.ts gives the worker the test Redis server's URL (crashEnvironment's workerEnv)",
  },
  {
    command: 'BATON_WORKFLOWS=./my-workflows/src/loan.ts npm run worker',
    runBy: [
      { file: 'tests/system/src/own-workflow.int.spec.ts', text: '.scripts.worker!' },
      {
        file: 'tests/system/src/own-workflow.int.spec.ts',
        text: 'BATON_WORKFLOWS: `${relativeFolder}/${module}`',
      },
    ],
    how: "the spec runs package.json's `worker` script with BATON_WORKFLOWS naming its folder's src module",
  },
];
