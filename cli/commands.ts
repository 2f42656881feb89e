/** Every CLI command, in the order `--help` lists them. Each subsystem owns its command module. */
import type { CommandModule } from 'yargs';
import { inspectCommand } from './commands/inspect.js';
import { cookCommand, patchCommand } from './commands/cook.js';
import { pakCommand } from './commands/pak.js';
import { registryCommand } from './commands/registry.js';
import { samplesCommand } from './commands/samples.js';
import { shadersCommand } from './commands/shaders.js';
import { daemonCommand, watchCommand } from './commands/watch.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const commands: CommandModule<any, any>[] = [cookCommand, patchCommand, watchCommand, daemonCommand, pakCommand, registryCommand, inspectCommand, shadersCommand, samplesCommand];
