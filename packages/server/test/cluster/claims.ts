import type { LeaseClaim, MemberIdentity } from "../../src/cluster/coordinator.js";

/** A claim by `serverId` (incarnation `<id>-inc`, leaderId `<id>-term`), lock lease 700 ms, validForMs 350. */
export const claim = (serverId: string, leaderLeaseMs = 60_000): LeaseClaim => ({
  serverId,
  incarnation: `${serverId}-inc`,
  url: `http://${serverId}.invalid`,
  leaderId: `${serverId}-term`,
  leaderLeaseMs,
  lockLeaseMs: 700,
  validForMs: 350,
});

/** The member `serverId` as a standby is named: incarnation `<id>-inc` unless given. */
export const member = (serverId: string, incarnation = `${serverId}-inc`): MemberIdentity => ({ serverId, incarnation });
