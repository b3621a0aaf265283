/**
 * An agent on real worker processes (libs/testing/src/crash/agent-scenario.ts, the support agent
 * of examples/agent): its only worker SIGKILLed while the model streams a turn, after a person
 * approved the refund; a new worker resumes. No tool call runs twice, the model runs again only
 * for the turn it was streaming, the tokens go on (a reset, then that turn whole), the approval is
 * asked for and given once, and the conversation continues as new and answers. On NATS with
 * Redis, and on Kafka with Postgres (the bus whose appends cannot be refused: the tokens stream's
 * fence record).
 */
import { describeAgentCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeAgentCrash('nats+redis', crashEnvironment('redis'));
describeAgentCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
