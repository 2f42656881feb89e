#!/usr/bin/env node
// The installed entry point runs the compiled CLI (built by `npm ci` through the prepare script).
import { run } from '../dist/cli/main.js';

await run(process.argv.slice(2));
