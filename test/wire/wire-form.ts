/**
 * A vendor type as it travels in JSON: TypeScript string enums (the SDKs'
 * `Modality.AUDIO`) become the strings they stand for ("AUDIO"), which is
 * what a message on the wire holds; everything else is kept, optional fields
 * optional, so a field the SDK does not declare is still an excess-property
 * error and a value outside an enum still a type error.
 */
export type Wire<T> = T extends string
  ? `${T}`
  : T extends ReadonlyArray<infer U>
    ? Array<Wire<U>>
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;
