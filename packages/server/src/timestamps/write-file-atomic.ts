import { closeSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Replace `path` with `contents` so that a crash at any moment leaves either the old file or the
 * new one, never a torn mix: write a temporary file beside it, fsync it, rename it over the target,
 * then fsync the directory so the rename itself survives a power loss. Synchronous on purpose: the
 * caller must not hand out numbers the file does not yet cover.
 */
export function writeFileAtomicSync(path: string, contents: string): void {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.tmp`);
  const fd = openSync(temp, "w", 0o644);
  try {
    const bytes = Buffer.from(contents, "utf8");
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  fsyncDirectory(dir);
}

function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch (err) {
    // Some platforms (Windows) cannot open or fsync a directory; the rename is still atomic there.
    if (!isIgnorableDirSyncError(err)) throw err;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isIgnorableDirSyncError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "EISDIR" || code === "EPERM" || code === "EINVAL" || code === "EBADF";
}
