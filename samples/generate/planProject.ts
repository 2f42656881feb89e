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

/**
 * The plan of a project: a few bytes per asset in typed arrays, so a million-asset plan takes tens
 * of MB, not a GB of objects. `asset(i)` builds one asset's full description when it is written.
 */
export interface ProjectPlan {
  name: string;
  /** How many assets (indices 0..count-1). */
  count: number;
  /** The i-th asset, built on demand (a new object each call). */
  asset(i: number): PlannedAsset;
  /** The i-th asset's GUID (cheaper than `asset(i).guid`). */
  guid(i: number): string;
  kind(i: number): AssetKind;
  textureRole(i: number): TextureRole | undefined;
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

const KINDS: readonly AssetKind[] = ['map', 'mesh', 'blueprint', 'material', 'materialInstance', 'texture', 'sound', 'dataTable', 'text'];
const ROLES: readonly TextureRole[] = ['D', 'N', 'M', 'UI'];
const TEXT_EXTENSIONS: readonly TextExtension[] = ['rml', 'rcss', 'luau'];
const PRIMARY = 1;
const STREAMED = 2;
const NO_ROLE = 255;

/** A growable Int32Array: the reference lists of every asset, back to back. */
class IntList {
  data = new Int32Array(1024);
  length = 0;
  push(values: readonly number[]): number {
    const at = this.length;
    if (at + values.length > this.data.length) {
      const grown = new Int32Array(Math.max(this.data.length * 2, at + values.length));
      grown.set(this.data.subarray(0, at));
      this.data = grown;
    }
    for (let k = 0; k < values.length; k++) this.data[at + k] = values[k];
    this.length += values.length;
    return at;
  }
}

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
  const mounts = ['Game', ENABLED_PLUGIN, DISABLED_PLUGIN];
  // One row per asset, column by column: what it is, where, its name's parts and its GUID.
  const kindOf = new Uint8Array(total);
  const mountOfAsset = new Uint8Array(total);
  const roleOf = new Uint8Array(total).fill(NO_ROLE);
  const extOf = new Uint8Array(total);
  const wordOf = new Uint8Array(total);
  const flagsOf = new Uint8Array(total);
  const ordinal = new Uint32Array(total);
  const guids = new Uint32Array(total * 4);
  const refs = new IntList();
  const hardAt = new Uint32Array(total);
  const hardLen = new Uint32Array(total);
  const softAt = new Uint32Array(total);
  const softLen = new Uint32Array(total);
  let count = 0;
  // Pools by mount and kind, for picking dependencies.
  const pools = new Map<string, number[]>();
  const pool = (mount: string, kind: string) => {
    const key = `${mount}:${kind}`;
    let p = pools.get(key);
    if (!p) pools.set(key, (p = []));
    return p;
  };

  const add = (kind: AssetKind, mount: string, i: number, word: number, extra: { role?: TextureRole; ext?: TextExtension } = {}) => {
    const index = count++;
    kindOf[index] = KINDS.indexOf(kind);
    mountOfAsset[index] = mounts.indexOf(mount);
    ordinal[index] = i;
    wordOf[index] = word;
    if (extra.role) roleOf[index] = ROLES.indexOf(extra.role);
    if (extra.ext) extOf[index] = TEXT_EXTENSIONS.indexOf(extra.ext);
    // The same draws as Random.guid(), kept as numbers (an all-zero GUID is drawn again).
    let g: number[];
    do g = [rnd.nextU32(), rnd.nextU32(), rnd.nextU32(), rnd.nextU32()];
    while (g.every((x) => x === 0));
    guids.set(g, index * 4);
    pool(mount, kind).push(index);
  };
  const wordIndex = (list: readonly string[]) => Math.floor(rnd.next() * list.length);

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
  // The draws (and their order) are those of the first generator, so projects keep their bytes.
  for (let i = 0; i < textures; i++) {
    const r = rnd.next();
    const role: TextureRole = r < 0.45 ? 'D' : r < 0.7 ? 'N' : r < 0.9 ? 'M' : 'UI';
    add('texture', mountOf(i, textures), i, wordIndex(TEXTURE_WORDS), { role });
  }
  for (let i = 0; i < materials; i++) {
    const mount = mountOf(i, materials);
    // The first material of a mount is always a parent so instances have one to point at.
    const instance = pool(mount, 'material').length > 0 && rnd.chance(0.3);
    add(instance ? 'materialInstance' : 'material', mount, i, wordIndex(MATERIAL_WORDS));
  }
  for (let i = 0; i < misc; i++) {
    const mount = mountOf(i, misc);
    const r = rnd.next();
    if (r < 0.45) add('sound', mount, i, wordIndex(SOUND_WORDS));
    else if (r < 0.8) add('dataTable', mount, i, 0);
    else add('text', mount, i, 0, { ext: rnd.pick(TEXT_EXTENSIONS) });
  }
  for (let i = 0; i < meshes; i++) {
    const mount = mountOf(i, meshes);
    const word = wordIndex(MESH_WORDS);
    add(rnd.chance(0.2) ? 'blueprint' : 'mesh', mount, i, word);
  }
  for (let i = 0; i < maps; i++) add('map', mountOf(i, maps, 1), i, 0);

  const kind = (i: number) => KINDS[kindOf[i]];
  const mountName = (i: number) => mounts[mountOfAsset[i]];
  const textureRole = (i: number) => (roleOf[i] === NO_ROLE ? undefined : ROLES[roleOf[i]]);
  const describe = (i: number): { folder: string; name: string; ext: string } => {
    const n = ordinal[i];
    switch (kind(i)) {
      case 'texture': {
        const role = textureRole(i)!;
        return { folder: role === 'UI' ? `UI/Textures/${set(n)}` : `Textures/${set(n)}`, name: `T_${TEXTURE_WORDS[wordOf[i]]}_${num(n)}_${role}`, ext: '.lasset' };
      }
      case 'material':
        return { folder: `Materials/${set(n)}`, name: `M_${MATERIAL_WORDS[wordOf[i]]}_${num(n)}`, ext: '.lasset' };
      case 'materialInstance':
        return { folder: `Materials/${set(n)}`, name: `MI_${MATERIAL_WORDS[wordOf[i]]}_${num(n)}`, ext: '.lasset' };
      case 'sound':
        return { folder: `Audio/${set(n)}`, name: `S_${SOUND_WORDS[wordOf[i]]}_${num(n)}`, ext: '.lasset' };
      case 'dataTable':
        return { folder: `Data/${set(n)}`, name: `DT_Table_${num(n)}`, ext: '.lasset' };
      case 'text': {
        const ext = TEXT_EXTENSIONS[extOf[i]];
        return { folder: ext === 'luau' ? `Scripts/${set(n)}` : `UI/${set(n)}`, name: `${ext === 'luau' ? 'Script' : 'Screen'}_${num(n)}`, ext: `.${ext}` };
      }
      case 'blueprint':
        return { folder: `Blueprints/${set(n)}`, name: `BP_${MESH_WORDS[wordOf[i]]}_${num(n)}`, ext: '.lasset' };
      case 'mesh':
        return { folder: `Meshes/${set(n)}`, name: `SM_${MESH_WORDS[wordOf[i]]}_${num(n)}`, ext: '.lasset' };
      case 'map':
        return { folder: `Maps/Zone_${String(Math.floor(n / 64)).padStart(2, '0')}`, name: `Map_${num(n)}`, ext: '.lasset' };
    }
  };
  const packagePath = (i: number) => {
    const d = describe(i);
    return `/${mountName(i)}/${d.folder}/${d.name}`;
  };

  // ---- References ----
  // Where each asset sits in its own category (0..1): material 10% of the way through its list
  // prefers textures 10% of the way through theirs, like assets authored together.
  const anchor = new Float64Array(total);
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
      if (filter) list = list.filter((i) => filter.includes(textureRole(i)!));
      joined.set(key, list);
    }
    return list;
  };
  /** The asset whose references are being drawn: its lists until they are stored. */
  interface Drawing {
    index: number;
    mount: string;
    hard: number[];
    soft: number[];
  }
  const draw = (a: Drawing, kinds: AssetKind[], min: number, max: number, into: 'hard' | 'soft', filter?: TextureRole[]) => {
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
  // A soft reference never duplicates a hard one (the import table holds one entry per GUID).
  const storeHard = (i: number, hard: readonly number[]) => {
    hardAt[i] = refs.push(hard);
    hardLen[i] = hard.length;
  };
  const storeSoft = (i: number, soft: readonly number[]) => {
    const hard = refs.data.subarray(hardAt[i], hardAt[i] + hardLen[i]);
    const kept = soft.filter((s) => !hard.includes(s));
    softAt[i] = refs.push(kept);
    softLen[i] = kept.length;
  };

  const surface: TextureRole[] = ['D', 'N', 'M'];
  for (let index = 0; index < total; index++) {
    const k = kind(index);
    // Maps draw theirs below, once every map exists.
    if (k === 'map') continue;
    const a: Drawing = { index, mount: mountName(index), hard: [], soft: [] };
    switch (k) {
      case 'material':
        draw(a, ['texture'], 1, 6, 'hard', surface);
        break;
      case 'materialInstance': {
        draw(a, ['material'], 1, 1, 'hard');
        draw(a, ['texture'], 0, 3, 'hard', surface);
        break;
      }
      case 'mesh':
        draw(a, ['material', 'materialInstance'], 1, 3, 'hard');
        break;
      case 'blueprint':
        draw(a, ['mesh'], 1, 3, 'hard');
        draw(a, ['sound'], 0, 2, 'hard');
        // Blueprints sometimes use each other, which can close a cycle: real projects have them.
        if (rnd.chance(0.05)) draw(a, ['blueprint'], 1, 1, 'hard');
        break;
      case 'dataTable':
        draw(a, ['mesh', 'blueprint'], 0, 3, 'soft');
        draw(a, ['texture'], 0, 2, 'soft', ['UI']);
        break;
      default:
        break;
    }
    storeHard(index, a.hard);
    storeSoft(index, a.soft);
  }

  // Maps: per mount, the first ~30% are persistent levels that stream the rest as sub-levels.
  const cookRoots: string[] = [];
  const plugins: PluginPlan[] = [
    { name: ENABLED_PLUGIN, path: `Plugins/${ENABLED_PLUGIN}`, enabled: true, chunk: ENABLED_PLUGIN, cookRoots: [] },
  ];
  if (withDisabled) plugins.push({ name: DISABLED_PLUGIN, path: `Plugins/${DISABLED_PLUGIN}`, enabled: false, chunk: DISABLED_PLUGIN, cookRoots: [] });
  const streamedBy = new Map<number, number[]>();
  for (const mount of mounts) {
    const mapIdx = pool(mount, 'map');
    if (mapIdx.length === 0) continue;
    const persistent = Math.max(1, Math.ceil(mapIdx.length * 0.3));
    mapIdx.forEach((m, j) => {
      const a: Drawing = { index: m, mount, hard: [], soft: [] };
      draw(a, ['mesh', 'blueprint'], 20, 200, 'hard');
      draw(a, ['sound'], 0, 4, 'hard');
      storeHard(m, a.hard);
      if (j < persistent) {
        // Some persistent maps are Primary: they cook even when nobody lists them as a root.
        if (j > 0 && rnd.chance(0.3)) flagsOf[m] |= PRIMARY;
      } else {
        flagsOf[m] |= STREAMED;
        const owner = mapIdx[j % persistent];
        let list = streamedBy.get(owner);
        if (!list) streamedBy.set(owner, (list = []));
        list.push(m);
      }
    });
    for (const m of mapIdx) storeSoft(m, streamedBy.get(m) ?? []);
    const roots = mapIdx.slice(0, Math.min(3, persistent)).map(packagePath);
    if (mount === 'Game') cookRoots.push(...roots);
    else plugins.find((p) => p.name === mount)!.cookRoots.push(...roots.slice(0, 1));
  }

  const guid = (i: number) => {
    let s = '';
    for (let k = 0; k < 4; k++) s += guids[i * 4 + k].toString(16).padStart(8, '0');
    return s;
  };
  const asset = (i: number): PlannedAsset => {
    if (!Number.isInteger(i) || i < 0 || i >= total) throw new RangeError(`asset ${i} is not in a plan of ${total}`);
    const d = describe(i);
    const mount = mountName(i);
    const root = mount === 'Game' ? 'Content' : `Plugins/${mount}/Content`;
    const a: PlannedAsset = {
      index: i,
      kind: kind(i),
      mount,
      packagePath: `/${mount}/${d.folder}/${d.name}`,
      file: `${root}/${d.folder}/${d.name}${d.ext}`,
      name: d.name,
      guid: guid(i),
      hard: Array.from(refs.data.subarray(hardAt[i], hardAt[i] + hardLen[i])),
      soft: Array.from(refs.data.subarray(softAt[i], softAt[i] + softLen[i])),
      primary: (flagsOf[i] & PRIMARY) !== 0,
    };
    const role = textureRole(i);
    if (role) a.textureRole = role;
    if (a.kind === 'text') a.textExtension = TEXT_EXTENSIONS[extOf[i]];
    if (flagsOf[i] & STREAMED) a.streamed = true;
    return a;
  };

  const gameMaps = pool('Game', 'map');
  return {
    name: `Generated_${opts.seed}`,
    count: total,
    asset,
    guid,
    kind,
    textureRole,
    cookRoots,
    gameStartupMap: gameMaps.length ? packagePath(gameMaps[0]) : null,
    plugins,
  };
}
