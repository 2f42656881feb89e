/**
 * Reading a project's schemas folder (config key `schemas`, default `Schemas/`): every `*.json`
 * under it, in sorted path order so the merge and its errors do not depend on the filesystem.
 * A missing folder is no schemas, not an error: most projects start without one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../errors.js';
import { ClassSchemas, parseSchemaFile } from './classSchemas.js';

/** The `*.json` files under `dir`, sorted; [] when the folder does not exist. */
export function listSchemaFiles(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    throw errors.ioFailed(dir, 'read', e);
  }
  return names
    .filter((n) => n.toLowerCase().endsWith('.json'))
    .map((n) => path.join(dir, n))
    .filter((f) => fs.statSync(f, { throwIfNoEntry: false })?.isFile())
    .sort();
}

/** Load, validate and merge every schema file under `dir`. Throws SCHEMA_INVALID naming the file and JSON path. */
export function loadSchemas(dir: string): ClassSchemas {
  const files = listSchemaFiles(dir);
  if (files.length === 0) return ClassSchemas.empty;
  return ClassSchemas.merge(
    files.map((file) => {
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (e) {
        throw errors.ioFailed(file, 'read', e);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (e) {
        throw errors.schemaInvalid(file, '$', `not valid JSON: ${(e as Error).message}`);
      }
      return parseSchemaFile(json, file);
    }),
  );
}
