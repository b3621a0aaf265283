import { describeCrashSuite } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeCrashSuite('nats+postgres', crashEnvironment('postgres'));
