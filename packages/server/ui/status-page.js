// The status page: polls the server's inspection routes and activity feed twice a second and
// renders them. Plain browser JavaScript, no dependencies, served from the server package.
import { drawGrants, drawWaits } from "./charts.js";
import { clusterSummary, memberRows, protectionSummary, shardRows } from "./cluster-view.js";
import { eventRows, fillBody, lockRows, namespaceRows } from "./render.js";

const POLL_MS = 500;
const SLOW_POLL_MS = 5000;
// The server probes the other members at most every 1.5 s whoever asks: 2 s shows each probe.
const CLUSTER_POLL_MS = 2000;
const MAX_EVENTS_SHOWN = 200;
// sessionStorage: the token lives as long as this tab, never longer, and no other tab sees it.
const TOKEN_KEY = "leasehold.bearerToken";

const $ = (id) => document.getElementById(id);
const state = {
  selected: namespaceFromHash(),
  eventsAfter: 0,
  events: [],
  canRevoke: false,
  lastAnswer: 0,
  askedForToken: false,
  // A server without an activity feed (a cluster member) answers its route 404: the feed's
  // sections are then not shown, and it is not asked again.
  hasFeed: true,
};

class Unauthorized extends Error {}

function namespaceFromHash() {
  const m = /^#ns=(.+)$/.exec(location.hash);
  return m ? decodeURIComponent(m[1]) : undefined;
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

async function api(path, init = {}) {
  const headers = { ...(init.headers ?? {}) };
  const t = token();
  if (t !== undefined) headers.authorization = `Bearer ${t}`;
  const res = await fetch(path, { ...init, headers, cache: "no-store" });
  if (res.status === 401) throw new Unauthorized();
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${res.status}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

function showError(message) {
  $("error").hidden = message === undefined;
  $("error").textContent = message ?? "";
}

function askForToken(why) {
  $("token-why").textContent = why;
  $("token-input").value = "";
  if (!$("token-dialog").open) $("token-dialog").showModal();
}

function pick(namespace) {
  state.selected = namespace;
  history.replaceState(null, "", `#ns=${encodeURIComponent(namespace)}`);
  void tick();
}

async function revoke(descriptor, holder) {
  const reason = prompt(
    `Revoke the holder ${holder.fingerprint} of ${descriptor}${holder.clientDescription ? ` (${holder.clientDescription})` : ""}?\n` +
      "Everything it holds is released and its waiters are granted. Reason (written to the server log):",
    "revoked from the status page",
  );
  if (reason === null) return;
  try {
    const answer = await api(`/v1/namespaces/${encodeURIComponent(state.selected)}/revoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ fingerprints: [holder.fingerprint], reason: reason.slice(0, 256) || "revoked from the status page" }),
    });
    showError(answer.revoked.length === 0 ? `Nothing revoked: ${holder.fingerprint} no longer holds anything.` : undefined);
  } catch (err) {
    showError(err instanceof Unauthorized ? "Revoke refused: the token is not valid." : `Revoke failed: ${err.message}`);
  }
  void tick();
}

async function refreshNamespaces() {
  const answer = await api("/v1/namespaces?limit=1000");
  fillBody($("namespaces"), namespaceRows(answer.namespaces, state.selected, pick));
  $("namespaces-empty").hidden = answer.namespaces.length > 0;
}

async function refreshLocks() {
  const ns = state.selected;
  $("locks-section").hidden = ns === undefined;
  if (ns === undefined) return;
  const params = new URLSearchParams({ limit: "200" });
  const prefix = $("filter-prefix").value;
  if (prefix !== "") params.set("prefix", prefix);
  if ($("filter-contended").checked) params.set("contended", "true");
  const page = await api(`/v1/namespaces/${encodeURIComponent(ns)}/locks?${params}`);
  if (state.selected !== ns) return;
  const s = page.summary;
  $("locks-title").textContent = ns;
  $("locks-summary").textContent =
    `${s.heldLocks} held by ${s.heldTokens} tokens, ${s.waitingRequests} waiting, ${s.immutableTimestampLocks} immutable-timestamp locks`;
  fillBody($("locks"), lockRows(page.descriptors, state.canRevoke, revoke));
  $("locks-more").hidden = page.nextCursor === undefined;
  $("locks-more").textContent = page.nextCursor === undefined ? "" : "More descriptors follow: narrow the list with a prefix.";
}

async function refreshEvents() {
  if (!state.hasFeed) return;
  let page;
  try {
    page = await api(`/v1/events?after=${state.eventsAfter}`);
  } catch (err) {
    if (err.status !== 404) throw err;
    state.hasFeed = false;
    $("events-section").hidden = true;
    $("charts-section").hidden = true;
    // Nothing left in the side column: the cluster tables get the whole width.
    document.querySelector("main").classList.add("no-side");
    return;
  }
  state.canRevoke = page.canRevoke === true;
  if (page.nextSeq < state.eventsAfter) state.events = []; // the server restarted: its sequence began again
  // Polls overlap (a click polls at once): keep each event once, by its sequence number.
  const last = state.events.length === 0 ? 0 : state.events[state.events.length - 1].seq;
  const fresh = page.events.filter((e) => e.seq > last);
  state.eventsAfter = Math.max(state.eventsAfter, page.nextSeq);
  if (fresh.length > 0) {
    state.events = [...state.events, ...fresh].slice(-MAX_EVENTS_SHOWN);
    fillBody($("events"), eventRows(state.events));
  }
  $("events-empty").hidden = state.events.length > 0;
  $("charts-hidden").hidden = page.seconds !== undefined;
  if (page.seconds !== undefined) {
    drawGrants($("grants-chart"), page.seconds);
    drawWaits($("waits-chart"), page.seconds);
  }
}

async function tick() {
  try {
    // In parallel, to stay well within a second behind; the lock rows use the revoke permission
    // of the previous answer (it only changes with the token).
    await Promise.all([refreshEvents(), refreshNamespaces(), refreshLocks()]);
    state.lastAnswer = Date.now();
    showError(undefined);
  } catch (err) {
    if (err instanceof Unauthorized) {
      if (!state.askedForToken) {
        state.askedForToken = true;
        askForToken(token() === undefined ? "This server needs a bearer token." : "The server refused this token; enter another.");
      }
    } else showError(err instanceof TypeError ? "Cannot reach the server." : err.message);
  }
}

async function refreshSlow() {
  try {
    const health = await api("/v1/health");
    $("server").textContent = `${location.host} · version ${health.version} · leader ${health.leaderId}`;
  } catch {
    $("server").textContent = `${location.host} · not answering`;
  }
}

async function refreshCluster() {
  try {
    const answer = await api("/v1/cluster/members");
    $("cluster-section").hidden = false;
    $("cluster-summary").textContent = clusterSummary(answer);
    const protection = protectionSummary(answer);
    $("cluster-protection").textContent = protection.text;
    $("cluster-protection").className = protection.ok ? "protected-ok" : "protected-not";
    $("cluster-warning").hidden = answer.memberListError === undefined;
    $("cluster-warning").textContent = answer.memberListError ?? "";
    fillBody($("members"), memberRows(answer.members));
    fillBody($("cluster"), shardRows(answer.leaders, answer.members));
  } catch (err) {
    // A server without the route (404) shows no cluster section; a refused token is asked for by
    // the main poll; anything else (not answering) keeps the last view, marked stale by the badge.
    if (err.status === 404) $("cluster-section").hidden = true;
  }
}

function updateLive() {
  const age = state.lastAnswer === 0 ? Infinity : Date.now() - state.lastAnswer;
  const badge = $("live");
  badge.className = `badge ${age < 2000 ? "ok" : age < 10000 ? "stale" : "down"}`;
  badge.textContent = age === Infinity ? "waiting" : age < 2000 ? "live" : `${Math.round(age / 1000)}s behind`;
}

function wire() {
  $("token-button").addEventListener("click", () => askForToken("Bearer token for this server:"));
  $("token-form").addEventListener("submit", () => {
    const value = $("token-input").value.trim();
    if (value !== "") sessionStorage.setItem(TOKEN_KEY, value);
    state.askedForToken = false;
    state.canRevoke = false;
    void tick();
    void refreshSlow();
    void refreshCluster();
  });
  $("token-forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    $("token-dialog").close();
  });
  $("token-cancel").addEventListener("click", () => $("token-dialog").close());
  $("locks-filter").addEventListener("submit", (e) => e.preventDefault());
  $("filter-prefix").addEventListener("input", () => void tick());
  $("filter-contended").addEventListener("change", () => void tick());
  window.addEventListener("hashchange", () => {
    state.selected = namespaceFromHash();
    void tick();
  });
}

/** Run `step` every `everyMs`, each run waiting for the previous one: a slow server is never sent a pile of requests. */
async function poll(everyMs, step) {
  for (;;) {
    await new Promise((r) => setTimeout(r, everyMs));
    await step();
  }
}

wire();
void tick();
void refreshSlow();
void refreshCluster();
void poll(POLL_MS, tick);
void poll(CLUSTER_POLL_MS, refreshCluster);
setInterval(() => void refreshSlow(), SLOW_POLL_MS);
setInterval(updateLive, 250);
