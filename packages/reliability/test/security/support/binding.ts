import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { expect } from "vitest";
import type { Harness } from "./harness.js";

/** Check name in the report. */
export const BINDING_CHECK = "default binding: loopback only";

/** An address of this machine to try the server's port on. */
export interface LocalAddress {
  /** What to connect to (IPv6 link-local addresses carry their `%interface`). */
  readonly host: string;
  readonly family: "IPv4" | "IPv6";
  readonly loopback: boolean;
}

/**
 * Every address of this machine's interfaces except `127.0.0.1`, plus `127.0.0.2` (another
 * loopback address: a listener on 127/8 or 0.0.0.0 would answer there) and `::1`.
 */
export function otherAddresses(): LocalAddress[] {
  const found = new Map<string, LocalAddress>();
  for (const [name, infos] of Object.entries(networkInterfaces())) {
    for (const info of infos ?? []) {
      if (info.address === "127.0.0.1") continue;
      const host = info.family === "IPv6" && info.address.toLowerCase().startsWith("fe80:") ? `${info.address}%${name}` : info.address;
      found.set(host, { host, family: info.family, loopback: info.internal });
    }
  }
  found.set("127.0.0.2", { host: "127.0.0.2", family: "IPv4", loopback: true });
  if (!found.has("::1")) found.set("::1", { host: "::1", family: "IPv6", loopback: true });
  return [...found.values()];
}

/** Try a TCP connection; `connected`, the error code (`ECONNREFUSED`, …), or `timeout` after `timeoutMs`. */
export function tryConnect(host: string, port: number, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (outcome: string): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done("timeout"), timeoutMs);
    socket.once("connect", () => done("connected"));
    socket.once("error", (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

function ipv4FromProc(hex: string): string {
  // /proc/net/tcp writes the address as one little-endian 32-bit word.
  const n = Number.parseInt(hex, 16);
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff].join(".");
}

/**
 * The local addresses of every socket in LISTEN state on `port`, read from Linux's
 * `/proc/net/tcp` and `/proc/net/tcp6` (IPv6 entries as their raw hex); null where there is no procfs.
 */
export function listenersOnPort(port: number): string[] | null {
  if (!existsSync("/proc/net/tcp")) return null;
  const listeners: string[] = [];
  for (const [file, v6] of [["/proc/net/tcp", false], ["/proc/net/tcp6", true]] as const) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const state = fields[3];
      if (local === undefined || state !== "0A") continue;
      const [address = "", portHex = ""] = local.split(":");
      if (Number.parseInt(portHex, 16) !== port) continue;
      listeners.push(v6 ? `[${address}]` : ipv4FromProc(address));
    }
  }
  return listeners;
}

/**
 * The server was started without `--host`: its listening line names 127.0.0.1, a connection to
 * the port on every other address of the machine (and on 127.0.0.2 and ::1) is not accepted, and
 * Linux's socket table shows exactly one listener on the port, on 127.0.0.1.
 */
export async function runBindingCheck(h: Harness): Promise<void> {
  const port = h.server.port;
  const outcomes: string[] = [];
  try {
    h.tally.record(BINDING_CHECK, `listening line: ${new URL(h.server.url).hostname}`, 0, 0);
    expect(new URL(h.server.url).hostname).toBe("127.0.0.1");
    for (const address of otherAddresses()) {
      const outcome = await tryConnect(address.host, port);
      h.tally.record(BINDING_CHECK, `${address.loopback ? "loopback" : "non-loopback"} ${address.family}: ${outcome}`, 1, 0);
      outcomes.push(`${address.host} (${address.loopback ? "loopback" : "non-loopback"}): ${outcome}`);
      expect(outcome, `something accepted a connection on ${address.host}:${port}`).not.toBe("connected");
    }
    const listeners = listenersOnPort(port);
    if (listeners !== null) {
      h.tally.record(BINDING_CHECK, `listeners on the port in /proc/net/tcp*: ${listeners.join(", ")}`, 0, 0);
      expect(listeners).toEqual(["127.0.0.1"]);
    }
    const nonLoopback = otherAddresses().filter((a) => !a.loopback).length;
    h.tally.observations.push(
      `Binding: started without \`--host\`, the server listened on ${h.server.url}; connections to its port on ${outcomes.join("; ")}${nonLoopback === 0 ? " (this machine has no non-loopback address)" : ""}; ${listeners === null ? "no /proc/net/tcp to read" : `/proc/net/tcp and tcp6 list ${listeners.length} listener on the port: ${listeners.join(", ")}`}.`,
    );
  } catch (err) {
    h.tally.violation(BINDING_CHECK);
    throw err;
  }
}
