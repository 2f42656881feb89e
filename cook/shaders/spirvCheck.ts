/**
 * A structural check of a SPIR-V module that did not come from our own compiler run (a remote
 * cache's blob): the header, every instruction's word count landing exactly on the end, and an
 * `OpEntryPoint` of the permutation's stage and name. It runs before spirv-val, so bytes that are
 * not a module at all, are cut short, or are a valid module of another entry point or stage are
 * named plainly and cost no validator process. (Another define set of the same entry point passes
 * this; what binds the bytes to the permutation is the action key, and the SHA-256 of the CAS.)
 */
import { SPIRV_MAGIC, type ShaderStage } from '../../src/format/shaderCache.js';

const OP_ENTRY_POINT = 15;
/** SPIR-V ExecutionModel values for the stages ShaderCache.bin knows. */
const EXECUTION_MODEL: Record<ShaderStage, number> = { vertex: 0, fragment: 4, compute: 5 };

/** Undefined when `code` is a whole SPIR-V module declaring `entry` for `stage`; else what is wrong. */
export function checkSpirvModule(code: Uint8Array, stage: ShaderStage, entry: string): string | undefined {
  if (code.byteLength < 20 || code.byteLength % 4 !== 0) return `${code.byteLength} bytes is not a whole number of SPIR-V words with a header`;
  const view = new DataView(code.buffer, code.byteOffset, code.byteLength);
  const word = (i: number) => view.getUint32(i * 4, true);
  if (word(0) !== SPIRV_MAGIC) return `starts with 0x${word(0).toString(16).padStart(8, '0')}, not the SPIR-V magic number`;
  if (word(4) !== 0) return `header schema word is ${word(4)}, not 0`;
  const words = code.byteLength / 4;
  const models: string[] = [];
  let found = false;
  for (let i = 5; i < words; ) {
    const count = word(i) >>> 16;
    const opcode = word(i) & 0xffff;
    if (count === 0 || i + count > words) return `instruction at word ${i} (opcode ${opcode}) has word count ${count}, past the module's ${words} words`;
    if (opcode === OP_ENTRY_POINT && count >= 4) {
      const bytes = code.subarray((i + 3) * 4, (i + count) * 4);
      const nul = bytes.indexOf(0);
      const name = Buffer.from(bytes.buffer, bytes.byteOffset, nul < 0 ? bytes.byteLength : nul).toString('utf8');
      models.push(`${word(i + 1)}:${name}`);
      if (word(i + 1) === EXECUTION_MODEL[stage] && name === entry) found = true;
    }
    i += count;
  }
  if (!found) return `declares no ${stage} entry point "${entry}" (entry points: ${models.join(', ') || 'none'})`;
  return undefined;
}
