/** Public API of the samples: the committed sample project's builder and the large-project generator. */
export { generateProject, projectConfigText, type GenerateOptions, type GenerateResult } from './generate/generateProject.js';
export { planProject, ENABLED_PLUGIN, DISABLED_PLUGIN, type PlannedAsset, type ProjectPlan, type PlanOptions, type AssetKind, type TextureRole } from './generate/planProject.js';
export { encodePng, crc32, type PngImage, type PngColor } from './generate/png.js';
export { Random } from './generate/random.js';
export { CLASS } from './generate/assetPackages.js';
export {
  buildSampleProject,
  sampleAssets,
  packagePathOf,
  SAMPLE_CONFIG,
  SAMPLE_EXPORT_GUIDS,
  SAMPLE_GUIDS,
  SAMPLE_PROJECT_DIR,
  type SampleAsset,
} from './buildSampleProject.js';
