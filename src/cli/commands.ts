/** Every CLI command, in the order `--help` lists them. Each subsystem owns its command module. */
import type { CommandModule } from 'yargs';
import { inspectCommand } from './commands/inspect.js';
import { cookCommand, patchCommand } from '../../cook/cookCommands.js';
import { pakCommand } from '../../pak/pakCommands.js';
import { registryCommand } from '../registry/registryCommands.js';
import { samplesCommand } from '../../samples/generate/samplesCommand.js';
import { daemonCommand, watchCommand } from '../../watch/watchCommand.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const commands: CommandModule<any, any>[] = [cookCommand, patchCommand, watchCommand, daemonCommand, pakCommand, registryCommand, inspectCommand, samplesCommand];
