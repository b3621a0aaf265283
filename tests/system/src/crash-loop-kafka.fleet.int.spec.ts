import { describeCrashLoop } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

// Issue 22, item 4: a worker in a crash loop beside two healthy ones. With the partitions split by
// the store's presence (the default), its joins and deaths stop nobody, and its partitions come
// back to the healthy workers as soon as its store connection drops.
describeCrashLoop('kafka+redis', crashEnvironment('redis', 'kafka'));
describeCrashLoop('kafka+postgres', crashEnvironment('postgres', 'kafka'));
