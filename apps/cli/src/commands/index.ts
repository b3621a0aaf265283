/**
 * The command groups, one file each. To add a group, write its file exporting a CommandGroup and list it here.
 */
import type { CommandGroup } from '../command.js';
import { adminCommands } from './admin.js';
import { consoleCommands } from './console.js';
import { devCommands } from './dev.js';
import { dlqCommands } from './dlq.js';
import { fleetCommands } from './fleet.js';
import { promisesCommands } from './promises.js';
import { replayCheckCommands } from './replay-check.js';
import { runsCommands } from './runs.js';
import { schedulesCommands } from './schedules.js';
import { versionsCommands } from './versions.js';

export const COMMAND_GROUPS: readonly CommandGroup[] = [
  runsCommands,
  dlqCommands,
  fleetCommands,
  schedulesCommands,
  promisesCommands,
  versionsCommands,
  replayCheckCommands,
  consoleCommands,
  devCommands,
  adminCommands,
];
