/**
 * The crash suite with signed checkpoints and the hash chain on (BATON_SIGNING_KEYS; records are
 * not encrypted, so the suite's invariants read them with the identity codec): every kill,
 * hand-off and zombie write must leave a chain that the next owner verifies. On Kafka, whose
 * journal takes a zombie's late appends, the chain runs over the fenced (effective) entries.
 */
import { randomBytes } from 'node:crypto';
import { describeCrashSuite } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const signed = { BATON_SIGNING_KEYS: `s1:${randomBytes(32).toString('base64')}` };

// The SIGTERM hand-off is left out (crash-sigterm.serial.int.spec.ts runs it on the plain pairs):
// what it writes (a checkpoint, the journal's flush) a SIGKILL and a zombie put through the chain as well.
describeCrashSuite('nats+redis, signed and chained', crashEnvironment('redis', 'nats', signed));
describeCrashSuite('kafka+redis, signed and chained', crashEnvironment('redis', 'kafka', signed));
