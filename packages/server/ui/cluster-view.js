// The cluster part of the status page: every shard's leader and every server of the cluster, from
// GET /v1/cluster/members (this server probes the others: the page itself may only talk to it).
import { h, ms } from "./render.js";

/** A link to a server's own status page, or its URL as text when it is not an http(s) URL. */
function pageLink(url) {
  if (url === null || url === undefined) return "-";
  let target;
  try {
    // Relative to the URL as a directory: a URL with a path prefix (behind a proxy) keeps it.
    target = new URL("ui", url.endsWith("/") ? url : `${url}/`);
  } catch {
    return url;
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") return url;
  return h("a", { href: target.href, class: "server-page", title: `status page of ${url}` }, url);
}

function ago(value) {
  return value === null || value === undefined ? "never" : value < 1000 ? "now" : `${ms(value)} ago`;
}

/** One line saying how big the cluster is and how much of it answers. */
export function clusterSummary(answer) {
  const up = answer.members.filter((m) => m.answering).length;
  const led = answer.leaders.filter((l) => l.leaderServerId !== null).length;
  const parts = [
    `${answer.shards} shard${answer.shards === 1 ? "" : "s"} (${led} with a leader)`,
    `${answer.members.length} server${answer.members.length === 1 ? "" : "s"}, ${up} answering`,
    `this is server ${answer.serverId}`,
  ];
  return parts.join(" · ");
}

/**
 * One line saying whether a crash of any one server now would lose locks: every shard has a leader
 * and an in-sync standby, and every server says it is protected (its own health's `protected`).
 * Answers `{ text, ok }`.
 */
export function protectionSummary(answer) {
  const synced = answer.leaders.filter((l) => l.leaderServerId !== null && l.standby?.inSync === true).length;
  const reporting = answer.members.filter((m) => m.cluster !== undefined);
  const safe = reporting.filter((m) => m.cluster.protected === true).length;
  const ok = synced === answer.shards && safe === answer.members.length;
  const shards = `${synced} of ${answer.shards} shard${answer.shards === 1 ? "" : "s"} with a leader and an in-sync standby`;
  const servers = `${safe} of ${answer.members.length} server${answer.members.length === 1 ? "" : "s"} protected`;
  return { ok, text: `${ok ? "Protected" : "Not protected"}: ${shards} · ${servers}${ok ? " (a crash of any one server loses no lock)" : ""}` };
}

/** "in sync / of": a server's count of shards in sync, `-` when it did not say. */
function ofCount(inSync, all) {
  return inSync === undefined || all === undefined ? "-" : `${inSync} / ${all}`;
}

/** One row per server: its page, whether it answers this server's probes, when it was last seen. */
export function memberRows(members) {
  return members.map((m) => {
    const state = m.answering ? (m.ready ? "up" : "up, joining") : "not answering";
    return h(
      "tr",
      { "data-server-id": m.serverId, "data-state": m.answering ? "up" : "down", class: m.answering ? undefined : "down" },
      h("td", { class: "mono" }, m.serverId, m.self ? h("span", { class: "muted" }, " (this server)") : null),
      h("td", { class: "mono" }, pageLink(m.url)),
      h("td", { class: `wrap ${m.answering ? "state-up" : "state-down"}`, title: m.problem }, state, m.problem ? h("div", { class: "muted" }, m.problem) : null),
      h("td", {}, m.self ? "now" : ago(m.lastAnswerAgeMs)),
      h("td", {}, m.heartbeatAgeMs === null ? "-" : ago(m.heartbeatAgeMs)),
      h("td", { class: "num" }, m.shardsLed),
      h("td", { class: "num" }, ofCount(m.cluster?.shardsLedInSync, m.cluster?.shardsLed)),
      h("td", { class: "num" }, ofCount(m.cluster?.standbyForInSync, m.cluster?.standbyFor)),
      protectedCell(m.cluster),
    );
  });
}

/** Whether a server says it is protected, from its health (`-`: it did not say). */
function protectedCell(cluster) {
  if (cluster === undefined || cluster.protected === undefined) return h("td", { class: "protection" }, "-");
  return h("td", { class: `protection ${cluster.protected ? "state-up" : "state-down"}` }, cluster.protected ? "protected" : "not protected");
}

/** A standby's lag as its leader measures it: entries not acknowledged and the oldest one's age. */
function lag(standby) {
  if (standby === null || standby.lagEntries === undefined || standby.lagEntries === null) return "-";
  return `${standby.lagEntries} entr${standby.lagEntries === 1 ? "y" : "ies"}, ${standby.lagMs ?? 0} ms`;
}

/** One row per shard: its leader (server id, page, epoch) and its standby (in sync, lag). */
export function shardRows(leaders, members) {
  const down = new Set(members.filter((m) => !m.answering).map((m) => m.serverId));
  return leaders.map((l) => {
    const standby = l.standby ?? null;
    return h(
      "tr",
      { "data-shard": l.shard, "data-leader": l.leaderServerId ?? undefined, "data-in-sync": standby?.inSync === true ? "yes" : "no", class: l.leaderServerId !== null && down.has(l.leaderServerId) ? "down" : undefined },
      h("td", { class: "num" }, l.shard),
      h("td", { class: "mono" }, l.leaderServerId ?? "none"),
      h("td", { class: "mono" }, pageLink(l.leaderUrl)),
      h("td", { class: "num" }, l.epoch),
      h("td", { class: "mono" }, standby === null ? "none" : standby.serverId),
      h("td", { class: standby === null ? undefined : standby.inSync ? "state-up" : "state-down" }, standby === null || standby.inSync === undefined ? "-" : standby.inSync ? "yes" : "no"),
      h("td", { class: "num" }, lag(standby)),
    );
  });
}
