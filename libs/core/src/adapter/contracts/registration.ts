/**
 * How an adapter package tells the worker process what it is: which URL schemes it serves, which
 * BATON_* variables configure it, how to build it from them, and what its namespace is called in
 * the `worker ready` line. The worker app reads one list of registrations and derives from it its
 * variables, their validation, the adapter construction and the error messages, so a new adapter
 * adds its package and one entry to that list (docs/architecture.md, "Adding an adapter").
 */
import type { Store } from './store.js';
import type { Transport } from './transport.js';

/** A bus (`BATON_TRANSPORT_URL`) or a store (`BATON_STORE_URL`). */
export type AdapterKind = 'transport' | 'store';

/** What `create` returns for each kind. */
export interface AdapterOfKind {
  transport: Transport;
  store: Store;
}

/** One BATON_* variable of an adapter. Unset or blank: the setting is left out (the adapter's default). */
export interface AdapterVariable<T> {
  /** The environment variable, e.g. `BATON_NATS_PREFIX`. */
  readonly name: string;
  /**
   * One line for operators (Markdown, links written from the repository root: the table of
   * variables in docs/configuration.md is generated from it, via `@baton/host`'s VARIABLES): what it sets and what happens when it is unset.
   */
  readonly description: string;
  /** The default as operators read it (Markdown: `` `baton` ``, `the server's`); none when left out. */
  readonly default?: string;
  /** Its value is a secret (a password): never shown, in messages, logs or help. */
  readonly secret?: boolean;
  /**
   * The trimmed, non-empty value as the setting; a bad value throws ConfigError naming the
   * variable (`name`), what was found and what is expected.
   */
  parse(value: string, name: string): T;
  /**
   * The option (or options) of the adapter this setting becomes, as its ConfigErrors name them in
   * `option` (`prefix`, `poolSize`): such an error from `create` is reported naming this variable.
   */
  readonly option?: AdapterOption;
}

/** An adapter option's name as its ConfigErrors carry it (`prefix`), or several for one setting. */
export type AdapterOption = string | readonly string[];

/** One variable per setting; every setting is optional (unset = the adapter's default). */
export type AdapterVariables<Settings> = {
  readonly [Key in keyof Settings]-?: AdapterVariable<NonNullable<Settings[Key]>>;
};

/** The level and text of a log line the adapter's client library writes, for the worker's logger. */
export type AdapterLogHook = (
  level: 'error' | 'warn' | 'info' | 'debug',
  message: string,
  extra: Record<string, unknown>,
) => void;

/** What the worker process lends an adapter it builds. */
export interface AdapterHooks {
  /** Present when the registration has a `logComponent`. */
  log?: AdapterLogHook;
}

/**
 * A transport or a store as the worker process knows it. `Name` is the adapter's short name
 * (`nats`, `postgres`): the worker's configuration holds its settings under it, and the variable
 * of setting `prefix` is `ENV.natsPrefix`.
 */
export interface AdapterRegistration<
  Name extends string = string,
  Kind extends AdapterKind = AdapterKind,
  Settings extends object = object,
> {
  readonly name: Name;
  readonly kind: Kind;
  /** URL schemes it serves, lowercase, without `:` (`nats`, `tls`); the first is shown in advice. */
  readonly schemes: readonly [string, ...string[]];
  /** A URL's lone user part is a secret (a NATS token): masked in messages and logs. */
  readonly urlUserIsSecret?: boolean;
  readonly variables: AdapterVariables<Settings>;
  /**
   * The option the URL becomes (`servers`, `brokers`, `url`), as its ConfigErrors name it in
   * `option`: such an error is reported naming the URL variable (BATON_TRANSPORT_URL, BATON_STORE_URL).
   */
  readonly urlOption: AdapterOption;
  /** The `component` of its client library's log lines in the worker's log; without it no log hook is given. */
  readonly logComponent?: string;
  /**
   * Loads the adapter's code (its client library) if it is not loaded yet; `create`,
   * `describeNamespace` and `installation` need it. A registration is imported without its
   * code, so a process that builds one bus and one store loads only theirs ({@link AdapterCode}).
   * Left out by a registration whose code is always loaded with it.
   */
  load?(): Promise<unknown>;
  /**
   * Builds the adapter (does not connect). Throws ConfigError for a bad option or a file a
   * variable names that cannot be read (naming that variable). With a `load`, call it first.
   */
  create(url: string, settings: Settings, hooks: AdapterHooks): AdapterOfKind[Kind];
  /**
   * What keeps this installation's data apart on a shared server, as the adapter resolves it,
   * under the field names of the `worker ready` line (`{ transportPrefix: 'baton' }`). Called
   * after `create` succeeded with the same arguments; never a secret.
   */
  describeNamespace(url: string, settings: Settings): Record<string, string>;
  /**
   * What one installation (the namespace these settings name) keeps on the server: listed and
   * removed by `baton admin drop`, and by the tests' clean-up. With a `load`, call it first.
   */
  readonly installation: AdapterInstallation<Settings>;
  /** For tests and benchmarks that share servers: a namespace of their own (removed by `installation.drop`). */
  readonly isolation?: AdapterIsolation<Settings>;
}

/** One thing an installation keeps on a server: a stream, a topic, a consumer group, keys, a schema. */
export interface InstallationItem {
  /** What it is: `stream`, `topic`, `consumer group`, `keys`, `table`, `schema`. */
  readonly kind: string;
  /** Its name on the server; for keys, the pattern they match (`baton:run:*`). */
  readonly name: string;
  /** How much it holds, when the server says cheaply (`12 messages`, `3 keys`, `~40 rows`). */
  readonly detail?: string;
}

/** What an installation keeps on one server, read from the server. */
export interface InstallationListing {
  /** Everything the installation's namespace holds there; empty when it holds nothing. */
  readonly items: readonly InstallationItem[];
  /**
   * Why removing the namespace would remove another installation's data too (keys under the
   * prefix that are not this adapter's, a table in the schema that is not the store's), naming
   * some of it; absent when nothing but the installation's own data is there.
   */
  readonly shared?: string;
}

/** How an installation's data on one server is listed and removed. */
export interface AdapterInstallation<Settings> {
  /** Everything the namespace of `settings` holds on the server `url` names. Changes nothing. */
  list(url: string, settings: Settings): Promise<InstallationListing>;
  /**
   * Deletes everything the namespace holds there (what `list` shows). Irreversible. Checks no
   * sharing itself: a caller that cannot rule it out asks `list` first and stops on `shared`.
   */
  drop(url: string, settings: Settings): Promise<void>;
}

/**
 * The code behind an adapter's registration, loaded only when a process picks that adapter. A
 * worker builds one bus and one store, so importing every registration must not import every
 * client library (kafkajs, pg, BullMQ: about half of a worker's start-up before this). The
 * package's entry module provides its code when it is imported, so a program that imports the
 * package can `create` at once; a process holding only the registration (the `/registration`
 * export) calls `load()`, which imports the package's code module (not its entry, which imports
 * the registration: the two would import each other) and keeps what it exports.
 *
 * Invariant: `get()` never imports anything; it returns the provided code or throws, naming the
 * adapter and the call that was missing.
 */
export class AdapterCode<Code> {
  #code: Code | undefined;

  /**
   * @param adapter the adapter's name in messages (`the NATS transport`)
   * @param importCode imports the package's code module and resolves with the code it exports
   */
  constructor(
    private readonly adapter: string,
    private readonly importCode: () => Promise<Code>,
  ) {}

  /** Called once by the package's entry module with what the registration needs. */
  provide(code: Code): void {
    this.#code = code;
  }

  /** Imports the package's code unless it is already provided; returns the code. */
  async load(): Promise<Code> {
    if (this.#code === undefined) this.#code = await this.importCode();
    if (this.#code === undefined) throw new Error(`importing ${this.adapter}'s package provided no code`);
    return this.#code;
  }

  /** The provided code; throws when nobody loaded it. */
  get(): Code {
    if (this.#code === undefined) {
      throw new Error(
        `${this.adapter}'s code is not loaded: await its registration's load() before create() ` +
          `(the worker app's loadAdapterCode does), or import its package`,
      );
    }
    return this.#code;
  }
}

/**
 * How to keep a test's or a benchmark's data apart on a shared server; `installation.drop` with
 * the same settings removes it afterwards.
 */
export interface AdapterIsolation<Settings> {
  /**
   * The settings that put everything under `id` (lowercase letters and digits, starting with a
   * letter: valid for every adapter's names). String settings only: they become variables.
   */
  settings(id: string): { [Key in keyof Settings]?: Settings[Key] & string };
}

/** Any registration, whatever its name and settings. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- settings differ per adapter; each is checked where it is declared
export type AnyAdapterRegistration = AdapterRegistration<string, AdapterKind, any>;
