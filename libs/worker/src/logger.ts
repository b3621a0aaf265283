/** The logging surface the worker needs; pino's Logger satisfies it. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => undefined;

/** Drops everything: the default for embedded use. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
