// The package ships emscripten glue without type declarations.
declare module "@echogarden/speex-resampler-wasm" {
  const factory: (moduleArg?: object) => Promise<unknown>;
  export default factory;
}
declare module "@echogarden/speex-resampler-wasm/simd" {
  const factory: (moduleArg?: object) => Promise<unknown>;
  export default factory;
}
