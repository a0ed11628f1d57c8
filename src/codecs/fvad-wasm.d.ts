// The package ships emscripten glue without type declarations.
declare module "@echogarden/fvad-wasm" {
  const factory: (moduleArg?: object) => Promise<unknown>;
  export default factory;
}
