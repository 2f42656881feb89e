/**
 * Child process for the stat tests: opens the registry of the project in argv[2], scans it, and
 * prints one JSON line with the scan's counts and whether the fast lstat was in use (the parent
 * runs it with and without LUMINA_PLAIN_LSTAT=1).
 */
import { loadConfig } from '../../config/index.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { lstatFastPath } from '../../src/util/fastLstat.js';

const { config } = loadConfig(process.argv[2]);
const reg = await AssetRegistry.open({ config });
const r = await reg.scan();
reg.close();
process.stdout.write(`${JSON.stringify({ fast: lstatFastPath(), assets: r.assets, read: r.read, cached: r.cached, rehashed: r.rehashed, problems: r.problems.length })}\n`);
