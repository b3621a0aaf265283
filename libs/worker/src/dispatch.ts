/**
 * Step 3 of a run's path through the worker: dispatch by message kind. Decodes a delivery (a
 * message that will never succeed is dead-lettered with its reason, worker invariant 2), then:
 * `start` creates and leases the run in one store call; `resume` and `wake` claim a run the store
 * knows; `signal` and `cancel` are recorded in the store and wake the run. A run whose workflow
 * version this worker lacks is put back for one that has it (worker invariant 4). A message that
 * failed for a reason that may pass is redelivered with backoff, and dead-lettered after
 * `maxDeliveries`.
 */
import type { AnyWorkflowDefinition } from '@baton/core';
import type { Delivery, RunRecord } from '@baton/core/adapter';
import {
  cancelMessage,
  sendRunMessage,
  type CancelMessage,
  type RunMessage,
  type SignalMessage,
  CONTINUED_AS,
  isContinuedAsNew,
  MAX_CONTINUATION_HOPS,
} from '@baton/core/runtime';
import {
  childStartOf,
  isSettledChild,
  retellParent,
  settleDeadLetteredChild,
  unfinishedTombstoneEpoch,
} from './run/child-dead-letters.js';
import { claimRun, type ClaimDeps } from './claim.js';
import { workflowKey, type ResolvedWorkerOptions } from './options.js';
import { deadLetterDelivery, messageValue, parseRunMessage, PoisonMessage, runIdOf } from './poison.js';
import type { PutBack } from './put-back.js';
import { enqueueWake, redeliveryDelayMs } from './run/run-messages.js';
import { deliverAlongChain } from './run/carry-over.js';

/** Base of the redelivery backoff of a message that failed for a reason that may pass. */
const REDELIVERY_BASE_MS = 500;

/** What dispatching uses of the worker: what claims use, and the limits on a delivery. */
export interface DispatchDeps
  extends ClaimDeps, Pick<ResolvedWorkerOptions, 'maxMessageBytes' | 'maxDeliveries'> {}

export class Dispatcher {
  constructor(
    private readonly deps: DispatchDeps,
    /** The workflows this worker registers, by workflowKey(name, version). */
    private readonly registry: ReadonlyMap<string, AnyWorkflowDefinition>,
    private readonly putBacks: PutBack,
  ) {}

  /** Handles one delivery to its end: claimed, recorded, put back, redelivered or dead-lettered. */
  readonly handle = async (delivery: Delivery): Promise<void> => {
    const { deps } = this;
    let message: RunMessage | undefined;
    try {
      message = parseRunMessage(delivery, deps.maxMessageBytes);
      await this.dispatch(message, delivery);
    } catch (err) {
      if (err instanceof PoisonMessage) {
        await this.deadLetter(delivery, message, err.letterCode, err.message);
        return;
      }
      if (delivery.deliveryCount >= deps.maxDeliveries) {
        const reason = `failed ${delivery.deliveryCount} deliveries; last error: ${(err as Error)?.message ?? String(err)}`;
        await this.deadLetter(delivery, message, 'repeated-failure', reason);
        return;
      }
      deps.logger.warn(
        { err, deliveryCount: delivery.deliveryCount, runId: message?.runId },
        'run message failed; it will be redelivered',
      );
      const delayMs = redeliveryDelayMs(delivery.deliveryCount, REDELIVERY_BASE_MS, 30_000);
      await delivery.nak(delayMs).catch(() => undefined);
    }
  };

  /**
   * Dead-letters a delivery, with the run id when the message (or its raw bytes) has one. The
   * start of a child settles the child first and tells its parent (child-dead-letters.ts); if that
   * fails, the message is redelivered and dead-lettered only once it succeeds.
   */
  private async deadLetter(
    delivery: Delivery,
    message: RunMessage | undefined,
    code: string,
    reason: string,
  ): Promise<void> {
    const { deps } = this;
    const { instruments } = deps;
    const child = childStartOf(delivery, message);
    if (child !== undefined) {
      try {
        await settleDeadLetteredChild(deps, child, { code, reason });
      } catch (err) {
        deps.logger.warn(
          { err, runId: child.runId, parent: child.parentRunId, code },
          'settling a child whose start is dead-lettered failed; the start will be redelivered',
        );
        const delayMs = redeliveryDelayMs(delivery.deliveryCount, REDELIVERY_BASE_MS, 30_000);
        await delivery.nak(delayMs).catch(() => undefined);
        return;
      }
    }
    const letter = { code, reason, runId: runIdOf(delivery, message) };
    return deadLetterDelivery(delivery, letter, deps, instruments, REDELIVERY_BASE_MS);
  }

  private async dispatch(message: RunMessage, delivery: Delivery): Promise<void> {
    const { deps } = this;
    const { sessions, store, transport } = deps;
    switch (message.kind) {
      case 'start': {
        const workflow = this.registry.get(workflowKey(message.workflow, message.version));
        if (!workflow) {
          // A record may exist: a worker that has the version created it and died before the
          // ack. Then the run has begun and is put back like any other; else nothing has begun,
          // and the message is put back for a live worker that has the version, or dead-lettered
          // (unknown-workflow) once none has had it for the grace period (put-back.ts).
          // A child whose start was being dead-lettered when its worker died is not a run under
          // way: its start goes on toward the dead letter that settles it (child-dead-letters.ts).
          const existing = await store.runs.get(message.runId);
          if (existing && (await unfinishedTombstoneEpoch(deps, existing)) === undefined) {
            return this.claimKnownRun(existing, message, delivery);
          }
          return this.putBacks.putBackStart(message, delivery);
        }
        const acquiredAt = Date.now();
        const { leaseMs, workerId } = deps;
        // Create and lease in one store call.
        const taken = await store.runs.createAndLease(
          {
            runId: message.runId,
            workflow: message.workflow,
            version: message.version,
            input: await messageValue(deps, message),
            idempotencyKey: message.idempotencyKey ?? null,
            traceparent: message.traceparent ?? null,
          },
          workerId,
          leaseMs,
        );
        // An existing run (same id or idempotency key) is claimed like any known run, as it was created.
        if (!taken.created) {
          // A child whose start was dead-lettered never runs; one whose settling a crash cut
          // short runs after all, once, its parent never having been told (child-dead-letters.ts).
          const settling = await unfinishedTombstoneEpoch(deps, taken.run);
          if (settling !== undefined) await store.leases.release(taken.run.runId, settling);
          return this.claimKnownRun(taken.run, message, delivery);
        }
        return claimRun(this.deps, taken.run, workflow, message, delivery, {
          lease: taken.lease,
          acquiredAt,
        });
      }
      case 'resume':
      case 'wake': {
        const run = await store.runs.get(message.runId);
        if (!run)
          throw new PoisonMessage(
            'unknown-run',
            `${message.kind} message for run ${message.runId}, which the store does not know`,
          );
        return this.claimKnownRun(run, message, delivery);
      }
      case 'signal':
        return this.deliverSignal(message, delivery);
      case 'cancel': {
        const { found, wake, tooLate } = await store.control.requestCancel(message.runId, message.reason);
        if (!found) return this.unknownRunYet(message, delivery);
        if (tooLate === true) return this.cancelTooLate(message, delivery);
        // The owner, when another worker, is told by the store (RunControlStore.watchCancels).
        sessions.get(message.runId)?.cancel(message.reason);
        if (wake) await enqueueWake(transport.runQueue, message.runId, 'cancel');
        return delivery.ack();
      }
    }
  }

  /**
   * Delivers a signal to its run or, when the run has continued as new, along the chain to the
   * first run that keeps it (carry-over.ts, deliverAlongChain).
   */
  private async deliverSignal(message: SignalMessage, delivery: Delivery): Promise<void> {
    const { deps } = this;
    const { instruments, store, transport, logger } = deps;
    // What every line about it says (the names operators' log queries use).
    const signal = { runId: message.runId, signal: message.name, signalId: message.signalId };
    const found = await deliverAlongChain(
      store,
      deps.payloadProtection,
      {
        runId: message.runId,
        name: message.name,
        signalId: message.signalId,
        payload: await messageValue(deps, message),
      },
      MAX_CONTINUATION_HOPS,
    );
    switch (found.kind) {
      case 'delivered':
        if (found.hops > 0) {
          logger.debug(
            { ...signal, deliveredTo: found.runId, hops: found.hops },
            'signal passed on along the continue-as-new chain',
          );
        }
        if (found.wake) await enqueueWake(transport.runQueue, found.runId, 'signal');
        return delivery.ack();
      case 'dropped':
        // The run finished: nothing will read the signal, and redelivering it would change nothing.
        instruments.signalsDropped.add(1);
        logger.debug({ ...signal, finishedRun: found.runId }, 'signal dropped: its run has already finished');
        return delivery.ack();
      case 'unknown':
        return found.hops === 0
          ? this.unknownRunYet(message, delivery)
          : this.unknownRunYet(
              message,
              delivery,
              `signal for run ${message.runId}, passed on along its continue-as-new chain to run ` +
                `${found.runId}, which the store does not know (never started, or deleted)`,
            );
      case 'handing-over':
        return this.handingOver(message, delivery, found.runId, found.successor);
      case 'too-long':
        throw new PoisonMessage(
          'continuation-chain',
          `signal '${message.name}' for run ${message.runId}: its continue-as-new chain is longer than ` +
            `${MAX_CONTINUATION_HOPS} runs; send it to the chain's current run instead`,
        );
    }
  }

  /**
   * A run that continued as new carries its inbox to its successor before it records its end: a
   * signal for it waits until then (milliseconds; a lease period when its owner died meanwhile), so
   * it cannot overtake one sent before it.
   */
  private async handingOver(
    message: SignalMessage,
    delivery: Delivery,
    runId: string,
    successor: string,
  ): Promise<void> {
    if (delivery.deliveryCount >= this.deps.maxDeliveries) {
      throw new PoisonMessage(
        'repeated-failure',
        `signal for run ${message.runId}: run ${runId} continued as new (as run ${successor}) but has ` +
          `not recorded its end after ${delivery.deliveryCount} deliveries`,
      );
    }
    this.deps.logger.debug(
      { runId, successor, signalId: message.signalId },
      'signal waits for its run to hand over',
    );
    await delivery.nak(redeliveryDelayMs(delivery.deliveryCount, 50, 5_000));
  }

  /**
   * A cancel that came after its run ended, or while its owner journals the end, changes nothing,
   * except for a run that continued as new: the cancel goes on to its successor, so a cancel that
   * crossed the continuation (a parent's cancel of its child, say) reaches the chain's current run.
   * The chain ends, so this ends.
   */
  private async cancelTooLate(message: CancelMessage, delivery: Delivery): Promise<void> {
    const { store, transport, logger } = this.deps;
    const run = await store.runs.get(message.runId);
    // The mark names the successor from the moment the run begins to continue (before its end is
    // recorded); a run continued by an older worker names it in its result only.
    const successor =
      run?.continuedAs ??
      (run?.status === 'completed' && isContinuedAsNew(run.result)
        ? run.result[CONTINUED_AS].runId
        : undefined);
    if (successor !== undefined) {
      await sendRunMessage(transport.runQueue, cancelMessage(successor, message.reason));
      logger.debug(
        { runId: message.runId, successor },
        'cancel of a continued run passed on to its successor',
      );
    } else {
      logger.debug({ runId: message.runId }, 'cancel too late: its run has ended or is ending');
    }
    return delivery.ack();
  }

  /**
   * Claims a run the store knows, if this worker registers its workflow version. The start of a
   * child settled when its start was dead-lettered (a redrive, a duplicate) is dropped, its
   * parent sent the child's end again (child-dead-letters.ts invariant 3).
   */
  private async claimKnownRun(run: RunRecord, message: RunMessage, delivery: Delivery): Promise<void> {
    if (message.kind === 'start' && isSettledChild(run)) {
      await retellParent(this.deps, run);
      return delivery.ack();
    }
    const workflow = this.registry.get(workflowKey(run.workflow, run.version));
    if (workflow) return claimRun(this.deps, run, workflow, message, delivery);
    return this.putBacks.putBack(run, delivery);
  }

  /** A signal or cancel can overtake its run's start message; retry a while before giving up. */
  private async unknownRunYet(message: RunMessage, delivery: Delivery, why?: string): Promise<void> {
    if (delivery.deliveryCount >= this.deps.maxDeliveries) {
      throw new PoisonMessage(
        'unknown-run',
        why ?? `${message.kind} message for run ${message.runId}, which never started`,
      );
    }
    await delivery.nak(redeliveryDelayMs(delivery.deliveryCount, 100, 5_000));
  }
}
