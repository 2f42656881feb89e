/** What every command module shares: its output shape, how it prints, and how a group is declared. */
import type { CommandModule } from 'yargs';

/** What a command produced: `data` for --json, `text` (ending in a newline) for people. */
export interface CommandOutput<T> {
  data: T;
  text: string;
}

/** Print a command's output: pretty JSON with --json, else its text. */
export function printOutput<T>(out: CommandOutput<T>, json: boolean | undefined): void {
  process.stdout.write(json ? `${JSON.stringify(out.data, null, 2)}\n` : out.text);
}

/** Human-readable byte counts for summary lines. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** `<name> <command>` with subcommands: register with `yargs.command(group)`. */
export function commandGroup(name: string, describe: string, subcommands: readonly unknown[]): CommandModule {
  return {
    command: `${name} <command>`,
    describe,
    builder: (y) => {
      for (const c of subcommands) y = y.command(c as CommandModule);
      return y.demandCommand(1);
    },
    handler: () => {},
  };
}
