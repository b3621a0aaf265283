import { describe, expect, it } from 'vitest';
import { ownedPartitions, PartitionOwnership } from './partition-ownership.js';

const split = (members: string[], count: number) =>
  new Map(members.map((m) => [m, ownedPartitions(m, members, count)]));

describe('ownedPartitions', () => {
  it('gives every partition to exactly one member, the same on every member', () => {
    const members = ['w-a', 'w-b', 'w-c'];
    const owned = [...split(members, 12).values()].flat().sort((a, b) => a - b);
    expect(owned).toEqual([...Array(12).keys()]);
  });

  it('moves only the partitions of a member that leaves, and only to the others', () => {
    const before = split(['w-a', 'w-b', 'w-c'], 24);
    const after = split(['w-a', 'w-b'], 24);
    for (const member of ['w-a', 'w-b']) {
      // What a staying member held, it still holds; it only gains the leaver's.
      expect(after.get(member)).toEqual(expect.arrayContaining(before.get(member)!));
      const gained = after.get(member)!.filter((p) => !before.get(member)!.includes(p));
      for (const p of gained) expect(before.get('w-c')).toContain(p);
    }
  });

  it('counts the member itself even when the list leaves it out', () => {
    expect(ownedPartitions('w-a', [], 6)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ownedPartitions('w-a', ['w-b'], 6)).toEqual(ownedPartitions('w-a', ['w-a', 'w-b'], 6));
  });
});

describe('PartitionOwnership', () => {
  it('reads the shares of every live worker that handed over the transport, and drops a stopped one', async () => {
    let live = ['w-a', 'w-b', 'w-c'];
    const changes: number[][] = [];
    const ownership = new PartitionOwnership(
      { memberId: 'w-b', members: () => Promise.resolve(live) },
      12,
      5,
      (owned) => changes.push(owned),
      undefined,
      () => ['w-a', 'w-b'],
    );
    await ownership.start();
    const share = (id: string, members: string[]) => ownedPartitions(id, members, 12);
    const both = [...share('w-a', live), ...share('w-b', live)].sort((a, b) => a - b);
    expect(share('w-a', live).length).toBeGreaterThan(0);
    expect(changes).toEqual([both]);
    // w-a stopped: its presence left the list, so its share goes to whoever wins it now.
    live = ['w-b', 'w-c'];
    await new Promise((r) => setTimeout(r, 30));
    ownership.stop();
    expect(changes.at(-1)).toEqual(share('w-b', live));
  });
});
