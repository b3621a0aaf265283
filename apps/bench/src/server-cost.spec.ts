import { describe, expect, it } from 'vitest';
import {
  microsPerStep,
  serverWindow,
  systemCpu,
  type ServerMeta,
  type ServerReading,
} from './server-cost.js';
import { lsnBytes, parseRedisInfo } from './server-probes.js';

const reading = (at: number, cpuSeconds: number, counters: Record<string, number> = {}): ServerReading => ({
  at,
  cpuSeconds,
  processes: 1,
  counters,
});

const meta = (kind: ServerMeta['kind'], role: ServerMeta['role'], shared = false): ServerMeta => ({
  kind,
  role,
  private: !shared,
  pid: 42,
  unreadable: undefined,
});

describe('CPU per durable step', () => {
  it('divides the CPU of the window by the steps it completed', () => {
    expect(microsPerStep(0.6, 30_000)).toBeCloseTo(20, 9);
    expect(microsPerStep(NaN, 30_000)).toBeNull();
    expect(microsPerStep(1, 0)).toBeNull();
  });

  it("is a server's CPU difference over the window, per step, with its counters per step", () => {
    const w = serverWindow(
      meta('postgres', 'store'),
      reading(1_000, 12.5, { walBytes: 1_000_000, transactions: 500, commits: 900, rollbacks: 2 }),
      reading(11_000, 14, { walBytes: 4_000_000, transactions: 60_500, commits: 90_900, rollbacks: 2 }),
      30_000,
    );
    expect(w.seconds).toBe(10);
    expect(w.cpuSeconds).toBeCloseTo(1.5, 9);
    expect(w.cpuMicrosPerStep).toBeCloseTo(50, 9);
    expect(w.counters).toEqual({ walBytes: 3_000_000, transactions: 60_000, commits: 90_000, rollbacks: 0 });
    expect(w.perStep).toEqual({ walBytes: 100, transactions: 2, commits: 3, rollbacks: 0 });
    expect(w).toMatchObject({ role: 'store', server: 'postgres', private: true, unreadable: null });
    expect(w.backgroundCpuPerSecond).toBeNull();
  });

  it("leaves Redis's own INFO of the first reading out of its commands, and gives INFO cpu in µs per step", () => {
    const w = serverWindow(
      meta('redis', 'store'),
      reading(0, 3, { commands: 1_000, infoCpuSeconds: 2.9 }),
      reading(5_000, 3.6, { commands: 61_001, infoCpuSeconds: 3.5 }),
      20_000,
    );
    expect(w.counters.commands).toBe(60_000);
    expect(w.perStep.commands).toBe(3);
    expect(w.perStep.infoCpuMicros).toBeCloseTo(30, 9);
    expect(w.cpuMicrosPerStep).toBeCloseTo(30, 9);
  });

  it('says a server whose process could not be read is unread, rather than 0', () => {
    const gone = serverWindow(meta('nats', 'bus'), reading(0, 1), reading(1_000, NaN), 100);
    expect(gone.cpuSeconds).toBeNull();
    expect(gone.cpuMicrosPerStep).toBeNull();
    expect(gone.unreadable).toMatch(/could not be read/);
    const remote = serverWindow(
      { ...meta('kafka', 'bus', true), pid: undefined, unreadable: 'kafka.example is not this machine' },
      reading(0, NaN),
      reading(1_000, NaN),
      100,
    );
    expect(remote.unreadable).toBe('kafka.example is not this machine');
  });

  it("reports a shared server's background rate, and the figure less it over the window", () => {
    const w = serverWindow(meta('kafka', 'bus', true), reading(2_000, 10.4), reading(12_000, 13.4), 10_000, {
      before: reading(0, 10),
      after: reading(2_000, 10.4),
    });
    // 0.2 CPU s per s in the background; 3 s in the 10 s window, 2 of them the background's.
    expect(w.backgroundCpuPerSecond).toBeCloseTo(0.2, 9);
    expect(w.cpuMicrosPerStep).toBeCloseTo(300, 9);
    expect(w.netCpuMicrosPerStep).toBeCloseTo(100, 9);
  });

  it('totals worker, bus and store', () => {
    const bus = serverWindow(meta('nats', 'bus'), reading(0, 0), reading(1_000, 0.21), 30_000);
    const store = serverWindow(meta('redis', 'store'), reading(0, 0), reading(1_000, 0.63), 30_000);
    const cpu = systemCpu(30_000, 1.8, [bus, store]);
    expect(cpu.workerMicrosPerStep).toBeCloseTo(60, 9);
    expect(cpu.busMicrosPerStep).toBeCloseTo(7, 9);
    expect(cpu.storeMicrosPerStep).toBeCloseTo(21, 9);
    expect(cpu.totalMicrosPerStep).toBeCloseTo(88, 9);
    expect(cpu.busIsStore).toBe(false);
    expect(cpu.steps).toBe(30_000);
  });

  it('counts one server that is both bus and store once (Redis bus on the Redis store; BullMQ)', () => {
    const redis = serverWindow(meta('redis', 'bus+store'), reading(0, 0), reading(1_000, 0.45), 30_000);
    const cpu = systemCpu(30_000, 0.75, [redis]);
    expect(cpu.busIsStore).toBe(true);
    expect(cpu.busMicrosPerStep).toBeNull();
    expect(cpu.storeMicrosPerStep).toBeCloseTo(15, 9);
    expect(cpu.totalMicrosPerStep).toBeCloseTo(40, 9);
  });

  it('has no total when a server could not be read', () => {
    const bus = serverWindow(meta('kafka', 'bus', true), reading(0, NaN), reading(1_000, NaN), 100);
    const store = serverWindow(meta('redis', 'store'), reading(0, 0), reading(1_000, 0.01), 100);
    const cpu = systemCpu(100, 0.01, [bus, store]);
    expect(cpu.busMicrosPerStep).toBeNull();
    expect(cpu.storeMicrosPerStep).toBeCloseTo(100, 9);
    expect(cpu.totalMicrosPerStep).toBeNull();
  });
});

describe("servers' own counters", () => {
  it('reads the fields of a Redis INFO reply', () => {
    const info =
      '# CPU\r\nused_cpu_sys:12.345678\r\nused_cpu_user:23.456789\r\n\r\n# Stats\r\ntotal_commands_processed:98765\r\n';
    const fields = parseRedisInfo(info);
    expect(Number(fields.used_cpu_sys) + Number(fields.used_cpu_user)).toBeCloseTo(35.802467, 9);
    expect(fields.total_commands_processed).toBe('98765');
  });

  it('turns a PostgreSQL LSN into bytes of WAL', () => {
    expect(lsnBytes('0/0')).toBe(0);
    expect(lsnBytes('0/16B3748')).toBe(0x16b3748);
    expect(lsnBytes('16/B374D848')).toBe(0x16 * 2 ** 32 + 0xb374d848);
    expect(lsnBytes('16/B374D848') - lsnBytes('16/B374D000')).toBe(0x848);
    expect(() => lsnBytes('nonsense')).toThrow(/not a PostgreSQL LSN/);
  });
});
