/**
 * `ctx.startChild` and `ctx.executeChild` on top of the context's own steps (core's
 * child-workflows.ts has the invariants): the start is an activity whose result names the child,
 * and `result()` is a signal wait. Nothing here is journaled by hand, so replay takes the same path
 * as any other step.
 */
import {
  CHILD_START_PREFIX,
  childSignalName,
  type ChildEnd,
  type ChildHandle,
  type ChildStarted,
  type ChildWorkflowOptions,
} from '../../author/child-workflows.js';
import { childKey } from '../run-keys.js';
import { ConfigError } from '../../shared/errors.js';
import { ChildWorkflowError } from '../../author/errors.js';
import { runIdForKey } from '../../shared/ids.js';
import type { ActivityDefinition, AnyWorkflowDefinition, WorkflowContext } from '../../author/workflow.js';
import type { ChildStartRequest, ExecutionHost } from './execution-host.js';

interface StartInput {
  workflow: string;
  version: number;
  input: unknown;
  parentClosePolicy: ChildStarted['parentClosePolicy'];
}

/** The two context methods, bound to one run's context and host. */
export function childWorkflowMethods(
  ctx: () => WorkflowContext,
  host: ExecutionHost,
): Pick<WorkflowContext, 'startChild' | 'executeChild'> {
  const startChild = async (
    workflow: AnyWorkflowDefinition,
    input: unknown,
    options: ChildWorkflowOptions = {},
  ): Promise<ChildHandle<unknown>> => {
    const request = startInput(workflow, input, options);
    const started = (await ctx().run(startActivity(workflow.name, host), request)) as ChildStarted;
    let result: Promise<unknown> | undefined;
    return {
      runId: started.runId,
      workflow: started.workflow,
      version: started.version,
      result: () => (result ??= waitForEnd(ctx(), started)),
    };
  };
  return {
    startChild: startChild as WorkflowContext['startChild'],
    executeChild: (async (workflow: AnyWorkflowDefinition, input: unknown, options?: ChildWorkflowOptions) =>
      (await startChild(workflow, input, options)).result()) as WorkflowContext['executeChild'],
  };
}

function startInput(
  workflow: AnyWorkflowDefinition,
  input: unknown,
  options: ChildWorkflowOptions,
): StartInput {
  if (workflow?.kind !== 'workflow') {
    throw new ConfigError(
      'ctx.startChild: the first argument must be a workflow definition (defineWorkflow)',
    );
  }
  const version = options.version ?? workflow.version;
  if (!Number.isInteger(version) || version < 1) {
    throw new ConfigError(
      `ctx.startChild(${workflow.name}): version ${String(version)} is not a positive integer`,
    );
  }
  const parentClosePolicy = options.parentClosePolicy ?? 'cancel';
  if (parentClosePolicy !== 'cancel' && parentClosePolicy !== 'abandon') {
    throw new ConfigError(
      `ctx.startChild(${workflow.name}): parentClosePolicy '${String(parentClosePolicy)}' is not 'cancel' or 'abandon'`,
    );
  }
  return { workflow: workflow.name, version, input, parentClosePolicy };
}

/**
 * The step that starts a child: named after the child's workflow, so a replay that meets another
 * workflow at this step is a non-determinism. Its input is not journaled (only its result).
 */
function startActivity(workflow: string, host: ExecutionHost): ActivityDefinition<StartInput, ChildStarted> {
  return {
    kind: 'activity',
    name: `${CHILD_START_PREFIX}${workflow}`,
    run: async (request, io) => {
      if (host.startChild === undefined) {
        throw new ConfigError(`ctx.startChild(${workflow}): this host cannot start runs`);
      }
      const idempotencyKey = childKey(io.runId, io.seq);
      const runId = runIdForKey(request.workflow, idempotencyKey);
      const start: ChildStartRequest = {
        runId,
        workflow: request.workflow,
        version: request.version,
        input: request.input,
        idempotencyKey,
      };
      await host.startChild(start);
      return {
        runId,
        workflow: request.workflow,
        version: request.version,
        parentClosePolicy: request.parentClosePolicy,
      };
    },
  };
}

/**
 * The child's end; a child that continued as new is followed to its successor, which reports its
 * own end (invariant 7), until a run of the chain ends for good. Each wait is a journaled signal, so
 * a replay follows the same chain.
 */
async function waitForEnd(ctx: WorkflowContext, child: ChildStarted): Promise<unknown> {
  let runId = child.runId;
  for (;;) {
    const end = await ctx.waitForSignal<ChildEnd>(childSignalName(runId));
    switch (end.status) {
      case 'completed':
        return end.result;
      case 'failed':
      case 'cancelled':
        throw new ChildWorkflowError(runId, child.workflow, end.status, end.error);
      case 'continued':
        runId = end.successor;
    }
  }
}
