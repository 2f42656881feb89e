/**
 * The class name of a texture export. Its own module so what only needs the name (the shard
 * split's cost estimate, the remote cache) does not load the texture pipeline.
 */
export const TEXTURE_CLASS = '/Script/Engine.CTexture';
