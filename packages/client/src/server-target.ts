import { LeaseholdError } from "@leasehold/protocol";

/** One server a request can go to: its URL split once into what undici's `dispatch` takes. */
export interface ServerTarget {
  /** `origin` + path prefix without the trailing slash: the identity of the server in maps and sets. */
  readonly key: string;
  readonly origin: string;
  /** Path prefix every route is appended to ("" for none). */
  readonly prefix: string;
}

/** `url` as a {@link ServerTarget}; throws a `TypeError` if it is not an http(s) URL. */
export function serverTarget(url: string | URL): ServerTarget {
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new TypeError(`not an http(s) URL: ${parsed.protocol}`);
  const prefix = parsed.pathname.replace(/\/$/, "");
  return { key: parsed.origin + prefix, origin: parsed.origin, prefix };
}

/**
 * The servers of `HttpLockServiceOptions`, checked: exactly one of `baseUrl` and `baseUrls`, a
 * non-empty list without repeats, every entry an http(s) URL. Bad input is `INVALID_ARGUMENT`
 * naming the option (and the entry) that was wrong.
 */
export function serverTargets(options: { readonly baseUrl?: string | URL | undefined; readonly baseUrls?: readonly (string | URL)[] | undefined }): ServerTarget[] {
  const { baseUrl, baseUrls } = options;
  if (baseUrl !== undefined && baseUrls !== undefined) {
    throw new LeaseholdError("INVALID_ARGUMENT", "give baseUrl (one server) or baseUrls (a cluster), not both", { path: "baseUrls" });
  }
  if (baseUrls === undefined) {
    if (baseUrl === undefined) throw new LeaseholdError("INVALID_ARGUMENT", "baseUrl (or baseUrls) is required: where the lock service listens", { path: "baseUrl" });
    return [parse(baseUrl, "baseUrl")];
  }
  if (!Array.isArray(baseUrls) || baseUrls.length === 0) {
    throw new LeaseholdError("INVALID_ARGUMENT", "baseUrls must be a non-empty array of server URLs", { path: "baseUrls" });
  }
  const targets: ServerTarget[] = [];
  baseUrls.forEach((url: string | URL, i: number) => {
    const target = parse(url, `baseUrls[${i}]`);
    const repeated = targets.findIndex((t) => t.key === target.key);
    if (repeated !== -1) throw new LeaseholdError("INVALID_ARGUMENT", `baseUrls[${i}] repeats baseUrls[${repeated}] (${target.key})`, { path: `baseUrls[${i}]` });
    targets.push(target);
  });
  return targets;
}

function parse(url: unknown, path: string): ServerTarget {
  try {
    if (typeof url !== "string" && !(url instanceof URL)) throw new TypeError(`a ${url === null ? "null" : typeof url}`);
    return serverTarget(url);
  } catch (err) {
    throw new LeaseholdError("INVALID_ARGUMENT", `${path} ${JSON.stringify(String(url))} is not an http(s) URL`, { path }, { cause: err });
  }
}
