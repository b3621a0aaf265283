/**
 * A hash chain over one run's effective journal entries: each entry carries, in `prev`, the hash
 * of everything before it, so an entry removed, reordered or altered in the middle of a journal
 * is found by the first entry after it.
 *
 *   head(-1) = chainGenesis(runId)
 *   head(i)  = SHA-256(head(i-1) "\n" canonicalJson(entry i without prev)), base64url
 *   entry i's prev = head(i-1)
 *
 * The chain runs over the effective entries, those left after filterFencedEntries: a fenced
 * zombie's entries are not part of the history, and no live writer ever linked to them.
 *
 * A LeaseAcquired entry may lack `prev`: a new owner appends its fence before it reads the
 * journal, so it cannot know the head yet. It is still hashed into the chain, so the owner's
 * next entry (linked after the read) covers it and everything before it.
 *
 * Invariant: the chain is not keyed. On its own it finds accidents and naive edits; against
 * someone who can write the journal it relies on encryption (records cannot be forged, only
 * removed, replayed or reordered, which the chain finds) and on signed checkpoints (which record
 * the head). docs/integrity.md lists what is and is not detected.
 */
import { createHash } from 'node:crypto';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import type { JournalEntry, PositionedEntry } from '../../shared/journal.js';
import { canonicalJson } from './canonical-json.js';
import { PAYLOAD_ENV } from './keyring.js';

/** A journal entry with its link to the entries before it. */
export type ChainedEntry = JournalEntry & {
  /** The chain head before this entry (base64url SHA-256). */
  prev?: string;
};

/** The head of a run's chain before its first entry. */
export function chainGenesis(runId: string): string {
  return createHash('sha256').update('baton-journal-chain-v1\n').update(runId).digest('base64url');
}

/** The chain head after `entry`, given the head before it. `entry.prev` is not hashed. */
export function chainLink(prevHash: string, entry: ChainedEntry): string {
  const { prev: _prev, ...content } = entry;
  return createHash('sha256')
    .update(prevHash)
    .update('\n')
    .update(canonicalJson(content))
    .digest('base64url');
}

/** Stamps `prev` on copies of `entries` (in order) after head `prevHash`; returns them and the new head. */
export function linkEntries(
  entries: readonly JournalEntry[],
  prevHash: string,
): { entries: ChainedEntry[]; head: string } {
  let head = prevHash;
  const linked = entries.map((entry): ChainedEntry => {
    const stamped: ChainedEntry = { ...entry, prev: head };
    head = chainLink(head, stamped);
    return stamped;
  });
  return { entries: linked, head };
}

/** The head after `entries`, starting from `startHash`, without checking their links. */
export function chainHeadOf(entries: readonly JournalEntry[], startHash: string): string {
  let head = startHash;
  for (const entry of entries) head = chainLink(head, entry);
  return head;
}

/** Options of {@link verifyChain}. */
export interface VerifyChainOptions {
  /** Named by errors; its genesis is the default start. */
  runId: string;
  /**
   * The head before the first item: the checkpoint's `chainHead` when verifying the journal after it.
   * @defaultValue chainGenesis(runId)
   */
  startHash?: string;
  /**
   * The index of the first item among the run's effective entries (the checkpoint's entry count
   * when verifying the journal after it), so errors number entries as a replay would.
   * @defaultValue 0
   */
  startIndex?: number;
  /**
   * Accept entries without `prev` (written before the chain was turned on); they are hashed all the same.
   * @defaultValue false
   */
  allowUnlinked?: boolean;
  /** Prefixes the entry named in errors, e.g. `checkpoint 3`. */
  where?: string;
}

/**
 * Walks `items` (effective entries, oldest first), checks each `prev` against the head of the
 * entries before it and returns the head after the last. Throws CheckpointIntegrityError naming
 * the first entry whose link does not hold.
 */
export function verifyChain(
  items: readonly (ChainedEntry | PositionedEntry)[],
  options: VerifyChainOptions,
): string {
  const { runId } = options;
  const startIndex = options.startIndex ?? 0;
  let head = options.startHash ?? chainGenesis(runId);
  items.forEach((item, offset) => {
    const positioned = isPositioned(item);
    const entry: ChainedEntry = positioned ? item.entry : item;
    const index = startIndex + offset;
    const fail = (detail: string): CheckpointIntegrityError =>
      new CheckpointIntegrityError(
        runId,
        describeEntry(entry, index, positioned ? item.position : undefined, options.where),
        `${detail}. Do not resume from this journal: restore it, or let the run fail`,
      );
    const { prev } = entry;
    if (prev === undefined) {
      if (entry.type !== 'LeaseAcquired' && options.allowUnlinked !== true) {
        throw fail(
          'it carries no link to the entries before it (no prev field), but the hash chain is on; if it was written ' +
            `before encryption or signing was turned on, set ${PAYLOAD_ENV.allowPlaintext}=true while such journals remain`,
        );
      }
    } else if (typeof prev !== 'string') {
      throw fail('its prev field is not a hash string');
    } else if (prev !== head) {
      throw fail(
        `it records predecessor hash ${short(prev)} but the entries before it hash to ${short(head)}: ` +
          (offset === 0 && options.startHash !== undefined
            ? 'it does not continue the checkpoint it follows (entries between them were removed, or the checkpoint was replaced)'
            : offset === 0
              ? 'entries before it were removed'
              : `entry #${index - 1} (${typeOf(items[offset - 1]!)}) or an earlier one was removed, reordered or altered, or this entry was moved`),
      );
    }
    head = chainLink(head, entry);
  });
  return head;
}

function isPositioned(item: ChainedEntry | PositionedEntry): item is PositionedEntry {
  return 'entry' in item && 'position' in item;
}

function typeOf(item: ChainedEntry | PositionedEntry): string {
  return isPositioned(item) ? item.entry.type : item.type;
}

function describeEntry(
  entry: JournalEntry,
  index: number,
  position: number | undefined,
  where?: string,
): string {
  const step = 'seq' in entry ? ` of step #${entry.seq}` : '';
  const at = position === undefined ? '' : `, journal position ${position}`;
  return `${where === undefined ? '' : `${where}: `}journal entry #${index} (${entry.type}${step}${at})`;
}

/** Enough of a hash to compare by eye in a log line. */
function short(hash: string): string {
  return hash.length > 12 ? `${hash.slice(0, 12)}…` : hash;
}
