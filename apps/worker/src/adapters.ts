/**
 * Builds the transport and the store from their URLs: the scheme picks the adapter, the
 * adapter-specific variables add what a URL cannot carry well (prefixes, files).
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '@baton/core';
import { maskUrlSecret, type PayloadStore, type Store, type Transport } from '@baton/core/adapter';
import type { LargePayloadOptions } from '@baton/core/runtime';
import { natsObjectPayloadStore, natsTransport, type NatsObjectPayloadStore } from '@baton/transport-nats';
import { kafkaTransport, type KafkaLogHook } from '@baton/transport-kafka';
import { redisStore } from '@baton/store-redis';
import { postgresStore } from '@baton/store-postgres';
import { ENV, type WorkerAppConfig } from './config.js';

/**
 * The URL without its secret, for messages and logs; a NATS URL's lone user part is a token. A
 * value without a scheme is not shown at all (it may be a bare secret pasted into the wrong place).
 */
export function maskUrl(url: string): string {
  if (!url.includes('://')) return '<not a URL>';
  return maskUrlSecret(url, { userIsSecret: /^(nats|tls):/i.test(url) });
}

function schemeOf(variable: string, url: string): string {
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(url);
  if (!match?.[1]) {
    throw new ConfigError(
      `${variable} '${maskUrl(url)}' has no scheme; it must start with e.g. nats:// or redis://`,
    );
  }
  return match[1].toLowerCase();
}

/** The embedded adapters live inside one process: a fleet of processes cannot share them. */
function inProcessOnly(variable: string, instead: string): ConfigError {
  return new ConfigError(
    `${variable} is memory:, which lives inside one process and cannot be shared by a fleet; ` +
      `use ${instead} here, or \`npm start\` for the in-process demo`,
  );
}

function readFileFor(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${variable} names ${path}, which cannot be read: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Builds the Kafka transport; SASL credentials come from the URL (`kafka://user:password@host`). */
function kafkaFromConfig(config: WorkerAppConfig, log: KafkaLogHook | undefined): Transport {
  const url = config.transportUrl;
  const { prefix, partitions, sessionTimeoutMs, ackWaitMs, saslMechanism, tlsCaFile, journalRetentionMs } =
    config.kafka;
  const withMechanism =
    saslMechanism === undefined
      ? url
      : `${url}${url.includes('?') ? '&' : '?'}sasl=${encodeURIComponent(saslMechanism)}`;
  return kafkaTransport({
    brokers: withMechanism,
    ...(prefix !== undefined && { prefix }),
    ...(partitions !== undefined && { partitions }),
    ...(sessionTimeoutMs !== undefined && {
      sessionTimeoutMs,
      heartbeatIntervalMs: Math.max(1, Math.min(1_000, Math.floor(sessionTimeoutMs / 3))),
    }),
    ...(ackWaitMs !== undefined && { ackWaitMs }),
    ...(journalRetentionMs !== undefined && { journalRetentionMs }),
    ...(tlsCaFile !== undefined && { tls: { ca: readFileFor(ENV.kafkaTlsCaFile, tlsCaFile) } }),
    ...(log !== undefined && { log }),
  });
}

/** The NATS connection options the bus variables give (URL, creds file, CA file). */
function natsConnection(config: WorkerAppConfig) {
  const { credsFile, tlsCaFile } = config.nats;
  return {
    servers: config.transportUrl,
    ...(credsFile !== undefined && { creds: readFileFor(ENV.natsCredsFile, credsFile) }),
    ...(tlsCaFile !== undefined && { tls: { ca: readFileFor(ENV.natsTlsCaFile, tlsCaFile) } }),
  };
}

/**
 * The claim check's options for a Worker or Client, and the payload store to connect and close
 * when it is not the store itself (the NATS object store).
 */
export function largePayloadsFromConfig(
  config: WorkerAppConfig,
  store: Store,
): { options: LargePayloadOptions; separate: NatsObjectPayloadStore | undefined } {
  const { thresholdBytes, location, bucket } = config.largePayloads;
  const separate =
    location === 'nats-object-store'
      ? natsObjectPayloadStore({ ...natsConnection(config), ...(bucket !== undefined && { bucket }) })
      : undefined;
  const payloads: PayloadStore = separate ?? store;
  return { options: { ...(thresholdBytes !== undefined && { thresholdBytes }), payloads }, separate };
}

export function transportFromConfig(config: WorkerAppConfig, kafkaLog?: KafkaLogHook): Transport {
  const url = config.transportUrl;
  switch (schemeOf(ENV.transportUrl, url)) {
    case 'nats':
    case 'tls': {
      const { prefix, ackWaitMs } = config.nats;
      return natsTransport({
        ...natsConnection(config),
        ...(prefix !== undefined && { prefix }),
        ...(ackWaitMs !== undefined && { ackWaitMs }),
      });
    }
    case 'kafka':
    case 'kafkas':
      return kafkaFromConfig(config, kafkaLog);
    case 'memory':
      throw inProcessOnly(ENV.transportUrl, 'nats://… or kafka://…');
    default:
      throw new ConfigError(
        `${ENV.transportUrl} '${maskUrl(url)}' names an unsupported bus; use nats://host:4222 (or tls://), kafka://host:9092 (or kafkas://)`,
      );
  }
}

export function storeFromConfig(config: WorkerAppConfig): Store {
  const url = config.storeUrl;
  switch (schemeOf(ENV.storeUrl, url)) {
    case 'redis':
    case 'rediss':
      return redisStore({
        url,
        ...(config.redis.keyPrefix !== undefined && { keyPrefix: config.redis.keyPrefix }),
      });
    case 'postgres':
    case 'postgresql':
      return postgresStore({
        url,
        ...(config.postgres.schema !== undefined && { schema: config.postgres.schema }),
        ...(config.postgres.poolSize !== undefined && { poolSize: config.postgres.poolSize }),
      });
    case 'memory':
      throw inProcessOnly(ENV.storeUrl, 'redis://… or postgres://…');
    default:
      throw new ConfigError(
        `${ENV.storeUrl} '${maskUrl(url)}' names an unsupported store; use redis://, rediss://, postgres:// or postgresql://`,
      );
  }
}
