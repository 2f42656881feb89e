/**
 * Package bytes for each planned asset kind. Every package has its asset export first (named after
 * the file stem), sub-objects that reference each other and the imports, and now and then an
 * editor-only or transient export that the cook must strip (and null every reference to).
 */
import { buildPackage, hard, prop, ref, soft, type ExportSpec } from '../../src/format/packageBuilder.js';
import { NATIVE_CLASS, patrolMarkerTail, patrolRouteTail } from '../nativeSamples.js';
import { AssetFlags, NULL_GUID, ObjectFlags, type ImportEntry, type Property, type Thumbnail } from '../../src/format/packageTypes.js';
import { encodePng, type PngImage } from './png.js';
import { greyMask, leafCutout, noiseAlbedo, normalMap, paletteChecker, planksAlbedo, thumbnailGradient, uiButton } from './images.js';
import { Random } from './random.js';
import type { PlannedAsset, ProjectPlan, TextureRole } from './planProject.js';
import { GENERATED_MATERIAL_DEFINES, SAMPLE_LIT_SHADER } from '../sampleShaders.js';

export const CLASS = {
  world: '/Script/Engine.CWorld',
  level: '/Script/Engine.CLevel',
  worldSettings: '/Script/Engine.CWorldSettings',
  staticMeshActor: '/Script/Engine.CStaticMeshActor',
  ambientSound: '/Script/Engine.CAmbientSound',
  staticMesh: '/Script/Engine.CStaticMesh',
  bodySetup: '/Script/Engine.CBodySetup',
  blueprint: '/Script/Engine.CBlueprint',
  generatedClass: '/Script/Engine.CBlueprintGeneratedClass',
  staticMeshComponent: '/Script/Engine.CStaticMeshComponent',
  audioComponent: '/Script/Engine.CAudioComponent',
  childActorComponent: '/Script/Engine.CChildActorComponent',
  material: '/Script/Engine.CMaterial',
  materialInstance: '/Script/Engine.CMaterialInstanceConstant',
  textureSample: '/Script/Engine.CMaterialExpressionTextureSample',
  materialEditorData: '/Script/Engine.CMaterialEditorOnlyData',
  texture: '/Script/Engine.CTexture',
  soundWave: '/Script/Engine.CSoundWave',
  dataTable: '/Script/Engine.CDataTable',
  navigationCache: '/Script/Engine.CNavigationCache',
  // Classes under /Script/Editor. are editor-only by the default cook.editorOnlyClassPrefixes.
  editorBillboard: '/Script/Editor.CEditorBillboard',
  assetImportData: '/Script/Editor.CAssetImportData',
  edGraph: '/Script/Editor.CEdGraph',
} as const;

/** Shared state for one generation run: caches PNG sources so 40k textures encode ~30 images. */
export class PackageContext {
  private readonly pngs = new Map<string, Uint8Array>();

  constructor(
    readonly plan: ProjectPlan,
    readonly seed: number,
    readonly textureSize: number,
  ) {}

  /**
   * What `asset` references, by index (sparse: only its hard and soft targets), so a package is
   * built without every planned asset in memory.
   */
  dependencies(asset: PlannedAsset): PlannedAsset[] {
    const out: PlannedAsset[] = [];
    for (const i of asset.hard) out[i] = this.plan.asset(i);
    for (const i of asset.soft) out[i] ??= this.plan.asset(i);
    return out;
  }

  /** The per-asset random stream: independent of the order packages are built in. */
  random(asset: PlannedAsset): Random {
    return new Random((this.seed ^ Math.imul(asset.index + 1, 0x9e3779b1)) >>> 0);
  }

  /** One of a few PNG variants per texture role, encoded once and reused. */
  png(role: TextureRole, variant: number): Uint8Array {
    const key = `${role}:${variant}`;
    let bytes = this.pngs.get(key);
    if (!bytes) {
      bytes = encodePng(drawTexture(role, variant, this.textureSize, new Random((this.seed ^ (variant * 7919 + role.length * 104729)) >>> 0)));
      this.pngs.set(key, bytes);
    }
    return bytes;
  }
}

export const PNG_VARIANTS = 6;

const ALBEDO_TINTS: Array<[readonly [number, number, number], readonly [number, number, number]]> = [
  [[70, 66, 60], [150, 144, 132]],
  [[60, 40, 24], [130, 96, 60]],
  [[40, 70, 30], [110, 150, 70]],
  [[80, 80, 90], [170, 170, 185]],
  [[110, 60, 40], [200, 130, 90]],
];

function drawTexture(role: TextureRole, variant: number, size: number, rnd: Random): PngImage {
  switch (role) {
    case 'D':
      if (variant === PNG_VARIANTS - 1) return leafCutout(size, rnd);
      if (variant === PNG_VARIANTS - 2) return planksAlbedo(size, rnd, Math.max(1, Math.min(4, size / 4)));
      return noiseAlbedo(size, rnd, ...ALBEDO_TINTS[variant % ALBEDO_TINTS.length]);
    case 'N':
      return normalMap(size, rnd, 1 + variant);
    case 'M':
      return greyMask(size, rnd, 2 + variant);
    case 'UI':
      if (variant === 0) return paletteChecker(size, [[20, 24, 32], [220, 180, 60], [90, 140, 220], [240, 240, 240]], Math.max(1, size / 8));
      return uiButton(size, Math.max(1, size >> 1), [60 + variant * 20, 90, 160], [20, 30 + variant * 10, 70]);
  }
}

/** Exports under construction; `add` returns the export's index for `ref.export`. */
class Exports {
  readonly list: ExportSpec[] = [];
  constructor(private readonly rnd: Random) {}
  add(name: string, className: string, properties: Property[] = [], objectFlags = 0, assetFlags = 0): number {
    this.list.push({ guid: this.rnd.guid(), name, className, objectFlags, assetFlags, properties });
    return this.list.length - 1;
  }
}

/** Build the `.lasset` bytes of a planned package asset (every kind but `text`). */
export function buildAssetPackage(asset: PlannedAsset, ctx: PackageContext): Uint8Array {
  const rnd = ctx.random(asset);
  const assets = ctx.dependencies(asset);
  const imports: ImportEntry[] = [...asset.hard.map((i) => hard(assets[i].guid)), ...asset.soft.map((i) => soft(assets[i].guid))];
  const ex = new Exports(rnd);
  // The asset export comes first and carries the asset's GUID; its properties are filled in below.
  ex.list.push({ guid: asset.guid, name: asset.name, className: '', objectFlags: ObjectFlags.Public, properties: [] });
  const root = ex.list[0];
  let thumbnail: Thumbnail | null = null;

  switch (asset.kind) {
    case 'map': {
      root.className = CLASS.world;
      root.assetFlags = asset.primary ? AssetFlags.Primary : 0;
      const level = ex.add('PersistentLevel', CLASS.level);
      const settings = ex.add('WorldSettings', CLASS.worldSettings, [
        prop.double('KillZ', -rnd.int(500, 5000)),
        prop.vector('DefaultGravity', 0, 0, -980),
        { name: 'AmbientColor', arrayIndex: 0, type: 'StructProperty', structName: 'LinearColor', value: [rnd.next(), rnd.next(), rnd.next(), 1] },
        prop.name('DefaultGameMode', '/Script/Game.CGameMode'),
      ]);
      const actors: number[] = [];
      asset.hard.forEach((dep, k) => {
        const a = assets[dep];
        if (a.kind === 'sound') actors.push(ex.add(`AmbientSound_${k}`, CLASS.ambientSound, [prop.object('Sound', ref.import(k)), transform(rnd)]));
        else actors.push(ex.add(`StaticMeshActor_${k}`, CLASS.staticMeshActor, [prop.object('StaticMesh', ref.import(k)), transform(rnd)]));
      });
      const levelProps: Property[] = [prop.objects('Actors', actors.map(ref.export)), prop.object('WorldSettings', ref.export(settings))];
      if (rnd.chance(0.5)) {
        const b = ex.add('EditorBillboard', CLASS.editorBillboard, [prop.str('Sprite', 'S_LevelIcon'), prop.object('Owner', ref.export(level))]);
        levelProps.push(prop.object('EditorBillboard', ref.export(b)));
      }
      if (rnd.chance(0.3)) {
        const n = ex.add('NavigationCache', CLASS.navigationCache, [prop.int('TileCount', rnd.int(1, 400))], ObjectFlags.Transient);
        levelProps.push(prop.object('NavigationCache', ref.export(n)));
      }
      if (rnd.chance(0.5)) {
        // A patrol route with native tails (Schemas/): an EditorOnly debug export comes first, so
        // the cook must renumber every reference in the tails after it and null those to it.
        const debug = ex.add('RouteDebugDraw', NATIVE_CLASS.routeDebug, [prop.bool('DrawLabels', true)], ObjectFlags.EditorOnly);
        const markers = rnd.int(2, 4);
        const route = ex.add('PatrolRoute', NATIVE_CLASS.patrolRoute, [prop.object('DebugDraw', ref.export(debug))]);
        const marker = (k: number) => ref.export(route + 1 + k);
        const at = (k: number): [number, number, number] => [k * 100, rnd.int(-500, 500), 0];
        ex.list[route].native = patrolRouteTail(ref.export(level), Array.from({ length: markers }, (_, k) => ({ target: marker(k), at: at(k), wait: k / 2 })), rnd.int(100, 2000));
        for (let k = 0; k < markers; k++) {
          const m = ex.add(`PatrolMarker_${k}`, NATIVE_CLASS.patrolMarker, [prop.int('Index', k)]);
          ex.list[m].native = patrolMarkerTail(ref.export(route), marker((k + 1) % markers), ref.export(debug), k * 100, 0);
        }
        levelProps.push(prop.object('PatrolRoute', ref.export(route)));
      }
      ex.list[level].properties = levelProps;
      const streaming = asset.soft.map((s) => assets[s].guid);
      root.properties = [
        prop.object('PersistentLevel', ref.export(level)),
        { name: 'StreamingLevels', arrayIndex: 0, type: 'ArrayProperty', innerType: 'SoftObjectProperty', value: streaming },
        prop.bool('IsStreamedSubLevel', asset.streamed === true),
      ];
      thumbnail = thumbnailGradient(16, [40, 90, 160], [200, 220, 140]);
      break;
    }
    case 'mesh': {
      root.className = CLASS.staticMesh;
      const body = ex.add('BodySetup', CLASS.bodySetup, [
        prop.enum('CollisionTraceFlag', 'ECollisionTraceFlag', rnd.chance(0.5) ? 'ECollisionTraceFlag::UseDefault' : 'ECollisionTraceFlag::UseSimpleAsComplex'),
        prop.float('Mass', rnd.int(1, 500)),
      ]);
      const extent = rnd.int(10, 800);
      root.properties = [
        prop.objects('Materials', asset.hard.map((_, k) => ref.import(k))),
        prop.object('BodySetup', ref.export(body)),
        prop.int('LODCount', rnd.int(1, 4)),
        prop.int('VertexCount', rnd.int(24, 60000)),
        // BoxSphereBounds is a built-in struct: origin, box extent, sphere radius, positionally.
        prop.builtin('Bounds', 'BoxSphereBounds', [0, 0, extent / 2, extent, extent, extent / 2, extent * 1.5]),
        prop.bytes('RenderData', randomBytes(rnd, rnd.int(32, 384))),
      ];
      if (rnd.chance(0.3)) {
        const imp = ex.add('AssetImportData', CLASS.assetImportData, [prop.str('SourceFile', `D:/Art/Meshes/${asset.name}.fbx`)]);
        root.properties.push(prop.object('AssetImportData', ref.export(imp)));
      }
      if (rnd.chance(0.2)) thumbnail = thumbnailGradient(16, [120, 120, 120], [230, 230, 230]);
      break;
    }
    case 'blueprint': {
      root.className = CLASS.blueprint;
      const cls = ex.add(`${asset.name}_C`, CLASS.generatedClass);
      const components = asset.hard.map((dep, k) => {
        const a = assets[dep];
        if (a.kind === 'sound') return ex.add(`AudioComponent_${k}`, CLASS.audioComponent, [prop.object('Sound', ref.import(k)), prop.float('VolumeMultiplier', 1)]);
        if (a.kind === 'blueprint') return ex.add(`ChildActorComponent_${k}`, CLASS.childActorComponent, [prop.object('ChildActorClass', ref.import(k))]);
        return ex.add(`StaticMeshComponent_${k}`, CLASS.staticMeshComponent, [prop.object('StaticMesh', ref.import(k)), transform(rnd)]);
      });
      ex.list[cls].properties = [prop.objects('Components', components.map(ref.export)), prop.object('ClassGeneratedBy', ref.export(0))];
      // Blueprint graphs exist only in the editor.
      const graph = ex.add('EventGraph', CLASS.edGraph, [prop.int('NodeCount', rnd.int(1, 80))]);
      root.properties = [
        prop.object('GeneratedClass', ref.export(cls)),
        prop.name('ParentClass', '/Script/Engine.CActor'),
        prop.objects('UbergraphPages', [ref.export(graph)]),
      ];
      break;
    }
    case 'material': {
      root.className = CLASS.material;
      const samples = asset.hard.map((_, k) =>
        ex.add(`TextureSample_${k}`, CLASS.textureSample, [
          prop.object('Texture', ref.import(k)),
          prop.enum('SamplerType', 'EMaterialSamplerType', assets[asset.hard[k]].textureRole === 'N' ? 'EMaterialSamplerType::Normal' : 'EMaterialSamplerType::Color'),
        ]),
      );
      root.properties = [
        prop.objects('Expressions', samples.map(ref.export)),
        prop.enum('BlendMode', 'EBlendMode', rnd.chance(0.8) ? 'EBlendMode::Opaque' : 'EBlendMode::Masked'),
        prop.bool('TwoSided', rnd.chance(0.2)),
        { name: 'BaseColorTint', arrayIndex: 0, type: 'StructProperty', structName: 'LinearColor', value: [rnd.next(), rnd.next(), rnd.next(), 1] },
        textureParameters(asset, assets),
        prop.str('ShaderSource', SAMPLE_LIT_SHADER),
      ];
      // Defines by index, not by a random draw, so every other byte of the project stays as it was.
      const defines = GENERATED_MATERIAL_DEFINES[asset.index % GENERATED_MATERIAL_DEFINES.length];
      if (defines.length) root.properties.push({ name: 'ShaderDefines', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StrProperty', value: [...defines] });
      if (rnd.chance(0.25)) {
        const ed = ex.add('MaterialEditorData', CLASS.materialEditorData, [prop.objects('ExpressionCollection', samples.map(ref.export))], ObjectFlags.EditorOnly);
        root.properties.push(prop.object('EditorOnlyData', ref.export(ed)));
      }
      if (rnd.chance(0.2)) thumbnail = thumbnailGradient(16, [90, 60, 40], [240, 200, 150]);
      break;
    }
    case 'materialInstance': {
      root.className = CLASS.materialInstance;
      root.properties = [
        prop.object('Parent', ref.import(0)),
        {
          name: 'ScalarParameterValues',
          arrayIndex: 0,
          type: 'ArrayProperty',
          innerType: 'StructProperty',
          innerStructName: 'ScalarParameterValue',
          value: [
            [prop.name('ParameterName', 'Roughness'), prop.float('ParameterValue', Math.round(rnd.next() * 100) / 100)],
            [prop.name('ParameterName', 'Metallic'), prop.float('ParameterValue', rnd.chance(0.3) ? 1 : 0)],
          ],
        },
        textureParameters({ ...asset, hard: asset.hard.slice(1) }, assets, 1),
      ];
      break;
    }
    case 'texture': {
      root.className = CLASS.texture;
      const role = asset.textureRole ?? 'D';
      const compression = { D: 'Default', N: 'Normalmap', M: 'Masks', UI: 'UserInterface' }[role];
      root.properties = [
        prop.bytes('SourceData', ctx.png(role, rnd.int(0, PNG_VARIANTS - 1))),
        prop.bool('SRGB', role === 'D' || role === 'UI'),
        prop.enum('Compression', 'ETextureCompression', `ETextureCompression::${compression}`),
        prop.bool('GenerateMips', role !== 'UI'),
        prop.name('LODGroup', role === 'UI' ? 'TEXTUREGROUP_UI' : role === 'N' ? 'TEXTUREGROUP_WorldNormalMap' : 'TEXTUREGROUP_World'),
        prop.enum('AddressX', 'ETextureAddress', 'ETextureAddress::Wrap'),
      ];
      if (rnd.chance(0.1)) {
        const imp = ex.add('AssetImportData', CLASS.assetImportData, [prop.str('SourceFile', `D:/Art/Textures/${asset.name}.png`)]);
        root.properties.push(prop.object('AssetImportData', ref.export(imp)));
      }
      break;
    }
    case 'sound': {
      root.className = CLASS.soundWave;
      root.properties = [
        prop.float('Duration', rnd.int(1, 600) / 10),
        prop.int('SampleRate', rnd.pick([22050, 44100, 48000])),
        prop.int('NumChannels', rnd.int(1, 2)),
        prop.bool('Looping', rnd.chance(0.3)),
        prop.bytes('RawData', randomBytes(rnd, rnd.int(32, 256))),
      ];
      // Native data no class schema describes (a cue point count and a reference to itself): the
      // package loses no export, so the cook copies it byte for byte.
      root.tail = soundTail(rnd.int(0, 16));
      break;
    }
    case 'dataTable': {
      root.className = CLASS.dataTable;
      const rows: Property[][] = asset.soft.map((s, k) => [
        prop.name('RowName', `Row_${k}`),
        prop.float('Weight', rnd.int(1, 100) / 10),
        prop.soft('Asset', assets[s].guid),
      ]);
      // A row with a null soft reference: allowed, and it must not become an import.
      rows.push([prop.name('RowName', 'Unset'), prop.float('Weight', 0), prop.soft('Asset', NULL_GUID)]);
      root.properties = [
        prop.name('RowStruct', '/Script/Game.CSpawnRow'),
        { name: 'Rows', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StructProperty', innerStructName: 'SpawnRow', value: rows },
      ];
      break;
    }
    case 'text':
      throw new RangeError(`${asset.file} is a text asset, not a package`);
  }
  return buildPackage({ imports, exports: ex.list, thumbnail });
}

/** A material's TextureParameterValues: an array of { ParameterName, ParameterValue } structs. */
export function textureParameterValues(values: ReadonlyArray<{ param: string; index: number }>): Property {
  return {
    name: 'TextureParameterValues',
    arrayIndex: 0,
    type: 'ArrayProperty',
    innerType: 'StructProperty',
    innerStructName: 'TextureParameterValue',
    value: values.map((v) => [prop.name('ParameterName', v.param), prop.object('ParameterValue', v.index)]),
  };
}

/** TextureParameterValues: one struct per hard-imported texture, starting at import `first`. */
function textureParameters(asset: PlannedAsset, assets: readonly PlannedAsset[], first = 0): Property {
  const names: Record<TextureRole, string> = { D: 'BaseColor', N: 'Normal', M: 'Mask', UI: 'Overlay' };
  return textureParameterValues(asset.hard.map((dep, k) => ({ param: `${names[assets[dep].textureRole ?? 'D']}_${k}`, index: ref.import(first + k) })));
}

/** A nested (non-builtin) Transform struct holding builtin Vector and Rotator structs. */
export function transform(rnd: Random): Property {
  return prop.struct('Transform', 'Transform', [
    prop.vector('Translation', rnd.int(-50000, 50000), rnd.int(-50000, 50000), rnd.int(0, 4000)),
    { name: 'Rotation', arrayIndex: 0, type: 'StructProperty', structName: 'Rotator', value: [0, rnd.int(0, 359), 0] },
    prop.vector('Scale3D', 1, 1, 1),
  ]);
}

function soundTail(cuePoints: number): Uint8Array {
  const b = Buffer.alloc(12);
  b.writeInt32LE(cuePoints, 0);
  b.writeBigInt64LE(BigInt(ref.export(0)), 4);
  return new Uint8Array(b);
}

function randomBytes(rnd: Random, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = rnd.nextU32() & 0xff;
  return out;
}
