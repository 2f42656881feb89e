/**
 * Writes the small committed sample project in `samples/project/`. Every byte is a pure function
 * of this file, so `npx tsx samples/buildSampleProject.ts` regenerates the committed files exactly
 * (a test rebuilds into a temp folder and compares), and the cook's end-to-end tests can rely on
 * the paths, GUIDs and flags listed in `SAMPLE_ASSETS`.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildPackage, hard, prop, ref, soft, type ExportSpec } from '../src/format/packageBuilder.js';
import { AssetFlags, NULL_GUID, ObjectFlags, type ImportEntry, type Property } from '../src/format/packageTypes.js';
import { CLASS, textureParameterValues } from './generate/assetPackages.js';
import { greyMask, leafCutout, noiseAlbedo, normalMap, paletteChecker, planksAlbedo, thumbnailGradient, uiButton } from './generate/images.js';
import { encodePng, type PngImage } from './generate/png.js';
import { Random } from './generate/random.js';
import { ambientZoneExport, NATIVE_CLASS, patrolRouteExports, schemaFiles } from './nativeSamples.js';
import { lmetaText } from './generate/textAssets.js';
import { SAMPLE_GLOBAL_SHADERS, SAMPLE_LIT_SHADER, SAMPLE_SHADER_FILES } from './sampleShaders.js';

/** Where the committed sample project lives. */
export const SAMPLE_PROJECT_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'project');

/**
 * GUIDs of the sample's assets: the first digit names the group (1 maps, 2 meshes, 3 materials,
 * 4 textures, 5 data, 6 unreachable, 7 text, 8 Foliage plugin, 9 Experimental plugin, b native tails).
 */
export const SAMPLE_GUIDS = {
  Main: '10000000000000000000000000000001',
  MainStreaming: '10000000000000000000000000000002',
  Rock: '20000000000000000000000000000001',
  Crate: '20000000000000000000000000000002',
  Boulder: '20000000000000000000000000000003',
  MaterialRock: '30000000000000000000000000000001',
  MCrate: '30000000000000000000000000000002',
  MIRockMossy: '30000000000000000000000000000003',
  TRockD: '40000000000000000000000000000001',
  TRockN: '40000000000000000000000000000002',
  TCrateD: '40000000000000000000000000000003',
  TCrateM: '40000000000000000000000000000004',
  TUILogo: '40000000000000000000000000000005',
  TUIButton: '40000000000000000000000000000006',
  GameRules: '50000000000000000000000000000001',
  OldRock: '60000000000000000000000000000001',
  TUnused: '60000000000000000000000000000002',
  MOld: '60000000000000000000000000000003',
  MainMenuRml: '70000000000000000000000000000001',
  MainMenuRcss: '70000000000000000000000000000002',
  GameLuau: '70000000000000000000000000000003',
  Forest: '80000000000000000000000000000001',
  Tree: '80000000000000000000000000000002',
  MBark: '80000000000000000000000000000003',
  MLeaves: '80000000000000000000000000000004',
  TBarkD: '80000000000000000000000000000005',
  TLeavesD: '80000000000000000000000000000006',
  ProtoCube: '90000000000000000000000000000001',
  PatrolRoute: 'b0000000000000000000000000000001',
  AmbientWind: 'b0000000000000000000000000000002',
} as const;

const G = SAMPLE_GUIDS;

/** GUIDs of notable sub-objects (exports), so tests can find them after a cook. */
export const SAMPLE_EXPORT_GUIDS = {
  MainPersistentLevel: '1000000000000000000000000000a001',
  MainWorldSettings: '1000000000000000000000000000a002',
  MainRockActor0: '1000000000000000000000000000a003',
  MainRockActor1: '1000000000000000000000000000a004',
  MainCrateActor0: '1000000000000000000000000000a005',
  MainEditorBillboard: '1000000000000000000000000000a006',
  MainLevelEditorData: '1000000000000000000000000000a007',
  MainNavigationCache: '1000000000000000000000000000a008',
} as const;

export interface SampleAsset {
  /** Project-relative path with forward slashes. */
  file: string;
  packagePath: string;
  guid: string;
  className: string;
  /** What the asset demonstrates, for the README. */
  note: string;
}

interface PackageDef extends SampleAsset {
  imports: ImportEntry[];
  exports: ExportSpec[];
  thumbnail?: { width: number; height: number; data: Uint8Array };
}

const rgb = (r: number, g: number, b: number) => [r, g, b] as const;
/** Sub-object GUIDs: the asset's GUID with the last four digits replaced, readable in dumps. */
const sub = (asset: string, n: number) => asset.slice(0, 28) + (0xa000 + n).toString(16);
const asset = (guid: string, name: string, className: string, properties: Property[], assetFlags = 0): ExportSpec => ({
  guid,
  name,
  className,
  objectFlags: ObjectFlags.Public,
  assetFlags,
  properties,
});
const linear = (name: string, r: number, g: number, b: number, a = 1): Property => ({ name, arrayIndex: 0, type: 'StructProperty', structName: 'LinearColor', value: [r, g, b, a] });
const builtin = (name: string, structName: string, value: number[] | string): Property => ({ name, arrayIndex: 0, type: 'StructProperty', structName, value });
const transform = (x: number, y: number, z: number, yaw: number, scale = 1): Property =>
  prop.struct('Transform', 'Transform', [
    prop.vector('Translation', x, y, z),
    builtin('Rotation', 'Rotator', [0, yaw, 0]),
    prop.vector('Scale3D', scale, scale, scale),
  ]);

function texture(
  file: string,
  guid: string,
  image: PngImage,
  settings: { srgb: boolean; compression: string; mips: boolean },
  note: string,
): PackageDef {
  const name = stem(file);
  return {
    file,
    packagePath: packagePathOf(file),
    guid,
    className: CLASS.texture,
    note,
    imports: [],
    exports: [
      asset(guid, name, CLASS.texture, [
        prop.bytes('SourceData', encodePng(image)),
        prop.bool('SRGB', settings.srgb),
        prop.enum('Compression', 'ETextureCompression', `ETextureCompression::${settings.compression}`),
        prop.bool('GenerateMips', settings.mips),
      ]),
    ],
  };
}

function staticMesh(file: string, guid: string, materials: string[], note: string, extra: { importData?: boolean; thumbnail?: boolean } = {}): PackageDef {
  const name = stem(file);
  const exports: ExportSpec[] = [
    asset(guid, name, CLASS.staticMesh, [
      prop.objects('Materials', materials.map((_, i) => ref.import(i))),
      prop.object('BodySetup', ref.export(1)),
      prop.int('LODCount', 2),
      prop.builtin('Bounds', 'BoxSphereBounds', [0, 0, 50, 100, 100, 50, 150]),
    ]),
    { guid: sub(guid, 1), name: 'BodySetup', className: CLASS.bodySetup, properties: [prop.enum('CollisionTraceFlag', 'ECollisionTraceFlag', 'ECollisionTraceFlag::UseSimpleAsComplex'), prop.float('Mass', 80)] },
  ];
  if (extra.importData) {
    exports.push({ guid: sub(guid, 2), name: 'AssetImportData', className: CLASS.assetImportData, properties: [prop.str('SourceFile', `D:/Art/Meshes/${name}.fbx`)] });
    exports[0].properties!.push(prop.object('AssetImportData', ref.export(2)));
  }
  return {
    file,
    packagePath: packagePathOf(file),
    guid,
    className: CLASS.staticMesh,
    note,
    imports: materials.map(hard),
    exports,
    thumbnail: extra.thumbnail ? thumbnailGradient(16, rgb(90, 90, 90), rgb(220, 220, 210)) : undefined,
  };
}

function material(
  file: string,
  guid: string,
  textures: Array<{ guid: string; param: string; normal?: boolean }>,
  note: string,
  extra: { editorData?: boolean; masked?: boolean; defines?: string[] } = {},
): PackageDef {
  const name = stem(file);
  const samples: ExportSpec[] = textures.map((t, i) => ({
    guid: sub(guid, i + 1),
    name: `TextureSample_${i}`,
    className: CLASS.textureSample,
    properties: [prop.object('Texture', ref.import(i)), prop.enum('SamplerType', 'EMaterialSamplerType', t.normal ? 'EMaterialSamplerType::Normal' : 'EMaterialSamplerType::Color')],
  }));
  const root = asset(guid, name, CLASS.material, [
    prop.objects('Expressions', samples.map((_, i) => ref.export(i + 1))),
    prop.enum('BlendMode', 'EBlendMode', extra.masked ? 'EBlendMode::Masked' : 'EBlendMode::Opaque'),
    prop.bool('TwoSided', extra.masked === true),
    linear('BaseColorTint', 1, 1, 1),
    textureParameterValues(textures.map((t, i) => ({ param: t.param, index: ref.import(i) }))),
    // The shader permutation it needs: the cook compiles Lit.hlsl's entries with these defines.
    prop.str('ShaderSource', SAMPLE_LIT_SHADER),
  ]);
  if (extra.defines?.length) root.properties!.push({ name: 'ShaderDefines', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StrProperty', value: extra.defines });
  const exports = [root, ...samples];
  if (extra.editorData) {
    exports.push({
      guid: sub(guid, 9),
      name: 'MaterialEditorData',
      className: CLASS.materialEditorData,
      objectFlags: ObjectFlags.EditorOnly,
      properties: [prop.objects('ExpressionCollection', samples.map((_, i) => ref.export(i + 1)))],
    });
    root.properties!.push(prop.object('EditorOnlyData', ref.export(exports.length - 1)));
  }
  return { file, packagePath: packagePathOf(file), guid, className: CLASS.material, note, imports: textures.map((t) => hard(t.guid)), exports };
}

function stem(file: string): string {
  return path.posix.basename(file).replace(/\.[^.]+$/, '');
}

/** `Content/X/Y.lasset` -> `/Game/X/Y`; `Plugins/P/Content/X/Y.lasset` -> `/P/X/Y`. */
export function packagePathOf(file: string): string {
  const noExt = file.replace(/\.lasset$/, '');
  const plugin = /^Plugins\/([^/]+)\/Content\/(.*)$/.exec(noExt);
  if (plugin) return `/${plugin[1]}/${plugin[2]}`;
  return `/Game/${noExt.replace(/^Content\//, '')}`;
}

/** The hand-designed packages of the sample project. */
function samplePackages(): PackageDef[] {
  const E = SAMPLE_EXPORT_GUIDS;
  const main: PackageDef = {
    file: 'Content/Maps/Main.lasset',
    packagePath: '/Game/Maps/Main',
    guid: G.Main,
    className: CLASS.world,
    note: 'cook root, Primary. Hard-imports Rock and Crate, soft-references Main_Streaming. Exports: class-based editor-only (EditorBillboard, /Script/Editor.), flag-based EditorOnly (LevelEditorData), Transient (NavigationCache); references to all three must be nulled by the cook. Thumbnail 32x32.',
    imports: [hard(G.Rock), hard(G.Crate), soft(G.MainStreaming)],
    exports: [
      // 0
      asset(
        G.Main,
        'Main',
        CLASS.world,
        [prop.object('PersistentLevel', ref.export(1)), prop.soft('StreamingLevel', G.MainStreaming), prop.str('DisplayName', 'Main Street')],
        AssetFlags.Primary,
      ),
      // 1
      {
        guid: E.MainPersistentLevel,
        name: 'PersistentLevel',
        className: CLASS.level,
        properties: [
          prop.objects('Actors', [ref.export(3), ref.export(4), ref.export(5)]),
          prop.object('WorldSettings', ref.export(2)),
          prop.object('EditorBillboard', ref.export(6)),
          prop.object('EditorData', ref.export(7)),
          prop.object('NavigationCache', ref.export(8)),
          prop.object('OwningWorld', ref.export(0)),
        ],
      },
      // 2
      {
        guid: E.MainWorldSettings,
        name: 'WorldSettings',
        className: CLASS.worldSettings,
        properties: [
          prop.vector('DefaultGravity', 0, 0, -980),
          builtin('SunRotation', 'Rotator', [-45, 130, 0]),
          builtin('FogColor', 'Color', [200, 180, 160, 255]),
          linear('AmbientColor', 0.2, 0.25, 0.35, 1),
          builtin('LightingGuid', 'Guid', 'c0ffee00c0ffee00c0ffee00c0ffee00'),
          builtin('MinimapOrigin', 'Vector2D', [-2048, -2048]),
          builtin('WindDirection', 'Vector4', [1, 0.5, 0, 0.3]),
          builtin('SkyOrientation', 'Quat', [0, 0, 0, 1]),
          prop.double('KillZ', -10000),
          prop.enum('GameMode', 'EGameMode', 'EGameMode::Exploration'),
          // A non-builtin struct nesting another, both holding ObjectProperty references: one to
          // an actor that survives the cook, one to the editor-only billboard that must be nulled.
          prop.struct('PlayerStart', 'PlayerStartInfo', [
            prop.object('SpawnActor', ref.export(3)),
            prop.struct('Debug', 'PlayerStartDebug', [prop.object('Marker', ref.export(6)), prop.bool('DrawArrow', true)]),
          ]),
          prop.object('NavigationCache', ref.export(8)),
        ],
      },
      // 3, 4, 5
      { guid: E.MainRockActor0, name: 'RockActor_0', className: CLASS.staticMeshActor, properties: [prop.object('StaticMesh', ref.import(0)), transform(100, 200, 0, 15)] },
      { guid: E.MainRockActor1, name: 'RockActor_1', className: CLASS.staticMeshActor, properties: [prop.object('StaticMesh', ref.import(0)), transform(-300, 50, 0, 200, 1.5)] },
      { guid: E.MainCrateActor0, name: 'CrateActor_0', className: CLASS.staticMeshActor, properties: [prop.object('StaticMesh', ref.import(1)), transform(0, -150, 0, 90)] },
      // 6: editor-only by class prefix
      { guid: E.MainEditorBillboard, name: 'EditorBillboard', className: CLASS.editorBillboard, properties: [prop.str('Sprite', 'S_LevelIcon'), prop.object('Owner', ref.export(1))] },
      // 7: editor-only by flag
      {
        guid: E.MainLevelEditorData,
        name: 'LevelEditorData',
        className: '/Script/Engine.CLevelEditorData',
        objectFlags: ObjectFlags.EditorOnly,
        properties: [prop.vector('CameraLocation', 0, -500, 300), prop.objects('SelectedActors', [ref.export(5)])],
      },
      // 8: transient
      { guid: E.MainNavigationCache, name: 'NavigationCache', className: CLASS.navigationCache, objectFlags: ObjectFlags.Transient, properties: [prop.int('TileCount', 64)] },
    ],
    thumbnail: thumbnailGradient(32, rgb(40, 90, 160), rgb(200, 220, 140)),
  };

  const streaming: PackageDef = {
    file: 'Content/Maps/Main_Streaming.lasset',
    packagePath: '/Game/Maps/Main_Streaming',
    guid: G.MainStreaming,
    className: CLASS.world,
    note: 'streamed sub-level: reached only through the soft reference from Main (left out with cook.soft "exclude"). Hard-imports Boulder and Crate (Crate shared with Main).',
    imports: [hard(G.Boulder), hard(G.Crate)],
    exports: [
      asset(G.MainStreaming, 'Main_Streaming', CLASS.world, [prop.object('PersistentLevel', ref.export(1)), prop.bool('IsStreamedSubLevel', true)]),
      { guid: sub(G.MainStreaming, 1), name: 'PersistentLevel', className: CLASS.level, properties: [prop.objects('Actors', [ref.export(2), ref.export(3)])] },
      { guid: sub(G.MainStreaming, 2), name: 'BoulderActor_0', className: CLASS.staticMeshActor, properties: [prop.object('StaticMesh', ref.import(0)), transform(4000, 0, 0, 0, 3)] },
      { guid: sub(G.MainStreaming, 3), name: 'CrateActor_0', className: CLASS.staticMeshActor, properties: [prop.object('StaticMesh', ref.import(1)), transform(4100, 80, 0, 45)] },
    ],
  };

  const gameRules: PackageDef = {
    file: 'Content/Data/GameRules.lasset',
    packagePath: '/Game/Data/GameRules',
    guid: G.GameRules,
    className: '/Script/Game.CGameRules',
    note: 'Primary but not in cookRoots: cooked because Primary assets are roots. Hard-imports T_UI_Logo (so that texture is cooked only via this asset); a null SoftObjectProperty (no import).',
    imports: [hard(G.TUILogo)],
    exports: [
      asset(
        G.GameRules,
        'GameRules',
        '/Script/Game.CGameRules',
        [
          prop.int('MaxPlayers', 4),
          prop.float('RespawnSeconds', 5.5),
          prop.object('Logo', ref.import(0)),
          prop.soft('OptionalIntroMap', NULL_GUID),
          {
            name: 'Difficulties',
            arrayIndex: 0,
            type: 'ArrayProperty',
            innerType: 'NameProperty',
            value: ['Easy', 'Normal', 'Hard'],
          },
        ],
        AssetFlags.Primary,
      ),
    ],
  };

  const miRock: PackageDef = {
    file: 'Content/Materials/MI_Rock_Mossy.lasset',
    packagePath: '/Game/Materials/MI_Rock_Mossy',
    guid: G.MIRockMossy,
    className: CLASS.materialInstance,
    note: 'material instance: Parent is the Rock material (hard import).',
    imports: [hard(G.MaterialRock)],
    exports: [
      asset(G.MIRockMossy, 'MI_Rock_Mossy', CLASS.materialInstance, [
        prop.object('Parent', ref.import(0)),
        {
          name: 'VectorParameterValues',
          arrayIndex: 0,
          type: 'ArrayProperty',
          innerType: 'StructProperty',
          innerStructName: 'VectorParameterValue',
          value: [[prop.name('ParameterName', 'Tint'), linear('ParameterValue', 0.4, 0.6, 0.3)]],
        },
      ]),
    ],
  };

  const oldRock = staticMesh('Content/Unused/OldRock.lasset', G.OldRock, [G.MOld], 'not reachable from any root: never cooked (nor is M_Old, which only it uses).');

  const tree: PackageDef = staticMesh('Plugins/Foliage/Content/Meshes/Tree.lasset', G.Tree, [G.MBark, G.MLeaves], 'Foliage mesh with two materials.', { thumbnail: true });
  const forest: PackageDef = {
    file: 'Plugins/Foliage/Content/Maps/Forest.lasset',
    packagePath: '/Foliage/Maps/Forest',
    guid: G.Forest,
    className: CLASS.world,
    note: 'the Foliage plugin\'s cook root (chunk "Foliage"). Hard-imports Tree and the /Game Rock mesh (Rock stays in Main, which also reaches it).',
    imports: [hard(G.Tree), hard(G.Rock)],
    exports: [
      asset(G.Forest, 'Forest', CLASS.world, [prop.object('PersistentLevel', ref.export(1))]),
      { guid: sub(G.Forest, 1), name: 'PersistentLevel', className: CLASS.level, properties: [prop.objects('Actors', [ref.export(2), ref.export(3), ref.export(4)])] },
      { guid: sub(G.Forest, 2), name: 'TreeActor_0', className: CLASS.staticMeshActor, properties: [prop.object('StaticMesh', ref.import(0)), transform(0, 0, 0, 0)] },
      { guid: sub(G.Forest, 3), name: 'TreeActor_1', className: CLASS.staticMeshActor, properties: [prop.object('StaticMesh', ref.import(0)), transform(600, 250, 0, 70, 1.2)] },
      { guid: sub(G.Forest, 4), name: 'RockActor_0', className: CLASS.staticMeshActor, properties: [prop.object('StaticMesh', ref.import(1)), transform(300, -200, 0, 10)] },
    ],
  };

  const protoCube: PackageDef = staticMesh(
    'Plugins/Experimental/Content/Prototypes/ProtoCube.lasset',
    G.ProtoCube,
    [G.MaterialRock],
    'in the disabled Experimental plugin: on disk, never mounted or cooked. Hard-imports the /Game Rock material.',
  );

  return [
    main,
    streaming,
    staticMesh('Content/Meshes/Rock.lasset', G.Rock, [G.MaterialRock], 'mesh used by Main (twice) and by the Foliage plugin\'s Forest map.', { thumbnail: true }),
    staticMesh('Content/Meshes/Crate.lasset', G.Crate, [G.MCrate], 'mesh with an editor-only AssetImportData export (/Script/Editor.CAssetImportData) referenced from the asset.', { importData: true }),
    staticMesh('Content/Meshes/Boulder.lasset', G.Boulder, [G.MIRockMossy], 'mesh used only by the streamed sub-level; uses a material instance.'),
    material('Content/Materials/Rock.lasset', G.MaterialRock, [{ guid: G.TRockD, param: 'BaseColor' }, { guid: G.TRockN, param: 'Normal', normal: true }], 'material sharing the asset name "Rock" with the mesh (different package). Shader /Game/Shaders/Lit.hlsl with USE_NORMAL_MAP, TINT=0.8.', { defines: ['USE_NORMAL_MAP', 'TINT=0.8'] }),
    material('Content/Materials/M_Crate.lasset', G.MCrate, [{ guid: G.TCrateD, param: 'BaseColor' }, { guid: G.TCrateM, param: 'Mask' }], 'material with a flag-based EditorOnly export (MaterialEditorData). Lit.hlsl with no defines.', { editorData: true }),
    miRock,
    texture('Content/Textures/T_Rock_D.lasset', G.TRockD, noiseAlbedo(64, new Random(101), rgb(70, 66, 60), rgb(160, 152, 140)), { srgb: true, compression: 'Default', mips: true }, 'RGB8 64x64 PNG, sRGB, mips, Default.'),
    texture('Content/Textures/T_Rock_N.lasset', G.TRockN, normalMap(64, new Random(102), 3), { srgb: false, compression: 'Normalmap', mips: true }, 'RGB8 64x64 normal map PNG, linear, Normalmap.'),
    texture('Content/Textures/T_Crate_D.lasset', G.TCrateD, planksAlbedo(64, new Random(103), 4), { srgb: true, compression: 'Default', mips: true }, 'RGB8 64x64 planks PNG, sRGB, mips.'),
    texture('Content/Textures/T_Crate_M.lasset', G.TCrateM, greyMask(64, new Random(104), 6), { srgb: false, compression: 'Masks', mips: true }, 'greyscale (colour type 0) 64x64 PNG, linear, Masks.'),
    texture('Content/UI/T_UI_Logo.lasset', G.TUILogo, paletteChecker(32, [rgb(20, 24, 32), rgb(220, 180, 60), rgb(90, 140, 220), rgb(240, 240, 240)], 4), { srgb: true, compression: 'UserInterface', mips: false }, 'palette (colour type 3) 32x32 PNG, UserInterface, no mips; cooked only through GameRules.'),
    texture('Content/UI/T_UI_Button.lasset', G.TUIButton, uiButton(48, 24, rgb(90, 140, 220), rgb(30, 50, 110)), { srgb: true, compression: 'UserInterface', mips: false }, 'RGBA8 48x24 (non-square) PNG with soft alpha; not referenced by any package: not cooked.'),
    gameRules,
    oldRock,
    material('Content/Unused/M_Old.lasset', G.MOld, [{ guid: G.TUnused, param: 'BaseColor' }, { guid: G.TRockD, param: 'Detail' }], 'unreachable material; its T_Rock_D import adds fan-in that must not pull anything extra into the cook. Its LEGACY permutation is never compiled.', { defines: ['LEGACY'] }),
    texture('Content/Unused/T_Unused.lasset', G.TUnused, uiButton(16, 16, rgb(255, 0, 255), rgb(0, 0, 0)), { srgb: true, compression: 'Default', mips: true }, 'RGBA8 16x16; only M_Old uses it: not cooked.'),
    forest,
    tree,
    material('Plugins/Foliage/Content/Materials/M_Bark.lasset', G.MBark, [{ guid: G.TBarkD, param: 'BaseColor' }, { guid: G.TRockN, param: 'Normal', normal: true }], 'Foliage material that also hard-imports the /Game texture T_Rock_N (a shared dependency). Lit.hlsl with USE_NORMAL_MAP: its permutations ship in the Foliage chunk\'s ShaderCache.bin.', { defines: ['USE_NORMAL_MAP'] }),
    material('Plugins/Foliage/Content/Materials/M_Leaves.lasset', G.MLeaves, [{ guid: G.TLeavesD, param: 'BaseColor' }], 'masked, two-sided Foliage material. Lit.hlsl with ALPHA_TEST=0.5.', { masked: true, defines: ['ALPHA_TEST=0.5'] }),
    texture('Plugins/Foliage/Content/Textures/T_Bark_D.lasset', G.TBarkD, noiseAlbedo(64, new Random(105), rgb(50, 34, 20), rgb(120, 88, 56), 8), { srgb: true, compression: 'Default', mips: true }, 'RGB8 64x64 PNG.'),
    texture('Plugins/Foliage/Content/Textures/T_Leaves_D.lasset', G.TLeavesD, leafCutout(64, new Random(106)), { srgb: true, compression: 'Default', mips: true }, 'RGBA8 64x64 PNG with an alpha cutout.'),
    protoCube,
    ...nativeTailPackages(),
  ];
}

/** Packages whose exports carry native tails (see samples/nativeSamples.ts and Schemas/). */
function nativeTailPackages(): PackageDef[] {
  const route = patrolRouteExports((n) => (n === 0 ? G.PatrolRoute : sub(G.PatrolRoute, n)), 'PatrolRoute', 3, 400);
  route[0].assetFlags = AssetFlags.Primary;
  const wind = ambientZoneExport(G.AmbientWind, 'AmbientWind', 1200);
  wind.assetFlags = AssetFlags.Primary;
  return [
    {
      file: 'Content/Gameplay/PatrolRoute.lasset',
      packagePath: '/Game/Gameplay/PatrolRoute',
      guid: G.PatrolRoute,
      className: NATIVE_CLASS.patrolRoute,
      note: 'Primary. Native tails with class schemas (Schemas/): an array of SWaypoint structs holding references, arrayDim, a super chain; an EditorOnly export placed before the markers whose tails refer past it, so the cook renumbers and nulls references inside tails.',
      imports: [],
      exports: route,
    },
    {
      file: 'Content/Gameplay/AmbientWind.lasset',
      packagePath: '/Game/Gameplay/AmbientWind',
      guid: G.AmbientWind,
      className: NATIVE_CLASS.ambientZone,
      note: 'Primary. A native tail of a class without a schema: copied byte for byte (the package loses no export).',
      imports: [],
      exports: [wind],
    },
  ];
}

interface TextDef extends SampleAsset {
  text: string;
}

function sampleTextAssets(): TextDef[] {
  const def = (file: string, guid: string, className: string, note: string, text: string): TextDef => ({
    file,
    // Text assets are addressed by their file's virtual path, extension included.
    packagePath: packagePathOf(file),
    guid,
    className,
    note,
    text,
  });
  return [
    def('Content/UI/MainMenu.rml', G.MainMenuRml, 'rml', 'RmlUi document; text assets are always cooked.', MAIN_MENU_RML),
    def('Content/UI/MainMenu.rcss', G.MainMenuRcss, 'rcss', 'style sheet linked by MainMenu.rml.', MAIN_MENU_RCSS),
    def('Content/Scripts/Game.luau', G.GameLuau, 'luau', 'Luau game script.', GAME_LUAU),
  ];
}

/** Every asset of the sample project, packages then text assets, for tests and the README. */
export function sampleAssets(): SampleAsset[] {
  const strip = ({ file, packagePath, guid, className, note }: SampleAsset): SampleAsset => ({ file, packagePath, guid, className, note });
  return [...samplePackages().map(strip), ...sampleTextAssets().map(strip)];
}

export const SAMPLE_CONFIG = {
  // Editors validate and complete the config from the schema the package ships (config/).
  $schema: '../../config/lumina-cook.schema.json',
  name: 'LuminaSample',
  cookRoots: ['/Game/Maps/Main'],
  plugins: [
    { name: 'Foliage', path: 'Plugins/Foliage', enabled: true, chunk: 'Foliage', cookRoots: ['/Foliage/Maps/Forest'] },
    { name: 'Experimental', path: 'Plugins/Experimental', enabled: false, chunk: 'Experimental' },
  ],
  shaders: { global: SAMPLE_GLOBAL_SHADERS },
};

/** Write the sample project into `outDir` (default: samples/project). Returns the files written, sorted. */
export async function buildSampleProject(outDir: string = SAMPLE_PROJECT_DIR): Promise<string[]> {
  const files = new Map<string, Uint8Array | string>();
  files.set('lumina-cook.json', `${JSON.stringify(SAMPLE_CONFIG, null, 2)}\n`);
  const packages = samplePackages();
  for (const p of packages) files.set(p.file, buildPackage({ imports: p.imports, exports: p.exports, thumbnail: p.thumbnail ?? null }));
  const texts = sampleTextAssets();
  for (const t of texts) {
    files.set(t.file, t.text);
    files.set(`${t.file}.lmeta`, lmetaText(t.guid));
  }
  for (const [file, text] of schemaFiles()) files.set(file, text);
  for (const [rel, text] of Object.entries(SAMPLE_SHADER_FILES)) files.set(`Content/${rel}`, text);
  files.set('README.md', readme([...packages, ...texts]));

  const written = [...files.keys()].sort();
  for (const rel of written) {
    const target = path.join(outDir, rel);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    await fsp.writeFile(target, files.get(rel)!);
  }
  return written;
}

function readme(assets: Array<SampleAsset & { exports?: ExportSpec[] }>): string {
  const lines = [
    '# LuminaSample',
    '',
    'A small project that exercises every feature of the cook. Generated by',
    '`npx tsx samples/buildSampleProject.ts`; do not edit these files by hand (a test rebuilds them',
    'and fails on any difference).',
    '',
    '- `lumina-cook.json`: cook root `/Game/Maps/Main`; plugin **Foliage** (enabled, chunk `Foliage`,',
    '  cook root `/Foliage/Maps/Forest`); plugin **Experimental** (disabled; its content is on disk).',
    '- Reached from the roots: Main, Main_Streaming (soft), Rock, Crate, Boulder, the Rock / M_Crate /',
    '  MI_Rock_Mossy materials and their textures, GameRules (Primary) and T_UI_Logo, and in the Foliage',
    '  chunk Forest, Tree, M_Bark, M_Leaves, T_Bark_D, T_Leaves_D. T_Rock_N is shared by /Game and',
    '  Foliage and ships in Main.',
    '- Not cooked: OldRock, M_Old and T_Unused (unreachable), T_UI_Button (unreferenced), ProtoCube (disabled plugin).',
    '- Text assets (always cooked): MainMenu.rml, MainMenu.rcss, Game.luau, each with a `.lmeta` sidecar.',
    '- `Schemas/Engine.json`, `Schemas/Game.json`: class schemas for the native tails of PatrolRoute',
    '  (Primary); AmbientWind (Primary) has a tail whose class has no schema.',
    '- Shaders (`Content/Shaders/`): `Lit.hlsl` (VSMain + PSMain, both reading `Common/Lighting.hlsli`), used by',
    '  every material with its own defines; `Wind.glsl`, a compute shader including `Common/Noise.glsli`,',
    '  shipped through `shaders.global`. Each compiled source has a `.shader.json` sidecar naming its entries.',
    '  The cook compiles every shipped permutation to SPIR-V into each pak\'s `/ShaderCache.bin` (M_Old\'s',
    '  `LEGACY` one is never compiled: M_Old does not ship).',
    '',
    '## Assets',
    '',
    '| file | GUID | class | demonstrates |',
    '| --- | --- | --- | --- |',
  ];
  for (const a of assets) lines.push(`| \`${a.file}\` | \`${a.guid}\` | \`${a.className}\` | ${a.note} |`);
  lines.push('', '## Exports of `Content/Maps/Main.lasset`', '', '| # | name | class | flags | GUID |', '| --- | --- | --- | --- | --- |');
  const main = assets.find((a) => a.guid === G.Main)!;
  main.exports!.forEach((e, i) => {
    const flags = [
      (e.objectFlags ?? 0) & ObjectFlags.Public ? 'Public' : '',
      (e.objectFlags ?? 0) & ObjectFlags.Transient ? 'Transient' : '',
      (e.objectFlags ?? 0) & ObjectFlags.EditorOnly ? 'EditorOnly' : '',
      e.className.startsWith('/Script/Editor.') ? 'editor class' : '',
      (e.assetFlags ?? 0) & AssetFlags.Primary ? 'Primary' : '',
    ].filter(Boolean);
    lines.push(`| ${i} | ${e.name} | \`${e.className}\` | ${flags.join(', ') || '-'} | \`${e.guid}\` |`);
  });
  lines.push(
    '',
    'After the cook, Main keeps exports 0-5 (EditorBillboard, LevelEditorData and NavigationCache are',
    'stripped) and the references `PersistentLevel.EditorBillboard`, `.EditorData`, `.NavigationCache`,',
    '`WorldSettings.PlayerStart.Debug.Marker` and `WorldSettings.NavigationCache` become null.',
    '',
  );
  return lines.join('\n');
}

const MAIN_MENU_RML = `<rml>
  <head>
    <title>Main Menu</title>
    <link type="text/rcss" href="MainMenu.rcss"/>
    <script src="/Game/Scripts/Game.luau"></script>
  </head>
  <body>
    <div id="menu" class="panel">
      <h1>Lumina</h1>
      <button id="play" onclick="Game.start('/Game/Maps/Main')">Play</button>
      <button id="options" onclick="Game.openOptions()">Options</button>
      <button id="quit" onclick="Game.quit()">Quit</button>
    </div>
  </body>
</rml>
`;

const MAIN_MENU_RCSS = `body {
  font-family: LatoLatin;
  font-size: 18dp;
  color: #f0f0f0;
}

.panel {
  width: 320dp;
  margin: auto;
  padding: 24dp;
  background-color: #141820e0;
  border-radius: 8dp;
}

h1 {
  font-size: 36dp;
  text-align: center;
}

button {
  display: block;
  margin: 8dp 0;
  padding: 8dp;
  background-color: #5a8cdc;
}

button:hover {
  background-color: #dcb43c;
}
`;

const GAME_LUAU = `--!strict
-- Game flow for LuminaSample: the main menu calls these.
local Game = {}

type Options = { volume: number, invertY: boolean }

local options: Options = { volume = 0.8, invertY = false }

function Game.start(map: string)
  print("loading " .. map)
  Engine.loadMap(map)
end

function Game.openOptions()
  UI.open("/Game/UI/Options.rml", options)
end

function Game.quit()
  Engine.quit()
end

return Game
`;

// Run as a script: `npx tsx samples/buildSampleProject.ts [outDir]`.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const out = path.resolve(process.argv[2] ?? SAMPLE_PROJECT_DIR);
  buildSampleProject(out).then(
    (files) => process.stdout.write(`wrote ${files.length} files to ${out}\n`),
    (e) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
