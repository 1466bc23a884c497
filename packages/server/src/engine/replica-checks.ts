import { LeaseholdError, LIMITS, type LockMode, type LockSpec } from "@leasehold/protocol";
import { EXCLUSIVE, modeCode } from "./lock-mode-codes.js";
import type { NamespaceState } from "./namespace-state.js";
import type { ReplicatedHold, TokenImage, WaiterImage } from "./replication-entries.js";

// Shape and fit checks of what a replica is given (entries and images arrive over the network as
// JSON). Every check runs before anything changes, so a refused entry or image changes nothing.

const MODES: readonly LockMode[] = ["exclusive", "shared", "permit"];

/** The error of an entry or image that is malformed or does not fit the table: says what and where. */
export function misfit(namespace: string, path: string, message: string): LeaseholdError {
  return new LeaseholdError("INVALID_ARGUMENT", `replication for namespace ${JSON.stringify(namespace)}: ${path} ${message}`, { path });
}

/**
 * Checks with the namespace and the path prefix bound, so messages name both. Each check takes the
 * path of the value as `path` and an optional `field` appended to it (default none): the two are
 * joined only when the check fails, so a replica applying entries builds no path string per field.
 */
export class ShapeCheck {
  constructor(readonly namespace: string) {}

  fail(path: string, message: string): never {
    throw misfit(this.namespace, path, message);
  }

  object(value: unknown, path: string, field = ""): Record<string, unknown> {
    if (typeof value !== "object" || value === null || Array.isArray(value)) this.fail(path + field, "must be an object");
    return value as Record<string, unknown>;
  }

  string(value: unknown, path: string, field = ""): string {
    if (typeof value !== "string" || value.length === 0) this.fail(path + field, "must be a non-empty string");
    return value;
  }

  optionalString(value: unknown, path: string, field = ""): void {
    if (value !== undefined && typeof value !== "string") this.fail(path + field, "must be a string when present");
  }

  integer(value: unknown, path: string, min = 0, field = ""): number {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) this.fail(path + field, `must be an integer of at least ${min}`);
    return value;
  }

  boolean(value: unknown, path: string, field = ""): boolean {
    if (typeof value !== "boolean") this.fail(path + field, "must be a boolean");
    return value;
  }

  array(value: unknown, path: string, field = ""): readonly unknown[] {
    if (!Array.isArray(value)) this.fail(path + field, "must be an array");
    return value;
  }

  mode(value: unknown, path: string, field = ""): LockMode {
    if (!MODES.includes(value as LockMode)) this.fail(path + field, `must be one of ${MODES.join(", ")}`);
    return value as LockMode;
  }

  limit(value: unknown, mode: LockMode, path: string, field = ""): void {
    if (mode === "permit") this.integer(value, path, 1, field);
    else if (value !== undefined) this.fail(path + field, "is only allowed for mode permit");
    if (typeof value === "number" && value > LIMITS.maxPermitLimit) this.fail(path + field, `must be at most ${LIMITS.maxPermitLimit}`);
  }

  /** Specs: ascending, distinct descriptors, valid modes and limits. */
  specs(value: unknown, path: string): readonly LockSpec[] {
    const list = this.array(value, path);
    if (list.length === 0) this.fail(path, "must not be empty");
    for (let i = 0; i < list.length; i++) {
      const at = `${path}[${i}]`;
      const spec = this.object(list[i], at);
      const descriptor = this.string(spec.descriptor, at, ".descriptor");
      this.limit(spec.limit, this.mode(spec.mode, at, ".mode"), at, ".limit");
      if (i > 0 && !((list[i - 1] as LockSpec).descriptor < descriptor)) this.fail(`${at}.descriptor`, "must be after the one before it (ascending, distinct)");
    }
    return list as readonly LockSpec[];
  }

  /** Holds: ascending, distinct descriptors, fencing tokens below the counter value `next`. */
  holds(value: unknown, path: string, next: number): readonly ReplicatedHold[] {
    const list = this.array(value, path);
    for (let i = 0; i < list.length; i++) {
      const at = `${path}[${i}]`;
      const hold = this.object(list[i], at);
      const descriptor = this.string(hold.descriptor, at, ".descriptor");
      this.limit(hold.limit, this.mode(hold.mode, at, ".mode"), at, ".limit");
      const fence = this.integer(hold.fencingToken, at, 1, ".fencingToken");
      if (fence >= next) this.fail(`${at}.fencingToken`, `must be below the counter (${next})`);
      if (i > 0 && !((list[i - 1] as ReplicatedHold).descriptor < descriptor)) this.fail(`${at}.descriptor`, "must be after the one before it (ascending, distinct)");
    }
    return list as readonly ReplicatedHold[];
  }

  /** A token image's shape (kind-specific fields); `next` is the counter it must stay below. */
  token(value: unknown, path: string, next: number): TokenImage {
    const t = this.object(value, path);
    this.string(t.token, path, ".token");
    if (t.kind === "immutable") {
      const start = this.integer(t.startTimestamp, path, 1, ".startTimestamp");
      if (start >= next) this.fail(`${path}.startTimestamp`, `must be below the counter (${next})`);
    } else if (t.kind === "timestamp-lease") {
      this.string(t.name, path, ".name");
      const leased = this.integer(t.leased, path, 1, ".leased");
      const count = this.integer(t.count, path, 0, ".count");
      if (leased + count >= next) this.fail(`${path}.leased`, `with its count must stay below the counter (${next})`);
      this.optionalString(t.requestId, path, ".requestId");
    } else if (t.kind === "lock") {
      const holds = this.holds(t.holds, `${path}.holds`, next);
      if (holds.length === 0) this.fail(`${path}.holds`, "must not be empty");
      this.boolean(t.allOrNone, path, ".allOrNone");
      if (this.integer(t.max, path, 1, ".max") < holds.length) this.fail(`${path}.max`, "must be at least the number of holds");
      this.optionalString(t.clientDescription, path, ".clientDescription");
      this.integer(t.waitedMs, path, 0, ".waitedMs");
      this.optionalString(t.requestId, path, ".requestId");
      if ((t.requestId === undefined) !== (t.specs === undefined)) this.fail(`${path}.specs`, "must be present exactly when requestId is");
      if (t.specs !== undefined) this.specs(t.specs, `${path}.specs`);
    } else {
      this.fail(`${path}.kind`, "must be lock, immutable or timestamp-lease");
    }
    return t as unknown as TokenImage;
  }

  /** A waiter image's shape. */
  waiter(value: unknown, path: string, next: number): WaiterImage {
    const w = this.object(value, path);
    this.integer(w.serial, `${path}.serial`, 1);
    this.optionalString(w.requestId, `${path}.requestId`);
    this.optionalString(w.clientDescription, `${path}.clientDescription`);
    const specs = this.specs(w.specs, `${path}.specs`);
    const allOrNone = this.boolean(w.allOrNone, `${path}.allOrNone`);
    this.integer(w.max, `${path}.max`, 1);
    const waitOnly = this.boolean(w.waitOnly, `${path}.waitOnly`);
    this.integer(w.remainingMs, `${path}.remainingMs`);
    this.integer(w.waitedMs, `${path}.waitedMs`);
    const holds = this.holds(w.holds, `${path}.holds`, next);
    const nextIndex = this.integer(w.nextIndex, `${path}.nextIndex`);
    const watching = this.boolean(w.watching, `${path}.watching`);
    if (nextIndex > specs.length) this.fail(`${path}.nextIndex`, "must not be past the specs");
    if ((!allOrNone || waitOnly) && holds.length > 0) this.fail(`${path}.holds`, "must be empty for as-many-as-possible requests and waits");
    holds.forEach((h, i) => {
      const spec = specs[i] as LockSpec;
      if (i >= nextIndex || spec.descriptor !== h.descriptor || spec.mode !== h.mode) this.fail(`${path}.holds[${i}]`, "must be the spec at the same index, before nextIndex");
    });
    if (watching && allOrNone) this.fail(`${path}.watching`, "is only for as-many-as-possible requests");
    if (w.queuedOn !== undefined) {
      const place = this.object(w.queuedOn, `${path}.queuedOn`);
      const spec = specs[nextIndex];
      const mode = this.mode(place.mode, `${path}.queuedOn.mode`);
      this.limit(place.limit, mode, `${path}.queuedOn.limit`);
      if (!allOrNone || spec === undefined || spec.descriptor !== place.descriptor || spec.mode !== mode) this.fail(`${path}.queuedOn`, "must be the spec at nextIndex of an all-or-none request");
    }
    return w as unknown as WaiterImage;
  }
}

/**
 * Holder counts of descriptors as a fit check goes: the table's, plus what earlier parts of the
 * same entry or image add, so a whole image is checked before any of it is installed.
 */
export class HolderTally {
  /** The first descriptor added and its count (an entry's one hold needs no map). */
  private firstKey: string | null = null;
  private first: { mode: number; count: number } | null = null;
  /** Every other descriptor added, made on the second one. */
  private extra: Map<string, { mode: number; count: number }> | null = null;

  constructor(
    private readonly ns: NamespaceState | undefined,
    private readonly check: ShapeCheck,
  ) {}

  /** Record a hold, refusing one the current holders exclude (exclusive, or another mode). */
  add(hold: ReplicatedHold, path: string): void {
    const mode = modeCode(hold.mode);
    const entry = this.tallyOf(hold.descriptor, mode);
    if (entry.count > 0 && (entry.mode !== mode || mode === EXCLUSIVE)) {
      this.check.fail(path, `cannot hold ${hold.descriptor} ${hold.mode}: it is held by ${entry.count} in another or an exclusive mode`);
    }
    entry.mode = mode;
    entry.count++;
  }

  /** The count of `descriptor` so far: the table's holders at first (or none, in `mode`). */
  private tallyOf(descriptor: string, mode: number): { mode: number; count: number } {
    if (this.firstKey === descriptor) return this.first!;
    const known = this.extra?.get(descriptor);
    if (known !== undefined) return known;
    const d = this.ns?.descriptors.get(descriptor);
    const entry = { mode: d === undefined || d.holderCount === 0 ? mode : d.holderMode, count: d?.holderCount ?? 0 };
    if (this.firstKey === null) {
      this.firstKey = descriptor;
      this.first = entry;
    } else {
      (this.extra ??= new Map()).set(descriptor, entry);
    }
    return entry;
  }
}
