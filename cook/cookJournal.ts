/**
 * The cook cache's journal, `Intermediates/CookCache.journal` (cookCache.ts): every change since the
 * snapshot, appended as assets finish. Binary since journal version 1; before it, one JSON line
 * per change, which cookCache.ts still replays once (and then folds into the snapshot).
 *
 * Layout (little-endian):
 *   head:  u32 magic `LCKJ`, u32 journal version (1)
 *   frame: u32 payload length, u64 xxh64 of the payload, payload
 *   payload: ops, each a u8 kind then
 *     1 string: u32 id, u32 length, UTF-8: the cache's string table gets `id` (records name it)
 *     2 set:    one cache record as the arena holds it (cookCacheCodec.ts: u32 length, fields)
 *     3 delete: u32 length, UTF-8 GUID
 *     4 pak:    u32 length, UTF-8 pak name, u8 1 then u32 length + UTF-8 fingerprint, f64 size,
 *               f64 entries (a record), or u8 0 (the record is gone)
 *
 * A set is the record's bytes copied from the arena as `set` wrote them, not an object turned into
 * text: JSON.stringify of each entry was ~40 ms of a cold 20k cook's main thread. A record names
 * shared strings by their table index, so a string new to the table goes before the first record
 * that names it.
 *
 * A frame is whole (its length fits and its checksum matches) or it ends the journal: a kill in
 * the middle of a write leaves a torn tail, which the reader reports and the cache cuts off. A
 * first cook writes one frame per batch of the cook workers' results, everything else one per
 * change.
 */
import { xxh64 } from '../src/util/hash.js';
import { Arena, recordBytes, recordGuid, StringTable } from './cookCacheCodec.js';
import type { PakRecord } from './cookCache.js';

export const JOURNAL_MAGIC = 0x4a4b434c; // 'LCKJ'
export const JOURNAL_VERSION = 1;
export const JOURNAL_HEAD_BYTES = 8;
const FRAME_HEAD = 12;

const OP_STRING = 1;
const OP_SET = 2;
const OP_DELETE = 3;
const OP_PAK = 4;

export type JournalOp =
  | { kind: 'string'; id: number; value: string }
  /** The record is `bytes` long at `at` in the journal's bytes. */
  | { kind: 'set'; guid: string; at: number; bytes: number }
  | { kind: 'delete'; guid: string }
  | { kind: 'pak'; name: string; record: PakRecord | null };

/** The journal's head (magic and version), written before its first frame. */
export function journalHead(): Buffer {
  const b = Buffer.alloc(JOURNAL_HEAD_BYTES);
  b.writeUInt32LE(JOURNAL_MAGIC, 0);
  b.writeUInt32LE(JOURNAL_VERSION, 4);
  return b;
}

/** The ops of one frame, built in place, then sealed (length, checksum) and written as they are. */
export class FrameBuilder {
  private readonly a = new Arena(Buffer.alloc(1 << 14));
  /** Changes (sets, deletes, pak records) in the frame: a string op is not one. */
  changes = 0;
  constructor() {
    this.a.used = FRAME_HEAD;
  }

  get empty(): boolean {
    return this.a.used === FRAME_HEAD;
  }

  string(id: number, value: string): void {
    this.a.reserve(9 + 3 * value.length);
    const b = this.a.buf;
    let at = this.a.used;
    b[at] = OP_STRING;
    b.writeUInt32LE(id, at + 1);
    const n = b.write(value, at + 9, 'utf8');
    b.writeUInt32LE(n, at + 5);
    this.a.used = at + 9 + n;
  }

  /** The record at `offset` of `from` (an arena's buffer), copied. */
  set(from: Buffer, offset: number): void {
    const n = recordBytes(from, offset);
    this.a.reserve(1 + n);
    this.a.buf[this.a.used] = OP_SET;
    from.copy(this.a.buf, this.a.used + 1, offset, offset + n);
    this.a.used += 1 + n;
    this.changes++;
  }

  delete(guid: string): void {
    this.a.reserve(1);
    this.a.buf[this.a.used++] = OP_DELETE;
    this.text(guid);
    this.changes++;
  }

  pak(name: string, record: PakRecord | null): void {
    this.a.reserve(1);
    this.a.buf[this.a.used++] = OP_PAK;
    this.text(name);
    this.a.reserve(1);
    this.a.buf[this.a.used++] = record ? 1 : 0;
    if (record) {
      this.text(record.fingerprint);
      this.a.reserve(16);
      this.a.buf.writeDoubleLE(record.size, this.a.used);
      this.a.buf.writeDoubleLE(record.entries, this.a.used + 8);
      this.a.used += 16;
    }
    this.changes++;
  }

  private text(s: string): void {
    this.a.reserve(4 + 3 * s.length);
    const n = this.a.buf.write(s, this.a.used + 4, 'utf8');
    this.a.buf.writeUInt32LE(n, this.a.used);
    this.a.used += 4 + n;
  }

  /** The frame as it goes to the file (a view of the builder's buffer: write it before the next op). */
  seal(): Buffer {
    const b = this.a.buf;
    const end = this.a.used;
    b.writeUInt32LE(end - FRAME_HEAD, 0);
    b.writeBigUInt64LE(xxh64(b.subarray(FRAME_HEAD, end)), 4);
    return b.subarray(0, end);
  }

  /** Start the next frame. */
  reset(): void {
    this.a.used = FRAME_HEAD;
    this.changes = 0;
  }
}

export interface JournalRead {
  /** The journal is not in this form at all (a JSON journal of the versions before). */
  legacy: boolean;
  /** Each whole frame: where it starts and its ops. */
  frames: { at: number; ops: JournalOp[] }[];
  /** Bytes of the head and whole frames: where the next append belongs. */
  goodBytes: number;
  /** Why the bytes after `goodBytes` were ignored (a torn or damaged tail), when there are any. */
  tail?: string;
}

/** Parse a journal's bytes: every whole frame up to the first that does not check out. Never throws. */
export function readCookJournal(bytes: Buffer): JournalRead {
  const frames: JournalRead['frames'] = [];
  if (bytes.byteLength === 0) return { legacy: false, frames, goodBytes: 0 };
  // A JSON journal starts with the '{' of its first line.
  if (bytes[0] === 0x7b) return { legacy: true, frames, goodBytes: 0 };
  const tail = (at: number, why: string): JournalRead => ({ legacy: false, frames, goodBytes: at, tail: `${why} at offset ${at}; ignored the last ${bytes.byteLength - at} bytes` });
  if (bytes.byteLength < JOURNAL_HEAD_BYTES) return tail(0, 'a head cut short');
  if (bytes.readUInt32LE(0) !== JOURNAL_MAGIC) return tail(0, 'not a cook cache journal (bad magic)');
  const version = bytes.readUInt32LE(4);
  if (version !== JOURNAL_VERSION) return tail(0, `journal version ${version} is not ${JOURNAL_VERSION}`);
  let at = JOURNAL_HEAD_BYTES;
  while (at < bytes.byteLength) {
    if (bytes.byteLength - at < FRAME_HEAD) return tail(at, 'a frame cut short');
    const end = at + FRAME_HEAD + bytes.readUInt32LE(at);
    if (end > bytes.byteLength) return tail(at, 'a frame cut short');
    if (xxh64(bytes.subarray(at + FRAME_HEAD, end)) !== bytes.readBigUInt64LE(at + 4)) return tail(at, 'a frame whose checksum does not match');
    const ops = readOps(bytes, at + FRAME_HEAD, end);
    if (!ops) return tail(at, 'a frame with a malformed op');
    frames.push({ at, ops });
    at = end;
  }
  return { legacy: false, frames, goodBytes: at };
}

/** The ops of a frame's payload, or undefined when one does not fit it. */
function readOps(b: Buffer, from: number, end: number): JournalOp[] | undefined {
  const ops: JournalOp[] = [];
  let at = from;
  const text = (): string | undefined => {
    if (at + 4 > end) return undefined;
    const n = b.readUInt32LE(at);
    if (at + 4 + n > end) return undefined;
    at += 4 + n;
    return b.toString('utf8', at - n, at);
  };
  // A record's guid is never a table string: a table of its own is enough to read it.
  const none = new StringTable();
  while (at < end) {
    const kind = b[at++];
    if (kind === OP_STRING) {
      if (at + 4 > end) return undefined;
      const id = b.readUInt32LE(at);
      at += 4;
      const value = text();
      if (value === undefined) return undefined;
      ops.push({ kind: 'string', id, value });
    } else if (kind === OP_SET) {
      if (at + 4 > end) return undefined;
      const n = recordBytes(b, at);
      if (at + n > end) return undefined;
      let guid: string;
      try {
        guid = recordGuid(b.subarray(0, at + n), none, at).guid;
      } catch {
        return undefined;
      }
      ops.push({ kind: 'set', guid, at, bytes: n });
      at += n;
    } else if (kind === OP_DELETE) {
      const guid = text();
      if (guid === undefined) return undefined;
      ops.push({ kind: 'delete', guid });
    } else if (kind === OP_PAK) {
      const name = text();
      if (name === undefined || at >= end) return undefined;
      if (b[at++] === 0) {
        ops.push({ kind: 'pak', name, record: null });
        continue;
      }
      const fingerprint = text();
      if (fingerprint === undefined || at + 16 > end) return undefined;
      ops.push({ kind: 'pak', name, record: { fingerprint, size: b.readDoubleLE(at), entries: b.readDoubleLE(at + 8) } });
      at += 16;
    } else return undefined;
  }
  return ops;
}
