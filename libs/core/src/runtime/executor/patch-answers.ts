/**
 * ctx.patched / ctx.deprecatePatch answers, fixed per change id for one execution:
 * 1. the journal holds a PatchMarker for it: true (the run took the new branch before);
 * 2. else the journal holds a step numbered at or after the next one: false for patched (the
 *    recorded execution went on past this point with the old code, so replay must follow it);
 * 3. else the run is past everything it recorded: true, with a PatchMarker to journal so that
 *    replays answer true by rule 1.
 */
import { BatonError } from '../../shared/errors.js';
import type { NewEntry } from './execution-host.js';
import type { ReplayHistory } from './history.js';

const CHANGE_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

export class PatchAnswers {
  private readonly answers = new Map<string, boolean>();

  constructor(private readonly history: ReplayHistory | undefined) {}

  /** The answer for `changeId` at step `nextSeq`, and the marker to journal when it is new. */
  decide(changeId: string, deprecated: boolean, nextSeq: number): { answer: boolean; marker?: NewEntry } {
    if (!CHANGE_ID_PATTERN.test(changeId)) {
      throw new BatonError(
        'BATON_PATCH_ID',
        `ctx.${deprecated ? 'deprecatePatch' : 'patched'}('${changeId}'): a change id is 1-128 characters ` +
          "from letters, digits, '_', '.', ':' and '-'",
      );
    }
    const known = this.answers.get(changeId);
    if (known !== undefined) return { answer: known };
    let answer: boolean;
    let marker: NewEntry | undefined;
    if (this.history?.hasPatch(changeId)) answer = true;
    else if (this.history?.recordsStepFrom(nextSeq)) answer = deprecated;
    else {
      answer = true;
      marker = { type: 'PatchMarker', changeId, atSeq: nextSeq, ...(deprecated && { deprecated: true }) };
    }
    this.answers.set(changeId, answer);
    return marker ? { answer, marker } : { answer };
  }
}
