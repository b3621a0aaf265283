/**
 * Builds the kafkajs client from resolved options. kafkajs logs through a hook: by default the
 * transport keeps its own errors (which surface through operations) and passes warnings and
 * errors to `log` when given.
 */
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import type { ResolvedKafkaOptions } from './options.js';

/** A log line of the Kafka client library. */
export type KafkaLogHook = (
  level: 'error' | 'warn' | 'info' | 'debug',
  message: string,
  extra: Record<string, unknown>,
) => void;

const LEVELS: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/**
 * kafkajs warnings that are decisions, not conditions: retries are bounded on purpose (a send
 * that fails aborts its run, which resumes elsewhere, rather than hanging the worker).
 */
const QUIET = [/Limiting retries for the idempotent producer/];

function saslFor(options: ResolvedKafkaOptions): SASLOptions | undefined {
  const sasl = options.sasl;
  if (sasl === undefined) return undefined;
  return { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as SASLOptions;
}

export function createKafkaClient(options: ResolvedKafkaOptions, log: KafkaLogHook | undefined): Kafka {
  const sasl = saslFor(options);
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    ssl: options.tls,
    ...(sasl && { sasl }),
    connectionTimeout: options.connectionTimeoutMs,
    authenticationTimeout: options.connectionTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 },
    logLevel: log === undefined ? logLevel.NOTHING : logLevel.WARN,
    logCreator: () => (entry) => {
      const { message, ...extra } = entry.log;
      if (QUIET.some((pattern) => pattern.test(message))) return;
      log?.(LEVELS[entry.level] ?? 'info', `kafkajs ${entry.namespace}: ${message}`, extra);
    },
  });
}
