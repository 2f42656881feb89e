#!/usr/bin/env node
// The installed entry point runs the compiled CLI (built by `npm ci` through the prepare script).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
