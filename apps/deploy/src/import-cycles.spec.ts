/**
 * No import cycle among the modules of any package, type-only and dynamic (`import('./x.js')`)
 * imports included: a package reads in one direction, so every file can be understood from the
 * ones it imports, and a lazy import is still a dependency (it only moves when the module loads).
 * Relative imports within each package's src/ are followed (specs and spec helpers are leaves and
 * left out); imports of other packages are not (the package graph is kept acyclic by nx and the doors).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const isSpec = (file: string): boolean => /\.spec(-helper|-d)?\.ts$/.test(file);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !isSpec(entry.name) ? [path] : [];
  });
}

/** The module specifiers `source` names: imports and re-exports (type-only too) and `import()` calls. */
export function specifiersOf(source: ts.SourceFile): string[] {
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (specifier && ts.isStringLiteral(specifier)) found.push(specifier.text);
  }
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Each file's relative imports, re-exports and dynamic imports, resolved to files. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    const targets: string[] = [];
    for (const specifier of specifiersOf(source)) {
      if (!specifier.startsWith('.')) continue;
      const base = resolve(dirname(file), specifier.replace(/\.js$/, ''));
      const target = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
      if (target !== undefined) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The graph's cycles, as the strongly connected components of more than one file (Tarjan). */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)!.includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

const packages = ['libs', 'apps'].flatMap((group) =>
  readdirSync(join(REPO, group))
    .filter((name) => existsSync(join(REPO, group, name, 'src')))
    .map((name) => `${group}/${name}`),
);

describe('import cycles', () => {
  it('finds a cycle when there is one, type-only imports included', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c']]);
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('reads static, type-only, re-exported and dynamic imports', () => {
    const source = ts.createSourceFile(
      'x.ts',
      [
        "import { a } from './a.js';",
        "import type { B } from './b.js';",
        "export { c } from './c.js';",
        "export async function load() { return (await import('./d.js')).d; }",
        'const e = () => import(`./e.js`);',
      ].join('\n'),
      ts.ScriptTarget.Latest,
    );
    expect(specifiersOf(source)).toEqual(['./a.js', './b.js', './c.js', './d.js', './e.js']);
  });

  for (const pkg of packages) {
    it(`${pkg} has none`, () => {
      const graph = importGraph(sourceFiles(join(REPO, pkg, 'src')));
      const cycles = cyclesOf(graph).map((cycle) => cycle.map((file) => relative(REPO, file)).join(' <-> '));
      expect(cycles).toEqual([]);
    });
  }
});
