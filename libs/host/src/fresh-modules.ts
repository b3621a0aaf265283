/**
 * Workflow modules loaded again after they changed, for `baton dev`. Node keeps every module it
 * imported for the life of the process, under its URL; a module hook (node:module registerHooks)
 * gives each reload's copies of the user's files a URL of their own (`…/orders.ts?baton-dev=3`),
 * so a reload evaluates the changed code instead of returning the cached module.
 *
 * Invariants:
 * 1. Only the user's files get new copies: the modules named on the command line (as paths), and
 *    the files they import by a relative or absolute path, transitively. A package (a bare
 *    specifier: `@baton/core`, `zod`) is never copied, so the workers and the definitions share
 *    one `@baton/core`, and libraries keep their state.
 * 2. Every reload copies the whole graph of the user's files, not only the file that changed:
 *    nothing can see a stale neighbour. Earlier copies stay in memory; a dev process accepts that.
 * 3. The first load imports the plain URLs, as a worker process would.
 */
import { registerHooks } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadModules, type LoadedModules } from './workflows.js';

const MARK = 'baton-dev';

/** The current generation: 0 until the first reload. Module-wide, as the hook is process-wide. */
let generation = 0;
/** The modules named as paths, by their URL without a query: the roots of the copied graph. */
const roots = new Set<string>();
let hooked = false;

function withoutQuery(url: string): string {
  const at = url.search(/[?#]/);
  return at < 0 ? url : url.slice(0, at);
}

function isPathSpecifier(specifier: string): boolean {
  return specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:');
}

function installHook(): void {
  if (hooked) return;
  hooked = true;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      if (generation === 0 || !resolved.url.startsWith('file:')) return resolved;
      const plain = withoutQuery(resolved.url);
      const fromCopy = context.parentURL?.includes(`?${MARK}=`) === true;
      const userFile =
        roots.has(plain) || (fromCopy && isPathSpecifier(specifier) && !plain.includes('/node_modules/'));
      return userFile ? { ...resolved, url: `${plain}?${MARK}=${generation}` } : resolved;
    },
  });
}

/** Loads the same workflow modules again and again, each time from the files as they are now. */
export interface FreshWorkflowLoader {
  /**
   * Imports the modules (fresh copies from the second call on) and returns their workflow and
   * webhook definitions.
   */
  load(): Promise<LoadedModules>;
  /** How many times load() was called. */
  readonly loads: number;
}

/**
 * A loader of `modules` (paths resolve from `cwd`; a package name is loaded once and never
 * again). Errors as {@link loadModules}'s, starting with `source`.
 */
export function freshWorkflowLoader(
  modules: readonly string[],
  cwd: string = process.cwd(),
  source = 'baton dev',
): FreshWorkflowLoader {
  installHook();
  for (const specifier of modules) {
    if (specifier.startsWith('.') || isAbsolute(specifier))
      roots.add(pathToFileURL(resolve(cwd, specifier)).href);
  }
  let loads = 0;
  return {
    async load() {
      if (loads > 0) generation++;
      loads++;
      return loadModules(modules, cwd, source);
    },
    get loads() {
      return loads;
    },
  };
}
