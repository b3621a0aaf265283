/**
 * Type-checks the TypeScript snippets of Markdown files that are marked for it, so that the
 * examples of the README and of docs/ keep compiling as the API changes. A snippet is checked when the marker
 * `<!-- check: typescript -->` comes before its ```ts fence (blank lines between them allowed); each one is a module of its own,
 * compiled with the repository's settings (tsconfig.base.json: strict, NodeNext, the
 * `@baton/source` condition, so against the packages' current sources) as if it were a file at
 * the repository root.
 */
import { resolve } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './helm.js';

export const CHECK_MARKER = '<!-- check: typescript -->';

export interface Snippet {
  /** The Markdown file it is in, relative to the repository root (`docs/workflows.md`). */
  source: string;
  /** 1-based line of the snippet's first code line in the Markdown file. */
  line: number;
  code: string;
}

/** The marked ```ts snippets of `markdown` (the file `source`), in order. */
export function markedSnippets(markdown: string, source: string): Snippet[] {
  const lines = markdown.split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== CHECK_MARKER) continue;
    // Prettier keeps a blank line between an HTML comment and the fence after it.
    let open = i + 1;
    while (open < lines.length && lines[open]!.trim() === '') open++;
    const fence = lines[open]?.trim();
    if (fence !== '```ts' && fence !== '```typescript') {
      throw new Error(`${source}:${i + 1}: ${CHECK_MARKER} must be followed by a \`\`\`ts fence`);
    }
    const end = lines.findIndex((line, j) => j > open && line.trim() === '```');
    if (end < 0) throw new Error(`${source}:${open + 1}: the marked snippet has no closing fence`);
    snippets.push({ source, line: open + 2, code: lines.slice(open + 1, end).join('\n') });
    i = end;
  }
  return snippets;
}

/** One compiler error, at its line in its Markdown file. */
export interface SnippetError {
  source: string;
  line: number;
  message: string;
}

/** Compiles every snippet (as separate modules, in one program) and returns their errors. */
export function checkSnippets(snippets: readonly Snippet[]): SnippetError[] {
  const configFile = resolve(REPO_ROOT, 'tsconfig.base.json');
  const read = ts.readConfigFile(configFile, (path) => ts.sys.readFile(path));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(
    read.config,
    ts.sys,
    REPO_ROOT,
    { noEmit: true },
    configFile,
  );

  // Virtual files at the repository root, whatever folder the Markdown is in: `@baton/*` resolve
  // through its node_modules. Named for the file and line, so snippets of several files never clash.
  const files = new Map(
    snippets.map((s) => [
      resolve(REPO_ROOT, `${s.source.replaceAll('/', '-')}.snippet-line-${s.line}.ts`),
      s,
    ]),
  );
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) => {
    const snippet = files.get(resolve(name));
    return snippet === undefined
      ? getSourceFile(name, languageVersion, ...rest)
      : ts.createSourceFile(name, snippet.code, languageVersion, true);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(resolve(name)) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files.get(resolve(name))?.code ?? readFile(name);

  const program = ts.createProgram({ rootNames: [...files.keys()], options, host });
  const errors: SnippetError[] = [];
  for (const [name, snippet] of files) {
    const sourceFile = program.getSourceFile(name);
    const diagnostics = [
      ...program.getSyntacticDiagnostics(sourceFile),
      ...program.getSemanticDiagnostics(sourceFile),
    ];
    for (const diagnostic of diagnostics) {
      const at = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line ?? 0;
      errors.push({
        source: snippet.source,
        line: snippet.line + at,
        message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
      });
    }
  }
  return errors;
}
