/**
 * The shape of a generated project, decided before any byte is written: which assets exist,
 * where they live, and who references whom. It mirrors a game's content graph:
 *
 *   persistent maps --soft--> streamed sub-levels
 *   maps --hard--> meshes / blueprints --hard--> materials (+ instances --hard--> parent)
 *   materials --hard--> textures; data tables --soft--> meshes, UI textures
 *
 * Fan-in follows a log-uniform (Zipf-like) pick plus locality, so a few textures and materials are
 * shared by thousands of assets while most are used by a handful. Plugin content mostly uses its
 * own assets but also reaches into /Game (shared dependencies); /Game never depends on a plugin.
 */
import { Random } from './random.js';

export type AssetKind =
  | 'map'
  | 'mesh'
  | 'blueprint'
  | 'material'
  | 'materialInstance'
  | 'texture'
  | 'sound'
  | 'dataTable'
  | 'text';

/** Diffuse (sRGB), normal map, packed mask (grey) or UI art. */
export type TextureRole = 'D' | 'N' | 'M' | 'UI';

export type TextExtension = 'rml' | 'rcss' | 'luau';

export interface PlannedAsset {
  index: number;
  kind: AssetKind;
  /** Mount alias without the slash: `Game` or a plugin name. */
  mount: string;
  /** Package path without extension, e.g. `/Game/Meshes/Set_000/SM_Rock_00012`. */
  packagePath: string;
  /** Project-relative file with forward slashes, e.g. `Content/Meshes/Set_000/SM_Rock_00012.lasset`. */
  file: string;
  /** The file stem: the asset export's objectName. */
  name: string;
  guid: string;
  /** Indices of hard-referenced assets, unique, in reference order. */
  hard: number[];
  /** Indices of soft-referenced assets, unique, none also in `hard`. */
  soft: number[];
  primary: boolean;
  textureRole?: TextureRole;
  textExtension?: TextExtension;
  /** For a map: it is a streamed sub-level of another map. */
  streamed?: boolean;
}

export interface PluginPlan {
  name: string;
  /** Project-relative plugin folder. */
  path: string;
  enabled: boolean;
  chunk: string;
  cookRoots: string[];
}

export interface ProjectPlan {
  name: string;
  assets: PlannedAsset[];
  cookRoots: string[];
  gameStartupMap: string | null;
  plugins: PluginPlan[];
}

export interface PlanOptions {
  assets: number;
  seed: number;
  /** Include a disabled plugin whose content is on disk (default true). */
  withDisabledPlugin?: boolean;
}

export const ENABLED_PLUGIN = 'Wilderness';
export const DISABLED_PLUGIN = 'LegacyProps';

const MESH_WORDS = ['Rock', 'Crate', 'Barrel', 'Wall', 'Door', 'Pillar', 'Lamp', 'Fence', 'Bench', 'Cliff', 'Stair', 'Arch'];
const MATERIAL_WORDS = ['Stone', 'Wood', 'Metal', 'Plaster', 'Moss', 'Brick', 'Cloth', 'Glass', 'Sand', 'Rust'];
const TEXTURE_WORDS = ['Stone', 'Bark', 'Planks', 'Iron', 'Grass', 'Dirt', 'Tiles', 'Fabric', 'Rubble', 'Paint'];
const SOUND_WORDS = ['Footstep', 'Impact', 'Ambience', 'Door', 'Wind', 'Fire', 'Water', 'Ui'];
const FOLDER_SIZE = 256;

/** Plan a project of exactly `assets` assets. Pure: the same options give the same plan. */
export function planProject(opts: PlanOptions): ProjectPlan {
  const total = opts.assets;
  const rnd = new Random(opts.seed);
  const digits = Math.max(5, String(total).length);
  const num = (i: number) => String(i).padStart(digits, '0');

  // Category sizes: ~1% maps, 25% meshes+blueprints, 25% materials, 40% textures, rest misc.
  const maps = Math.max(1, Math.floor(total * 0.01));
  const meshes = Math.floor(total * 0.25);
  const materials = Math.floor(total * 0.25);
  const textures = Math.floor(total * 0.4);
  const misc = total - maps - meshes - materials - textures;

  const withDisabled = (opts.withDisabledPlugin ?? true) && total >= 100;
  const assets: PlannedAsset[] = [];
  // Pools by mount and kind, for picking dependencies.
  const pools = new Map<string, number[]>();
  const pool = (mount: string, kind: string) => {
    const key = `${mount}:${kind}`;
    let p = pools.get(key);
    if (!p) pools.set(key, (p = []));
    return p;
  };

  const add = (kind: AssetKind, mount: string, folder: string, name: string, extra: Partial<PlannedAsset> = {}) => {
    const root = mount === 'Game' ? 'Content' : `Plugins/${mount}/Content`;
    const ext = kind === 'text' ? `.${extra.textExtension}` : '.lasset';
    const a: PlannedAsset = {
      index: assets.length,
      kind,
      mount,
      packagePath: `/${mount}/${folder}/${name}`,
      file: `${root}/${folder}/${name}${ext}`,
      name,
      guid: rnd.guid(),
      hard: [],
      soft: [],
      primary: false,
      ...extra,
    };
    assets.push(a);
    pool(mount, kind).push(a.index);
    return a;
  };

  /** Which mount the i-th of `count` assets of one category lives in: last 10% plugin, 1% disabled. */
  const mountOf = (i: number, count: number, minPlugin = 0) => {
    const disabled = withDisabled ? Math.floor(count * 0.01) : 0;
    const plugin = Math.max(Math.floor(count * 0.1), count >= 2 ? minPlugin : 0);
    if (i >= count - disabled) return DISABLED_PLUGIN;
    if (i >= count - disabled - plugin) return ENABLED_PLUGIN;
    return 'Game';
  };
  const set = (i: number) => `Set_${String(Math.floor(i / FOLDER_SIZE)).padStart(3, '0')}`;

  // Textures first, then the categories that point at them, so every pool is full when picked from.
  for (let i = 0; i < textures; i++) {
    const r = rnd.next();
    const role: TextureRole = r < 0.45 ? 'D' : r < 0.7 ? 'N' : r < 0.9 ? 'M' : 'UI';
    const mount = mountOf(i, textures);
    const folder = role === 'UI' ? `UI/Textures/${set(i)}` : `Textures/${set(i)}`;
    add('texture', mount, folder, `T_${rnd.pick(TEXTURE_WORDS)}_${num(i)}_${role}`, { textureRole: role });
  }
  for (let i = 0; i < materials; i++) {
    const mount = mountOf(i, materials);
    // The first material of a mount is always a parent so instances have one to point at.
    const instance = pool(mount, 'material').length > 0 && rnd.chance(0.3);
    const word = rnd.pick(MATERIAL_WORDS);
    if (instance) add('materialInstance', mount, `Materials/${set(i)}`, `MI_${word}_${num(i)}`);
    else add('material', mount, `Materials/${set(i)}`, `M_${word}_${num(i)}`);
  }
  for (let i = 0; i < misc; i++) {
    const mount = mountOf(i, misc);
    const r = rnd.next();
    if (r < 0.45) add('sound', mount, `Audio/${set(i)}`, `S_${rnd.pick(SOUND_WORDS)}_${num(i)}`);
    else if (r < 0.8) add('dataTable', mount, `Data/${set(i)}`, `DT_Table_${num(i)}`);
    else {
      const ext = rnd.pick<TextExtension>(['rml', 'rcss', 'luau']);
      const folder = ext === 'luau' ? `Scripts/${set(i)}` : `UI/${set(i)}`;
      add('text', mount, folder, `${ext === 'luau' ? 'Script' : 'Screen'}_${num(i)}`, { textExtension: ext });
    }
  }
  for (let i = 0; i < meshes; i++) {
    const mount = mountOf(i, meshes);
    const word = rnd.pick(MESH_WORDS);
    if (rnd.chance(0.2)) add('blueprint', mount, `Blueprints/${set(i)}`, `BP_${word}_${num(i)}`);
    else add('mesh', mount, `Meshes/${set(i)}`, `SM_${word}_${num(i)}`);
  }
  for (let i = 0; i < maps; i++) {
    add('map', mountOf(i, maps, 1), `Maps/Zone_${String(Math.floor(i / 64)).padStart(2, '0')}`, `Map_${num(i)}`);
  }

  // ---- References ----
  // Where each asset sits in its own category (0..1): material 10% of the way through its list
  // prefers textures 10% of the way through theirs, like assets authored together.
  const anchor = new Float64Array(assets.length);
  for (const list of pools.values()) list.forEach((i, j) => (anchor[i] = j / list.length));
  const pick = (from: readonly number[], anchor: number) => {
    // Locality (assets made together use each other), Zipf popularity, or anything.
    const r = rnd.next();
    if (r < 0.5) {
      const centre = Math.floor(anchor * from.length);
      return from[Math.min(from.length - 1, Math.max(0, centre + rnd.int(-8, 8)))];
    }
    if (r < 0.8) return from[rnd.zipf(from.length)];
    return from[rnd.int(0, from.length - 1)];
  };
  /**
   * The candidates an asset of `mount` may depend on: its own mount's first, /Game's as the
   * shared fallback. Joined pools are built once per (mount, kinds, filter): rebuilding them per
   * asset would make planning quadratic.
   */
  const joined = new Map<string, number[]>();
  const candidates = (mount: string, kinds: AssetKind[], filter?: TextureRole[]) => {
    const key = `${mount}:${kinds.join(',')}:${filter?.join(',') ?? ''}`;
    let list = joined.get(key);
    if (!list) {
      list = kinds.flatMap((k) => pool(mount, k));
      if (filter) list = list.filter((i) => filter.includes(assets[i].textureRole!));
      joined.set(key, list);
    }
    return list;
  };
  const refs = (a: PlannedAsset, kinds: AssetKind[], min: number, max: number, into: 'hard' | 'soft', filter?: TextureRole[]) => {
    const own = candidates(a.mount, kinds, filter);
    const game = a.mount === 'Game' ? own : candidates('Game', kinds, filter);
    if (own.length + game.length === 0) return;
    const want = rnd.int(min, max);
    const list = a[into];
    // Bounded attempts: a small pool cannot yield more unique picks than it holds.
    for (let tries = 0; list.length < want && tries < want * 4; tries++) {
      const from = a.mount !== 'Game' && (own.length === 0 || rnd.chance(0.25)) ? game : own;
      if (from.length === 0) continue;
      const ref = pick(from, anchor[a.index]);
      if (ref !== a.index && !a.hard.includes(ref) && !a.soft.includes(ref)) list.push(ref);
    }
  };

  const surface: TextureRole[] = ['D', 'N', 'M'];
  for (const a of assets) {
    switch (a.kind) {
      case 'material':
        refs(a, ['texture'], 1, 6, 'hard', surface);
        break;
      case 'materialInstance': {
        refs(a, ['material'], 1, 1, 'hard');
        refs(a, ['texture'], 0, 3, 'hard', surface);
        break;
      }
      case 'mesh':
        refs(a, ['material', 'materialInstance'], 1, 3, 'hard');
        break;
      case 'blueprint':
        refs(a, ['mesh'], 1, 3, 'hard');
        refs(a, ['sound'], 0, 2, 'hard');
        // Blueprints sometimes use each other, which can close a cycle: real projects have them.
        if (rnd.chance(0.05)) refs(a, ['blueprint'], 1, 1, 'hard');
        break;
      case 'dataTable':
        refs(a, ['mesh', 'blueprint'], 0, 3, 'soft');
        refs(a, ['texture'], 0, 2, 'soft', ['UI']);
        break;
      default:
        break;
    }
  }

  // Maps: per mount, the first ~30% are persistent levels that stream the rest as sub-levels.
  const cookRoots: string[] = [];
  const plugins: PluginPlan[] = [
    { name: ENABLED_PLUGIN, path: `Plugins/${ENABLED_PLUGIN}`, enabled: true, chunk: ENABLED_PLUGIN, cookRoots: [] },
  ];
  if (withDisabled) plugins.push({ name: DISABLED_PLUGIN, path: `Plugins/${DISABLED_PLUGIN}`, enabled: false, chunk: DISABLED_PLUGIN, cookRoots: [] });
  for (const mount of ['Game', ENABLED_PLUGIN, DISABLED_PLUGIN]) {
    const mapIdx = pool(mount, 'map');
    if (mapIdx.length === 0) continue;
    const persistent = Math.max(1, Math.ceil(mapIdx.length * 0.3));
    mapIdx.forEach((m, j) => {
      const a = assets[m];
      refs(a, ['mesh', 'blueprint'], 20, 200, 'hard');
      refs(a, ['sound'], 0, 4, 'hard');
      if (j < persistent) {
        // Some persistent maps are Primary: they cook even when nobody lists them as a root.
        a.primary = j > 0 && rnd.chance(0.3);
      } else {
        a.streamed = true;
        const owner = assets[mapIdx[j % persistent]];
        owner.soft.push(m);
      }
    });
    const roots = mapIdx.slice(0, Math.min(3, persistent)).map((m) => assets[m].packagePath);
    if (mount === 'Game') cookRoots.push(...roots);
    else plugins.find((p) => p.name === mount)!.cookRoots.push(...roots.slice(0, 1));
  }
  // A soft reference never duplicates a hard one (the import table holds one entry per GUID).
  for (const a of assets) if (a.soft.length) a.soft = a.soft.filter((s) => !a.hard.includes(s));

  const gameMaps = pool('Game', 'map');
  return {
    name: `Generated_${opts.seed}`,
    assets,
    cookRoots,
    gameStartupMap: gameMaps.length ? assets[gameMaps[0]].packagePath : null,
    plugins,
  };
}
