/**
 * The action-cache value of the Bazel HTTP remote cache: an REAPI v2 `ActionResult`
 * (build/bazel/remote/execution/v2/remote_execution.proto). Only the messages a cook result needs
 * are declared, with REAPI's own field numbers, so bazel-remote's AC validation (it unmarshals the
 * value as an ActionResult and checks that every output file's digest is in its CAS) accepts it and
 * any REAPI tool can read it. protobufjs does the wire format; fields we do not declare (bazel-remote
 * adds `execution_metadata.worker`) are skipped on decode.
 *
 * One asset's cook result is one OutputFile (the LCKD bytes in the CAS, by SHA-256 and size); the
 * cook's statistics ride along as NodeProperties of that file, the REAPI place for per-file metadata.
 */
import { createRequire } from 'node:module';
import type protobufjs from 'protobufjs';

// Field numbers as in REAPI v2; reserved and unused fields are left out.
const PROTO = `
syntax = "proto3";
package build.bazel.remote.execution.v2;
message Digest { string hash = 1; int64 size_bytes = 2; }
message NodeProperty { string name = 1; string value = 2; }
message NodeProperties { repeated NodeProperty properties = 1; }
message OutputFile {
  string path = 1;
  Digest digest = 2;
  bool is_executable = 4;
  bytes contents = 5;
  NodeProperties node_properties = 7;
}
message ExecutedActionMetadata { string worker = 1; }
message ActionResult {
  repeated OutputFile output_files = 2;
  int32 exit_code = 4;
  ExecutedActionMetadata execution_metadata = 9;
}
`;

let actionResult: protobufjs.Type | undefined;
/** The ActionResult message type, parsed on first use: protobufjs and the parse cost every cook without a remote cache ~20 ms of start-up. */
function actionResultType(): protobufjs.Type {
  if (!actionResult) {
    const protobuf = createRequire(import.meta.url)('protobufjs') as typeof protobufjs;
    actionResult = protobuf.parse(PROTO, { keepCase: false }).root.lookupType('build.bazel.remote.execution.v2.ActionResult');
  }
  return actionResult;
}

/** One output of a cook as the action cache records it. */
export interface ActionOutput {
  path: string;
  /** Lowercase hex SHA-256 of the bytes (their CAS key). */
  hash: string;
  size: number;
  properties: Record<string, string>;
}

export interface DecodedActionResult {
  exitCode: number;
  outputs: ActionOutput[];
  /** Who wrote it, when the server or writer says (bazel-remote fills in the client address). */
  worker?: string;
}

/** Encode a cook result as a binary ActionResult. */
export function encodeActionResult(outputs: readonly ActionOutput[], worker?: string): Uint8Array {
  const msg = actionResultType().fromObject({
    outputFiles: outputs.map((o) => ({
      path: o.path,
      digest: { hash: o.hash, sizeBytes: o.size },
      nodeProperties: {
        properties: Object.keys(o.properties)
          .sort()
          .map((name) => ({ name, value: o.properties[name] })),
      },
    })),
    exitCode: 0,
    ...(worker ? { executionMetadata: { worker } } : {}),
  });
  return actionResultType().encode(msg).finish();
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Decode an ActionResult in its binary form, or its JSON form (what bazel-remote serves and takes
 * as `application/json`). Throws an Error saying what is wrong for anything that is not a
 * well-formed result: the caller treats that like any other bad answer from the server.
 */
export function decodeActionResult(bytes: Uint8Array): DecodedActionResult {
  let obj: Record<string, any>;
  // A binary ActionResult never starts with '{' (that would be field 15, wire type 3, a group).
  if (bytes.byteLength > 0 && bytes[0] === 0x7b) {
    const json = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    obj = actionResultType().toObject(actionResultType().fromObject(json), { longs: String, defaults: true });
  } else {
    obj = actionResultType().toObject(actionResultType().decode(bytes), { longs: String, defaults: true });
  }
  const outputs: ActionOutput[] = [];
  for (const f of (obj.outputFiles ?? []) as Array<Record<string, any>>) {
    const hash = f.digest?.hash;
    const sizeText = f.digest?.sizeBytes;
    if (typeof hash !== 'string' || !SHA256_HEX.test(hash)) throw new Error(`output "${f.path}" has no SHA-256 digest`);
    const size = Number(sizeText);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`output "${f.path}" has size ${sizeText}`);
    const properties: Record<string, string> = {};
    for (const p of (f.nodeProperties?.properties ?? []) as Array<{ name: string; value: string }>) properties[p.name] = p.value;
    outputs.push({ path: String(f.path ?? ''), hash, size, properties });
  }
  const worker = obj.executionMetadata?.worker;
  return { exitCode: Number(obj.exitCode ?? 0), outputs, ...(worker ? { worker: String(worker) } : {}) };
}
