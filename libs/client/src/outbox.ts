/**
 * What the client sends on the run queue, and how (shared by the root client's start, signal and
 * cancel and by the sub-clients that send: `runs` pause and resume, `timeTravel` fork): a value
 * inline and sealed, or stored and sent by reference; a message tried again through a briefly
 * unavailable bus or store (retry-unavailable.ts).
 */
import type { Transport } from '@baton/core/adapter';
import {
  sealValue,
  sendRunMessage,
  type ClaimCheck,
  type OutgoingRunMessage,
  type PayloadProtection,
  type PayloadRef,
} from '@baton/core/runtime';
import { retryUnavailable } from './retry-unavailable.js';

export class Outbox {
  constructor(
    private readonly transport: Transport,
    private readonly protection: PayloadProtection,
    private readonly claimCheck: ClaimCheck | undefined,
    private readonly retryUnavailableMs: number,
  ) {}

  /** `attempt`, tried again through a briefly unavailable bus or store (retry-unavailable.ts). */
  retrying<T>(operation: string, attempt: () => Promise<T>): Promise<T> {
    return retryUnavailable(operation, this.retryUnavailableMs, attempt);
  }

  /** Sends `message`, built once, so every attempt is the same message (retry-unavailable.ts, 2). */
  send(operation: string, message: OutgoingRunMessage): Promise<void> {
    return this.retrying(operation, () => sendRunMessage(this.transport.runQueue, message));
  }

  /**
   * `{ [field]: value }`, or `{ [field]Ref: reference }` once a large value is stored. A value with
   * no JSON form raises UnencodableValueError naming `what` (here, or in encodeMessage without a
   * claim check), before anything is stored or sent.
   */
  async inlineOrRef<F extends 'input' | 'payload'>(
    runId: string,
    value: unknown,
    field: F,
    what: string,
  ): Promise<{ [K in F]?: unknown } & { [K in `${F}Ref`]?: PayloadRef }> {
    const ref = await this.claimCheck?.offloadValue(runId, value, what);
    // Inline values are sealed when the client encrypts (docs/integrity.md); a reference's bytes
    // already went through the codec.
    const purpose = field === 'input' ? 'run input' : 'signal payload';
    const inline = () => sealValue(value, runId, purpose, this.protection, what);
    return (ref === undefined ? { [field]: inline() } : { [`${field}Ref`]: ref }) as {
      [K in F]?: unknown;
    } & { [K in `${F}Ref`]?: PayloadRef };
  }
}
