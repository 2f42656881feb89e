export { loadConfig, normalizeConfig } from './loadConfig.js';
export type { LoadedConfig, MountConfig, PluginConfig, ProjectConfig, TextureConfig } from './loadConfig.js';
export { CONFIG_FILE_NAME, DEFAULTS, MAIN_CHUNK } from './defaults.js';
