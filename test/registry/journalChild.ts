/**
 * Child process for the kill -9 test of the registry cache journal: opens the registry of the
 * project in argv[2], then forever adds one package per round (or edits/deletes an earlier one) and
 * hands it to `updateFiles`, printing `done <file> <op>` once the call (and its journal frame) has
 * returned. The parent kills it at random moments and checks the cache on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../config/index.js';
import { buildPackage } from '../../src/format/packageBuilder.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';

const [projectDir, startArg] = process.argv.slice(2);
const { config } = loadConfig(projectDir);
const reg = await AssetRegistry.open({ config });
await reg.scan();
let n = Number(startArg);
const guid = (i: number) => `c${i.toString(16).padStart(31, '0')}`;
const write = (i: number, pad: number) => {
  const file = path.join(config.projectDir, 'Content', `Set${i % 7}`, `K${i}.lasset`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Padding exports make some frames large enough that a kill can land inside their write.
  const exports = [{ guid: guid(i), name: `K${i}`, className: '/Script/Engine.CStaticMesh', assetFlags: 0 }];
  for (let k = 0; k < pad; k++) exports.push({ guid: guid(1_000_000 + i * 100 + k), name: `K${i}_Pad${k}`, className: '/Script/Engine.CMaterial', assetFlags: 0 });
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, buildPackage({ imports: [], exports }));
  fs.renameSync(tmp, file);
  return file;
};
process.stdout.write('ready\n');
for (;;) {
  const i = n++;
  // Mostly new files, in batches of 1-40; now and then delete one.
  const files: string[] = [];
  const size = 1 + (i % 40);
  for (let k = 0; k < size; k++) files.push(write(i * 40 + k, k % 3));
  if (i % 5 === 4) {
    const gone = path.join(config.projectDir, 'Content', `Set${((i - 1) * 40) % 7}`, `K${(i - 1) * 40}.lasset`);
    fs.rmSync(gone, { force: true });
    files.push(gone);
  }
  await reg.updateFiles(files);
  process.stdout.write(`done ${i}\n`);
}
