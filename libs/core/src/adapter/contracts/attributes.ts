/**
 * Search attributes in the store (`store.attributes`, {@link RunAttributeStore};
 * docs/search-attributes.md): the typed fields a workflow sets on its run with
 * `ctx.setAttributes`, kept on the run's record (`RunRecord.attributes`), indexed for the run
 * queries' `attributes` filter (run-queries.ts), and counted per keyword and boolean value.
 *
 * What a store keeps for them, each in the same atomic step as the record's own change:
 * - the attributes on the record, read back by `runs.get` and `runs.list`;
 * - an index per attribute that serves equality (keyword, boolean, number, time) and ranges
 *   (number, time) in the listing's order and keyset pages, as the other filters are served;
 * - counts of runs per keyword or boolean value, by status and workflow, moved as runs change
 *   status and as their attributes change, so {@link RunAttributeStore.count} reads them instead
 *   of counting runs;
 * - nothing once the run is deleted (retention, `runs.delete`): its index entries and counts go
 *   with its record.
 *
 * Left out on purpose: a registry of names and types across runs (a name may be a keyword on one
 * run and a number on another: each is indexed under its type, and a filter names the type it
 * means); kept counts of number and time values (their filters are counted by walking the runs,
 * as `client.bulk.count` does); the limit of attributes a run holds, which the one writer
 * (`ctx.setAttributes`) checks against the run's journal.
 */
import type { AttributeChanges, RunAttribute } from '../../shared/attributes.js';
import type { RunCounts } from './run-queries.js';

/** A value whose runs are counted as they change: a keyword or a boolean attribute. */
export type CountedAttribute = Extract<RunAttribute, { type: 'keyword' | 'boolean' }>;

export interface RunAttributeStore {
  /**
   * Applies `changes` to the run's attributes (a value replaces the attribute's, null removes
   * it, names left out keep theirs) with its indexes and counts, atomically and under the fence:
   * only while `epoch` is the lease's current epoch and the run is not finished, else
   * FencedWriteError. Repeating a call changes nothing more. A run whose lease exists without a
   * record (claimed without `runs.create`) has nothing to index: the call succeeds and keeps nothing.
   */
  set(runId: string, epoch: number, changes: AttributeChanges): Promise<void>;
  /**
   * How many runs hold attribute `name` with this keyword or boolean value, by status and by
   * workflow and status: read from counts kept as the runs change, never by counting them. The
   * same shape as `runs.count()`, over those runs only.
   */
  count(name: string, attribute: CountedAttribute): Promise<RunCounts>;
}
