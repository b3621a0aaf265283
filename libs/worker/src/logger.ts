/** The logging surface the worker needs; pino's Logger satisfies it. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  /** A logger adding `bindings` to every line (pino's `child`); optional, see {@link bindLogger}. */
  child?(bindings: Record<string, unknown>): Logger;
}

const noop = (): void => undefined;

/** Drops everything: the default for embedded use. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/**
 * A logger whose every line carries `bindings` (a run's `runId`, `workflow`, `trace_id`,
 * `span_id`): the logger's own `child` when it has one, else a wrapper that adds them to each
 * line's object (the line's own fields win, as with pino).
 */
export function bindLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  if (logger === silentLogger) return logger;
  if (typeof logger.child === 'function') return logger.child(bindings);
  const bound =
    (write: (obj: object, msg?: string) => void) =>
    (obj: object, msg?: string): void =>
      write.call(logger, { ...bindings, ...obj }, msg);
  return {
    debug: bound(logger.debug),
    info: bound(logger.info),
    warn: bound(logger.warn),
    error: bound(logger.error),
    child: (more) => bindLogger(logger, { ...bindings, ...more }),
  };
}
