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
    );
  });
}

/** One row per shard: its leader (server id, page, epoch) and its standby. */
export function shardRows(leaders, members) {
  const down = new Set(members.filter((m) => !m.answering).map((m) => m.serverId));
  return leaders.map((l) => {
    const standby = l.standby ?? null;
    return h(
      "tr",
      { "data-shard": l.shard, "data-leader": l.leaderServerId ?? undefined, class: l.leaderServerId !== null && down.has(l.leaderServerId) ? "down" : undefined },
      h("td", { class: "num" }, l.shard),
      h("td", { class: "mono" }, l.leaderServerId ?? "none"),
      h("td", { class: "mono" }, pageLink(l.leaderUrl)),
      h("td", { class: "num" }, l.epoch),
      h("td", { class: "mono" }, standby === null ? "none" : standby.serverId),
    );
  });
}
