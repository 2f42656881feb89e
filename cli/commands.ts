/**
 * Every CLI command, in the order `--help` lists them. Each subsystem owns its command module.
 *
 * Modules are loaded on demand: a command's module pulls in its whole subsystem (the cooker, the
 * pak writer, sharp, the daemon...), and loading all of them cost ~250 ms of CPU before
 * `registry scan` could start. `loadCommands(name)` loads only the module that defines `name`; an
 * unknown or missing name (top-level `--help`, a typo that wants "did you mean") loads them all.
 */
import type { CommandModule } from 'yargs';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyCommand = CommandModule<any, any>;

/** Command name -> its module's commands (the order here is the `--help` order). */
const modules: Array<[names: string[], load: () => Promise<AnyCommand[]>]> = [
  [['cook', 'patch'], async () => { const m = await import('./commands/cook.js'); return [m.cookCommand, m.patchCommand]; }],
  [['watch', 'daemon'], async () => { const m = await import('./commands/watch.js'); return [m.watchCommand, m.daemonCommand]; }],
  [['pak'], async () => [(await import('./commands/pak.js')).pakCommand]],
  [['registry'], async () => [(await import('./commands/registry.js')).registryCommand]],
  [['inspect'], async () => [(await import('./commands/inspect.js')).inspectCommand]],
  [['shaders'], async () => [(await import('./commands/shaders.js')).shadersCommand]],
  [['samples'], async () => [(await import('./commands/samples.js')).samplesCommand]],
];

/** Every command name, without loading any module. */
export const commandNames: readonly string[] = modules.flatMap(([names]) => names);

/** The commands to register: the module defining `name`, or every module when `name` is not a command. */
export async function loadCommands(name?: string): Promise<AnyCommand[]> {
  const one = name === undefined ? undefined : modules.find(([names]) => names.includes(name));
  const picked = one ? [one] : modules;
  return (await Promise.all(picked.map(([, load]) => load()))).flat();
}
