/**
 * Native tails in the samples: the class schemas a project keeps in `Schemas/` and the packages
 * whose exports carry native data after their tagged properties, as real engine classes do.
 * Shared by the committed sample project and the large-project generator, so every test and
 * benchmark cooks content shaped like a real project's.
 */
import { prop, ref, type ExportSpec } from '../src/format/packageBuilder.js';
import { ObjectFlags, type Property } from '../src/format/packageTypes.js';

/** Classes with native tails. */
export const NATIVE_CLASS = {
  /** Has a schema (Engine.json): the root of the gameplay classes' chain. */
  gameplayObject: '/Script/Game.CGameplayObject',
  /** Has a schema (Game.json), super CGameplayObject: an array of SWaypoint structs with references. */
  patrolRoute: '/Script/Game.CPatrolRoute',
  /** Has a schema (Game.json), super CGameplayObject: a reference past an export the cook strips. */
  patrolMarker: '/Script/Game.CPatrolMarker',
  /** No schema: its tail is copied as it is, which works only where the package loses no export. */
  ambientZone: '/Script/Game.CAmbientZone',
  /** Editor-only helper class (stripped by flag), placed before the exports that refer past it. */
  routeDebug: '/Script/Game.CRouteDebugDraw',
} as const;

export const WAYPOINT_STRUCT = '/Script/Game.SWaypoint';

/** `Schemas/*.json`: split over two files, merged by class name as the cook does. */
export const SAMPLE_SCHEMAS: Record<string, unknown> = {
  'Schemas/Engine.json': {
    version: 1,
    classes: {
      [NATIVE_CLASS.gameplayObject]: {
        super: '/Script/Engine.CObject',
        native: [
          { name: 'Owner', type: 'ObjectProperty' },
          { name: 'Bounds', type: 'StructProperty', struct: 'BoxSphereBounds' },
        ],
      },
    },
  },
  'Schemas/Game.json': {
    version: 1,
    classes: {
      [NATIVE_CLASS.patrolRoute]: {
        super: NATIVE_CLASS.gameplayObject,
        native: [
          { name: 'Waypoints', type: 'ArrayProperty', inner: 'StructProperty', innerStruct: WAYPOINT_STRUCT },
          { name: 'Corners', type: 'StructProperty', struct: 'Vector', arrayDim: 4 },
          { name: 'Looping', type: 'BoolProperty' },
          { name: 'Radius', type: 'FloatProperty' },
        ],
      },
      [NATIVE_CLASS.patrolMarker]: {
        super: NATIVE_CLASS.gameplayObject,
        native: [
          { name: 'Next', type: 'ObjectProperty' },
          { name: 'DebugDraw', type: 'ObjectProperty' },
          { name: 'Mode', type: 'EnumProperty' },
        ],
      },
    },
    structs: {
      [WAYPOINT_STRUCT]: {
        fields: [
          { name: 'Target', type: 'ObjectProperty' },
          { name: 'Location', type: 'StructProperty', struct: 'Vector' },
          { name: 'WaitTime', type: 'FloatProperty' },
        ],
      },
    },
  },
};

/** The schema files as the project stores them (stable text: two-space JSON and a newline). */
export function schemaFiles(): Map<string, string> {
  return new Map(Object.entries(SAMPLE_SCHEMAS).map(([file, json]) => [file, `${JSON.stringify(json, null, 2)}\n`]));
}

const bounds = (x: number, y: number, z: number, extent: number): Property => ({
  name: 'Bounds',
  arrayIndex: 0,
  type: 'StructProperty',
  structName: 'BoxSphereBounds',
  value: [x, y, z, extent, extent, extent / 2, extent * 1.5],
});

/** CGameplayObject's native fields (the top of every gameplay class's tail). */
function gameplayTail(owner: number, x: number, y: number, extent: number): Property[] {
  return [prop.object('Owner', owner), bounds(x, y, 0, extent)];
}

export interface Waypoint {
  target: number;
  at: [number, number, number];
  wait: number;
}

/** CPatrolRoute's tail: CGameplayObject's fields, then its own. */
export function patrolRouteTail(owner: number, waypoints: Waypoint[], radius: number): Property[] {
  return [
    ...gameplayTail(owner, 0, 0, radius),
    {
      name: 'Waypoints',
      arrayIndex: 0,
      type: 'ArrayProperty',
      innerType: 'StructProperty',
      innerStructName: WAYPOINT_STRUCT,
      value: waypoints.map((w) => [prop.object('Target', w.target), prop.vector('Location', ...w.at), prop.float('WaitTime', w.wait)]),
    },
    ...[0, 1, 2, 3].map((i) => ({ ...prop.vector('Corners', i & 1 ? radius : -radius, i & 2 ? radius : -radius, 0), arrayIndex: i })),
    prop.bool('Looping', true),
    prop.float('Radius', radius),
  ];
}

/** CPatrolMarker's tail. */
export function patrolMarkerTail(owner: number, next: number, debugDraw: number, x: number, y: number): Property[] {
  return [
    ...gameplayTail(owner, x, y, 50),
    prop.object('Next', next),
    prop.object('DebugDraw', debugDraw),
    { name: 'Mode', arrayIndex: 0, type: 'EnumProperty', enumName: null, value: 'EPatrolMode::Wait' },
  ];
}

/**
 * A patrol route package: 0 the route (asset), 1 an EditorOnly debug-draw helper placed BEFORE
 * the markers whose tails refer past it, then `markers` CPatrolMarker exports chained by `Next`.
 * The cook strips export 1, so every index in the tails after it moves down by one and the
 * markers' DebugDraw references become null: only a schema lets the cook do that.
 */
export function patrolRouteExports(guidOf: (n: number) => string, name: string, markers: number, radius: number): ExportSpec[] {
  const markerIndex = (k: number) => ref.export(2 + k);
  const waypoints: Waypoint[] = Array.from({ length: markers }, (_, k) => ({ target: markerIndex(k), at: [k * 100, (k % 2) * 50, 0], wait: 1 + k * 0.5 }));
  const exports: ExportSpec[] = [
    {
      guid: guidOf(0),
      name,
      className: NATIVE_CLASS.patrolRoute,
      objectFlags: ObjectFlags.Public,
      assetFlags: 0,
      properties: [prop.str('DisplayName', `${name} route`), prop.object('DebugDraw', ref.export(1))],
      native: patrolRouteTail(ref.null, waypoints, radius),
    },
    {
      guid: guidOf(1),
      name: 'RouteDebugDraw',
      className: NATIVE_CLASS.routeDebug,
      objectFlags: ObjectFlags.EditorOnly,
      assetFlags: 0,
      properties: [prop.object('Route', ref.export(0)), prop.bool('DrawLabels', true)],
    },
  ];
  for (let k = 0; k < markers; k++) {
    exports.push({
      guid: guidOf(2 + k),
      name: `Marker_${k}`,
      className: NATIVE_CLASS.patrolMarker,
      objectFlags: ObjectFlags.Public,
      assetFlags: 0,
      properties: [prop.int('Index', k)],
      native: patrolMarkerTail(ref.export(0), markerIndex((k + 1) % markers), ref.export(1), k * 100, 0),
    });
  }
  return exports;
}

/**
 * An ambient zone: a class without a schema whose tail (a radius, a falloff and a reference to
 * its own asset export) is copied byte for byte; its package loses no export, so it cooks.
 */
export function ambientZoneExport(guid: string, name: string, radius: number): ExportSpec {
  const tail = Buffer.alloc(4 + 4 + 8);
  tail.writeFloatLE(radius, 0);
  tail.writeFloatLE(0.25, 4);
  tail.writeBigInt64LE(BigInt(ref.export(0)), 8);
  return { guid, name, className: NATIVE_CLASS.ambientZone, objectFlags: ObjectFlags.Public, assetFlags: 0, properties: [prop.str('Sound', 'Wind_Loop')], tail: new Uint8Array(tail) };
}
