/**
 * UTF-8 length of a string without allocating, or -1 when the string is not well-formed Unicode
 * (it holds a lone surrogate, which has no UTF-8 encoding). Pure: no Buffer, no TextEncoder.
 */
export function utf8ByteLength(value: string): number {
  let bytes = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return -1;
      bytes += 4;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return -1;
    else bytes += 3;
  }
  return bytes;
}
