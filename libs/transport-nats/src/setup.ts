/**
 * Creates the transport's streams and consumer, idempotently, so any number of workers and
 * producers may connect at once:
 *
 * 1. Missing: created with the configured settings. Two processes racing to create it both
 *    succeed (the loser re-reads what the winner made).
 * 2. Present: kept. What the transport cannot work without but the server lets us change is
 *    changed (direct get on, unlimited max deliver); the settings given explicitly to this
 *    transport (replicas, duplicate window, ack wait, max ack pending) are applied. Settings
 *    left at their defaults never override what is there, so a producer built with defaults
 *    cannot reset the ack wait the workers were configured with.
 * 3. Present with a configuration the transport cannot work with and the server cannot change
 *    (another retention, other subjects, a push consumer, another ack policy, or another storage
 *    when storage was given explicitly): a BackendConflictError naming the field and the fix.
 *    Nothing is ever deleted.
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { laneLevels } from '@baton/core/adapter';
import { natsReplicasRefused, natsStreamConflict } from './errors.js';
import type { NatsLayout, RunLane } from './layout.js';
import type { ResolvedNatsTransportOptions } from './options.js';

/** JetStream API error codes the setup tells apart. */
const API = {
  consumerNotFound: 10014,
  streamNotFound: 10059,
  streamNameInUse: 10058,
  consumerExists: 10148,
  consumerNameExists: 10013,
  /** The cluster has fewer suitable JetStream servers than the replicas asked for. */
  noSuitablePeers: 10005,
  insufficientResources: 10023,
  /** A single server (not a cluster) was asked for more than one replica. */
  replicasNotSupported: 10074,
} as const;

/** What the rest of the transport needs to know about the streams it found or made. */
export interface StreamsState {
  /** Replicas of the journal stream as it is now (direct get may answer from a follower if > 1). */
  journalReplicas: number;
  deadLetterReplicas: number;
}

/** Ensures the streams (the run lanes in use, journal, dead letters) and each lane's consumer exist. */
export async function ensureStreams(
  jsm: JetStreamManager,
  options: ResolvedNatsTransportOptions,
  layout: NatsLayout,
): Promise<StreamsState> {
  const common = { storage: storageOf(options), num_replicas: options.replicas };
  // One work-queue stream per priority lane in use; `normal` is the runs stream of every earlier
  // release, set up first as it always was, and the only one without `priorityLanes`.
  const lanes = laneLevels(options.priorityLanes).map((level) => layout.runLanes[level]);
  for (const lane of lanes) {
    await ensureStream(jsm, options, {
      ...common,
      name: lane.stream,
      subjects: [lane.subject],
      retention: RetentionPolicy.Workqueue,
      duplicate_window: nanos(options.duplicateWindowMs),
    });
  }
  const journal = await ensureStream(jsm, options, {
    ...common,
    name: layout.journalStream,
    subjects: [layout.journalSubjects],
    retention: RetentionPolicy.Limits,
    // Reads of a run's tail go through direct get (see journal-reader.ts).
    allow_direct: true,
  });
  const deadLetters = await ensureStream(jsm, options, {
    ...common,
    name: layout.deadLetterStream,
    subjects: [layout.deadLetterSubject],
    retention: RetentionPolicy.Limits,
    allow_direct: true,
  });
  for (const lane of lanes) await ensureWorkersConsumer(jsm, options, lane);
  return {
    journalReplicas: journal.config.num_replicas,
    deadLetterReplicas: deadLetters.config.num_replicas,
  };
}

function storageOf(options: ResolvedNatsTransportOptions): StorageType {
  return options.storage === 'memory' ? StorageType.Memory : StorageType.File;
}

type DesiredStream = Pick<StreamConfig, 'name' | 'subjects' | 'retention' | 'storage' | 'num_replicas'> &
  Partial<Pick<StreamConfig, 'duplicate_window' | 'allow_direct'>>;

async function ensureStream(
  jsm: JetStreamManager,
  options: ResolvedNatsTransportOptions,
  desired: DesiredStream,
): Promise<StreamInfo> {
  let info = await streamInfo(jsm, desired.name);
  if (info === undefined) {
    try {
      return await jsm.streams.add(desired);
    } catch (err) {
      throwIfUnplaceable(err, desired);
      // Another process created it between our look and our add: use theirs.
      if (!isApiError(err, API.streamNameInUse)) throw err;
      info = await streamInfo(jsm, desired.name);
      if (info === undefined) throw err;
    }
  }
  const config = info.config;
  const explicit = options.explicitSettings;
  const conflict = (field: string, found: unknown, expected: unknown): Error =>
    natsStreamConflict(
      `stream ${desired.name} exists with ${field} ${JSON.stringify(found)}, but the transport needs ` +
        `${JSON.stringify(expected)}; the server cannot change it in place: delete the stream ` +
        `(nats stream rm ${desired.name}, losing its messages) or choose another prefix`,
    );
  if (config.retention !== desired.retention)
    throw conflict('retention', config.retention, desired.retention);
  if (explicit.has('storage') && config.storage !== desired.storage) {
    throw conflict('storage', config.storage, desired.storage);
  }
  const subjects = config.subjects ?? [];
  for (const subject of desired.subjects ?? []) {
    if (!subjects.includes(subject)) throw conflict('subjects', subjects, desired.subjects);
  }
  const changes: Partial<StreamConfig> = {};
  if (explicit.has('replicas') && config.num_replicas !== desired.num_replicas) {
    changes.num_replicas = desired.num_replicas;
  }
  if (
    explicit.has('duplicateWindowMs') &&
    desired.duplicate_window !== undefined &&
    config.duplicate_window !== desired.duplicate_window
  ) {
    changes.duplicate_window = desired.duplicate_window;
  }
  if (desired.allow_direct === true && config.allow_direct !== true) changes.allow_direct = true;
  if (Object.keys(changes).length === 0) return info;
  try {
    return await jsm.streams.update(desired.name, changes);
  } catch (err) {
    throwIfUnplaceable(err, desired);
    throw err;
  }
}

/** A clear error when the servers cannot hold `desired.num_replicas` copies of the stream. */
function throwIfUnplaceable(err: unknown, desired: DesiredStream): void {
  const replicas = desired.num_replicas;
  const single = isApiError(err, API.replicasNotSupported);
  if (!single && !isApiError(err, API.noSuitablePeers) && !isApiError(err, API.insufficientResources)) return;
  throw natsReplicasRefused(
    `stream ${desired.name} needs ${replicas} replicas, but ` +
      (single
        ? 'the server is a single server, not a JetStream cluster'
        : `the cluster cannot place them (${(err as Error).message})`) +
      `: run a JetStream cluster of at least ${replicas} servers with room for the stream, or lower ` +
      'the replicas option (BATON_NATS_REPLICAS; 1 for a single server, 3 for a 3-node cluster)',
    { cause: err },
  );
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (err) {
    if (isApiError(err, API.streamNotFound)) return undefined;
    throw err;
  }
}

async function ensureWorkersConsumer(
  jsm: JetStreamManager,
  options: ResolvedNatsTransportOptions,
  lane: RunLane,
): Promise<void> {
  const stream = lane.stream;
  const name = lane.consumer;
  const desired: Partial<ConsumerConfig> = {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(options.ackWaitMs),
    // Unlimited: the worker counts deliveries itself and dead-letters with a reason; a server-side
    // limit would drop the message silently instead.
    max_deliver: -1,
    max_ack_pending: options.maxAckPending,
  };
  let info;
  try {
    info = await jsm.consumers.info(stream, name);
  } catch (err) {
    if (!isApiError(err, API.consumerNotFound)) throw err;
    try {
      await jsm.consumers.add(stream, desired);
      return;
    } catch (addError) {
      if (!isApiError(addError, API.consumerExists) && !isApiError(addError, API.consumerNameExists)) {
        throw addError;
      }
      info = await jsm.consumers.info(stream, name);
    }
  }
  const config = info.config;
  const conflict = (what: string): Error =>
    natsStreamConflict(
      `consumer ${name} on stream ${stream} exists but ${what}; the transport needs a durable pull consumer ` +
        `with explicit acks and no filter: delete it (nats consumer rm ${stream} ${name}) or choose another prefix`,
    );
  if (config.deliver_subject) throw conflict('is a push consumer');
  if (config.ack_policy !== AckPolicy.Explicit) throw conflict(`has ack policy ${config.ack_policy}`);
  if (config.filter_subject && config.filter_subject !== lane.subject) {
    throw conflict(`filters on ${config.filter_subject}`);
  }
  const explicit = options.explicitSettings;
  const changes: Partial<ConsumerConfig> = {};
  if (explicit.has('ackWaitMs') && config.ack_wait !== desired.ack_wait) changes.ack_wait = desired.ack_wait;
  if (explicit.has('maxAckPending') && config.max_ack_pending !== desired.max_ack_pending) {
    changes.max_ack_pending = desired.max_ack_pending;
  }
  if ((config.max_deliver ?? -1) !== -1) changes.max_deliver = -1;
  if (Object.keys(changes).length > 0) await jsm.consumers.update(stream, name, changes);
}

/** True when `err` is the JetStream API error with that code. */
export function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}
