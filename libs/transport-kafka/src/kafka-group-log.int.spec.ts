/**
 * Group logs on the shared Kafka broker, beyond the transport conformance section: logs that share
 * a partition read apart, and a trim removes of it only what some log's trim asked for, reads of many nearby positions (and of many runs resuming
 * at once) are fetched as one range, and an append whose acknowledgement is lost is answered with
 * its own position instead of failing. The lost acknowledgement is made on the client side: the
 * record really is sent to the broker, and the producer the append goes through then throws the
 * timeout a lost ack looks like (as in a leader change; kafka-cluster.cluster.int.spec.ts kills a real leader
 * for the journal).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { KafkaJSRequestTimeoutError } from 'kafkajs';
import { kafkaTestUrl } from '@baton/testing/servers';
import { APPEND_ID } from './append-retry.js';
import { createKafkaClient } from './client.js';
import type { KafkaContext } from './context.js';
import { KafkaGroupLog } from './group-log.js';
import { GroupReads, MAX_RANGE_GAP, rangesOf, type GroupReadStats } from './group-reads.js';
import { createKafkaTransport as kafkaTransport, type KafkaTransport } from './kafka-transport.js';
import { layoutFor, partitionForKey } from './layout.js';
import { resolveKafkaOptions } from './options.js';
import { PartitionReader } from './partition-reader.js';
import { BatchingProducer, type OutgoingRecord } from './producer.js';
import type { KafkaRunQueue } from './run-queue.js';
import { ensureTopics } from './setup.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const PARTITIONS = 3;
const prefixes = testPrefixes(kafkaTestUrl());
const open: Array<{ close(): Promise<unknown> }> = [];
afterAll(async () => {
  await Promise.allSettled(open.splice(0).map((o) => o.close()));
  await prefixes.cleanUp();
}, 30_000);

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined): string | undefined =>
  b === undefined ? undefined : new TextDecoder().decode(b);

async function connected(): Promise<KafkaTransport> {
  const t = kafkaTransport({ brokers: kafkaTestUrl(), prefix: prefixes.next(), partitions: PARTITIONS });
  open.push(t);
  await t.connect();
  return t;
}

/** Two log names of this test's own that hash to the same partition of the group topic. */
function twoLogsOnOnePartition(): [string, string] {
  const base = prefixes.next().replace(/[^A-Za-z0-9_-]/g, '');
  const first = `${base}-a`;
  const partition = partitionForKey(first, PARTITIONS);
  for (let i = 0; ; i++) {
    const other = `${base}-b${i}`;
    if (partitionForKey(other, PARTITIONS) === partition) return [first, other];
  }
}

describe('kafka group logs', () => {
  it('reads two logs that share one partition apart, by position', async () => {
    const t = await connected();
    const [a, b] = twoLogsOnOnePartition();
    const positions = { [a]: [] as number[], [b]: [] as number[] };
    for (let i = 0; i < 4; i++) {
      positions[a]!.push(await t.groupLog.appendGroupRecord(a, bytes(`a${i}`)));
      positions[b]!.push(await t.groupLog.appendGroupRecord(b, bytes(`b${i}`)));
    }
    // One partition: the logs' positions interleave, each log's still increasing.
    expect(positions[b]![0]).toBe(positions[a]![0]! + 1);
    const asked = [...positions[a]!, ...positions[b]!];
    const readA = await t.groupLog.readGroupRecords(a, asked);
    const readB = await t.groupLog.readGroupRecords(b, asked);
    expect(new Map([...readA].map(([p, d]) => [p, text(d)]))).toEqual(
      new Map(positions[a]!.map((p, i) => [p, `a${i}`])),
    );
    expect(new Map([...readB].map(([p, d]) => [p, text(d)]))).toEqual(
      new Map(positions[b]!.map((p, i) => [p, `b${i}`])),
    );
  }, 60_000);

  it('fetches many nearby positions as one range, and runs resuming at once share it', async () => {
    const t = await connected();
    const [a, b] = twoLogsOnOnePartition();
    const mine: number[] = [];
    for (let i = 0; i < 20; i++) {
      mine.push(await t.groupLog.appendGroupRecord(a, bytes(`a${i}`)));
      await t.groupLog.appendGroupRecord(b, bytes(`b${i}`));
    }
    const before = t.groupLog.stats();
    const all = await t.groupLog.readGroupRecords(a, mine);
    expect([...all.keys()].sort((x, y) => x - y)).toEqual(mine);
    const afterOne = t.groupLog.stats();
    expect(afterOne.ranges - before.ranges).toBe(1);
    expect(afterOne.reads - before.reads).toBe(1);
    // Its records and the other log's between them: 39 offsets, no more.
    expect(afterOne.fetchedRecords - before.fetchedRecords).toBe(39);

    // Ten runs resuming together, each reading its own two records of the log: the reads that
    // arrive while a scan is in flight share the next one.
    const reads = await Promise.all(
      Array.from({ length: 10 }, (_, i) => t.groupLog.readGroupRecords(a, [mine[2 * i]!, mine[2 * i + 1]!])),
    );
    reads.forEach((read, i) => expect([...read.values()].map(text)).toEqual([`a${2 * i}`, `a${2 * i + 1}`]));
    const afterTen = t.groupLog.stats();
    expect(afterTen.reads - afterOne.reads).toBe(10);
    expect(afterTen.ranges - afterOne.ranges).toBeLessThanOrEqual(2);
  }, 60_000);

  it('fetches positions far apart as ranges of their own, not the records between', async () => {
    const t = await connected();
    const [a, b] = twoLogsOnOnePartition();
    const first = await t.groupLog.appendGroupRecord(a, bytes('early'));
    for (let i = 0; i <= MAX_RANGE_GAP; i++) await t.groupLog.appendGroupRecord(b, bytes(`b${i}`));
    const last = await t.groupLog.appendGroupRecord(a, bytes('late'));
    const before = t.groupLog.stats();
    const read = await t.groupLog.readGroupRecords(a, [last, first]);
    expect(text(read.get(first))).toBe('early');
    expect(text(read.get(last))).toBe('late');
    const after = t.groupLog.stats();
    expect(after.ranges - before.ranges).toBe(2);
    expect(after.fetchedRecords - before.fetchedRecords).toBe(2);
  }, 60_000);

  it('cuts sorted offsets into ranges at gaps wider than the limit', () => {
    expect(rangesOf([], 2)).toEqual([]);
    expect(rangesOf([1, 2, 4, 7, 20, 21], 2)).toEqual([
      [1, 4],
      [7, 7],
      [20, 21],
    ]);
  });

  it('trims the front of a shared partition only as far as every log on it asked', async () => {
    const t = await connected();
    const [a, b] = twoLogsOnOnePartition();
    const a1 = await t.groupLog.appendGroupRecord(a, bytes('a1'));
    const a2 = await t.groupLog.appendGroupRecord(a, bytes('a2'));
    const b1 = await t.groupLog.appendGroupRecord(b, bytes('b1'));
    const a3 = await t.groupLog.appendGroupRecord(a, bytes('a3'));
    const a4 = await t.groupLog.appendGroupRecord(a, bytes('a4'));
    const readA = async () => [...(await t.groupLog.readGroupRecords(a, [a1, a2, a3, a4])).keys()];
    const readB = async () => [...(await t.groupLog.readGroupRecords(b, [b1])).keys()];
    // Everything of `a` before a4 asked for: a1 and a2 go; b1, which no trim asked for, stops it.
    await t.groupLog.trimGroupLog(a, a4);
    expect(await readA()).toEqual([a3, a4]);
    expect(await readB()).toEqual([b1]);
    // `b` asks for nothing before b1 itself: the front stays.
    await t.groupLog.trimGroupLog(b, b1);
    expect(await readB()).toEqual([b1]);
    expect(await readA()).toEqual([a3, a4]);
    // `b` asks for b1: it goes, and so does a3 behind it (asked for by `a`); a4 stays.
    await t.groupLog.trimGroupLog(b, b1 + 1);
    expect(await readB()).toEqual([]);
    expect(await readA()).toEqual([a4]);
  }, 60_000);

  it('refuses a record above maxMessageBytes before sending it, naming the log', async () => {
    const t = kafkaTransport({ brokers: kafkaTestUrl(), prefix: prefixes.next(), maxMessageBytes: 1_000 });
    open.push(t);
    await t.connect();
    await expect(t.groupLog.appendGroupRecord('big', new Uint8Array(1_001))).rejects.toMatchObject({
      name: 'PayloadTooLargeError',
      message: expect.stringMatching(/group record of log big/),
    });
    expect((await t.groupLog.readGroupRecords('big', [1])).size).toBe(0);
  }, 60_000);
});

/**
 * What each send does: 'lose-ack' stores the record and throws a timeout; 'drop' sends nothing and
 * throws; 'late' throws at once and stores the record just before the next send (an attempt still
 * on its way when the retry looked for it).
 */
type Fate = 'deliver' | 'lose-ack' | 'drop' | 'late';

describe('kafka group log append with a lost acknowledgement', () => {
  /** A group log over a context of its own whose producer follows `fates`, then delivers. */
  async function world(requestTimeoutMs = 3_000) {
    const options = resolveKafkaOptions({
      brokers: kafkaTestUrl(),
      prefix: prefixes.next(),
      partitions: 2,
      requestTimeoutMs,
    });
    const layout = layoutFor(options.prefix);
    const kafka = createKafkaClient(options, undefined);
    const admin = kafka.admin();
    await admin.connect();
    const topics = await ensureTopics(admin, options, layout);
    const real = new BatchingProducer(kafka, options.maxMessageBytes, options.requestTimeoutMs);
    const reader = new PartitionReader(kafka, [layout.groupTopic]);
    await Promise.all([real.connect(), reader.connect()]);
    open.push({
      close: () => Promise.allSettled([real.disconnect(), reader.disconnect(), admin.disconnect()]),
    });
    const fates: Fate[] = [];
    let late: OutgoingRecord | undefined;
    let sends = 0;
    const timeout = (): Error =>
      new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out');
    const producer = {
      ackedEnd: (topic: string, partition: number) => real.ackedEnd(topic, partition),
      async send(record: OutgoingRecord): Promise<number> {
        sends++;
        if (late !== undefined) {
          await real.send(late);
          late = undefined;
        }
        switch (fates.shift() ?? 'deliver') {
          case 'deliver':
            return real.send(record);
          case 'lose-ack':
            await real.send(record);
            throw timeout();
          case 'drop':
            throw timeout();
          case 'late':
            late = record;
            throw timeout();
        }
      },
    } as unknown as BatchingProducer;
    const stats: GroupReadStats = { reads: 0, ranges: 0, fetchedRecords: 0 };
    const context = {
      options,
      layout,
      topics,
      admin,
      producer,
      reader,
      groupReads: new GroupReads(reader, admin, layout.groupTopic, stats),
      queue: undefined as unknown as KafkaRunQueue,
    } as unknown as KafkaContext;
    const groupLog = new KafkaGroupLog(
      (_operation, _retryReads, work) => work(context),
      stats,
      () => options.maxMessageBytes,
    );
    /** Every record of `log` on its partition, with the append id each carries. */
    const stored = async (log: string) =>
      (
        await reader.read(
          layout.groupTopic,
          partitionForKey(log, topics.groupPartitions),
          0,
          undefined,
          (key) => key === log,
        )
      ).map((r) => ({ position: r.offset + 1, data: r.value.toString(), id: r.headers[APPEND_ID] }));
    return { groupLog, fates, stored, sends: () => sends };
  }

  it('answers an append whose ack was lost with its own position, storing it once', async () => {
    const { groupLog, fates, stored } = await world();
    const first = await groupLog.appendGroupRecord('w1', bytes('one'));
    fates.push('lose-ack');
    const second = await groupLog.appendGroupRecord('w1', bytes('two'));
    expect(second).toBeGreaterThan(first);
    expect(groupLog.stats()).toMatchObject({ appendsRetried: 1, appendsFoundLanded: 1 });
    const records = await stored('w1');
    expect(records.map((r) => [r.position, r.data])).toEqual([
      [first, 'one'],
      [second, 'two'],
    ]);
    expect(text((await groupLog.readGroupRecords('w1', [second])).get(second))).toBe('two');
  }, 60_000);

  it("answers a lost ack on a log's first append, looking from the partition's end", async () => {
    const { groupLog, fates, stored } = await world();
    // Another log on the same partition first, so the new log's read-back has something to skip.
    const [other, mine] = ['x', 'w'].map((p) => {
      for (let i = 0; ; i++) if (partitionForKey(`${p}${i}`, 2) === 0) return `${p}${i}`;
    }) as [string, string];
    await groupLog.appendGroupRecord(other, bytes('other'));
    fates.push('lose-ack');
    const position = await groupLog.appendGroupRecord(mine, bytes('mine'));
    expect(groupLog.stats().appendsFoundLanded).toBe(1);
    expect((await stored(mine)).map((r) => [r.position, r.data])).toEqual([[position, 'mine']]);
  }, 60_000);

  it('sends again when the first attempt never reached the broker', async () => {
    const { groupLog, fates, stored, sends } = await world();
    fates.push('drop');
    const position = await groupLog.appendGroupRecord('w2', bytes('only'));
    expect(sends()).toBe(2);
    expect(groupLog.stats()).toMatchObject({ appendsRetried: 1, appendsFoundLanded: 0 });
    expect((await stored('w2')).map((r) => [r.position, r.data])).toEqual([[position, 'only']]);
  }, 60_000);

  it('leaves a harmless second copy when the first attempt lands after the read-back', async () => {
    const { groupLog, fates, stored } = await world();
    fates.push('late');
    const position = await groupLog.appendGroupRecord('w3', bytes('twice'));
    const records = await stored('w3');
    // Both copies carry the same append id; the position resolved names the retry's copy, which
    // is the one a pointer would name, and reading it gives the record.
    expect(records.map((r) => r.data)).toEqual(['twice', 'twice']);
    expect(new Set(records.map((r) => r.id)).size).toBe(1);
    expect(records[1]!.position).toBe(position);
    expect(text((await groupLog.readGroupRecords('w3', [position])).get(position))).toBe('twice');
  }, 60_000);

  it('gives up after about three request timeouts when no attempt is answered', async () => {
    const { groupLog, fates, stored } = await world(1_000);
    fates.push(...Array<Fate>(100).fill('drop'));
    const started = Date.now();
    await expect(groupLog.appendGroupRecord('w4', bytes('never'))).rejects.toThrow(/timed out/);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_500);
    expect(elapsed).toBeLessThan(3 * 1_000 + 2_000);
    expect(await stored('w4')).toEqual([]);
  }, 60_000);
});
