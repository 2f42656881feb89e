/**
 * Positional reads that fill the buffer: a single `read` may return fewer bytes than asked even
 * mid-file, so every caller needs this loop. Stops early only at the end of the file; the caller
 * decides what a short read means (a truncated package, a pak that shrank...).
 */
import type { FileHandle } from 'node:fs/promises';

/** Read into `buf` from file offset `position` until it is full or the file ends; returns the bytes read. */
export async function readAt(fh: FileHandle, buf: Uint8Array, position: number): Promise<number> {
  let done = 0;
  while (done < buf.byteLength) {
    const { bytesRead } = await fh.read(buf, done, buf.byteLength - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}
