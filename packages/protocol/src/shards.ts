import { LIMITS } from "./limits.js";

/** FNV-1a 32-bit offset basis (PROTOCOL.md "Cluster mode"). */
const FNV_OFFSET_BASIS = 2166136261;
/** FNV-1a 32-bit prime. */
const FNV_PRIME = 16777619;

/**
 * The 32-bit FNV-1a hash of a string's UTF-8 bytes, as an unsigned integer. Encodes UTF-8 by hand
 * so the protocol package stays free of Buffer and TextEncoder; a lone surrogate (which no valid
 * namespace holds) hashes as U+FFFD, as a UTF-8 encoder would write it.
 */
export function fnv1a32(value: string): number {
  let hash = FNV_OFFSET_BASIS;
  const mix = (byte: number): void => {
    hash = Math.imul(hash ^ byte, FNV_PRIME) >>> 0;
  };
  for (let i = 0; i < value.length; i++) {
    let code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else code = 0xfffd;
    } else if (code >= 0xdc00 && code <= 0xdfff) code = 0xfffd;
    if (code < 0x80) mix(code);
    else if (code < 0x800) {
      mix(0xc0 | (code >> 6));
      mix(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      mix(0xe0 | (code >> 12));
      mix(0x80 | ((code >> 6) & 0x3f));
      mix(0x80 | (code & 0x3f));
    } else {
      mix(0xf0 | (code >> 18));
      mix(0x80 | ((code >> 12) & 0x3f));
      mix(0x80 | ((code >> 6) & 0x3f));
      mix(0x80 | (code & 0x3f));
    }
  }
  return hash >>> 0;
}

/**
 * The shard a namespace belongs to in a cluster of `shards` shards:
 * `fnv1a32(utf8(namespace)) mod shards` (PROTOCOL.md "Cluster mode"). A single server is a
 * cluster of one shard, so every namespace is in shard 0 there.
 */
export function shardOf(namespace: string, shards: number): number {
  if (!Number.isInteger(shards) || shards < 1 || shards > LIMITS.maxShards) {
    throw new RangeError(`shards must be an integer in 1..${LIMITS.maxShards}, got ${String(shards)}`);
  }
  return fnv1a32(namespace) % shards;
}
