/** Defaults for every optional key of lumina-cook.json. The schema (schema.ts) names the keys. */
export const DEFAULTS = {
  contentDir: 'Content',
  engineContentDir: null as string | null,
  savedDir: 'Saved',
  intermediatesDir: 'Intermediates',
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
  },
  textures: {
    /** 'basis' encodes KTX2 with Basis Universal; 'rgba8' stores the RGBA8 mips. */
    encoder: 'basis' as 'basis' | 'rgba8',
    maxSize: 16384,
  },
  paks: {
    mountPoint: '/',
    priority: 100,
  },
  watch: {
    debounceMs: 50,
    /** 127.0.0.1 only; 0 picks a free port. */
    port: 0,
  },
} as const;

export const MAIN_CHUNK = 'Main';
export const CONFIG_FILE_NAME = 'lumina-cook.json';
