/**
 * Child process for the stat tests: opens the registry of the project in argv[2], scans it, and
 * prints one JSON line with the scan's counts and whether the fast lstat was in use (the parent
 * runs it with and without LUMINA_PLAIN_LSTAT=1 / LUMINA_PLAIN_READDIR=1), plus a digest of every
 * record, so two children can be compared whole.
 */
import { createHash } from 'node:crypto';
import { loadConfig } from '../../config/index.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { lstatFastPath } from '../../src/util/fastLstat.js';
import { readdirFastPath } from '../../src/util/fastReaddir.js';

const { config } = loadConfig(process.argv[2]);
const reg = await AssetRegistry.open({ config });
const r = await reg.scan();
const digest = createHash('sha1').update(JSON.stringify(reg.all())).digest('hex');
reg.close();
process.stdout.write(`${JSON.stringify({ fast: lstatFastPath(), fastReaddir: readdirFastPath(), digest, assets: r.assets, read: r.read, cached: r.cached, rehashed: r.rehashed, problems: r.problems.length })}\n`);
