// The package ships emscripten glue without type declarations.
declare module "@echogarden/rnnoise-wasm" {
  const factory: (moduleArg?: object) => Promise<unknown>;
  export default factory;
}
