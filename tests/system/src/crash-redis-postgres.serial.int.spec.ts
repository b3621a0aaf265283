/** The crash suite on the Redis transport with the Postgres store. */
import { describeCrashSuite } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeCrashSuite('redis+postgres', crashEnvironment('postgres', 'redis'));
