#!/usr/bin/env node
/**
 * The CLI is a thin wrapper over the programmatic API: it parses arguments, runs one command and
 * turns failures into exit codes. Commands throw LuminaError; reportError prints them.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { errors } from '../src/errors.js';
import { initHash } from '../src/util/hash.js';
import { commands } from './commands.js';
import { reportError } from './reportError.js';

export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  await initHash();
  let cli = yargs(argv)
    .scriptName('lumina-cook')
    .usage('$0 <command> [options]')
    .strict()
    .demandCommand(1, 'name a command: lumina-cook <command> (see --help)')
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version()
    .wrap(Math.min(110, process.stdout.columns || 110))
    .fail((msg, err) => {
      if (err) throw err;
      throw errors.usage(msg ?? 'invalid arguments', 'run lumina-cook --help');
    });
  for (const c of commands) cli = cli.command(c);
  try {
    await cli.parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    return reportError(e, { json });
  }
}

// Run when executed directly (node dist/cli/main.js, tsx cli/main.ts), not when imported.
const entry = process.argv[1] ?? '';
if (/[\\/]cli[\\/]main\.(ts|js)$/.test(entry)) {
  main(hideBin(process.argv)).then((code) => {
    process.exitCode = code;
  });
}
