type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T];

/**
 * `T` with `| undefined` added to every optional property, at every depth (arrays included).
 *
 * Why: TypeBox's `Static` types optional fields as `field?: X`. Projects compiled with
 * `exactOptionalPropertyTypes` could then not pass `{ acquireTimeoutMs: maybeTimeout }`, although
 * the value means "absent" everywhere it matters: JSON drops `undefined` on the wire, and the
 * validators accept an optional field set to `undefined` (TypeBox's default policy). Every protocol
 * type is this over its schema's `Static`, so what the validators accept and what the types allow agree.
 */
export type OptionalUndefined<T> = T extends readonly unknown[]
  ? { [I in keyof T]: OptionalUndefined<T[I]> }
  : T extends object
    ? {
        [K in keyof T]: K extends OptionalKeys<T>
          ? OptionalUndefined<Exclude<T[K], undefined>> | undefined
          : OptionalUndefined<T[K]>;
      }
    : T;
