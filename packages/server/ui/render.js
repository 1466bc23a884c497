// DOM helpers and formatters of the status page. Every piece of server data goes in as text
// (textContent), never as markup, so a descriptor or description can never inject anything.

/** Create an element with attributes and children (strings become text nodes). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "onclick") el.addEventListener("click", value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null) continue;
    el.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
  }
  return el;
}

/** A duration for people: 850ms, 5.2s, 3m12s, 2h05m; "-" when absent. */
export function ms(value) {
  if (value === undefined || value === null) return "-";
  if (value < 1000) return `${value}ms`;
  if (value < 60000) return `${(value / 1000).toFixed(1)}s`;
  const s = Math.floor(value / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Control characters (row and cell descriptors join their parts with NUL) as visible escapes. */
export function printable(text) {
  if (text === undefined || text === null) return "-";
  // eslint-disable-next-line no-control-regex
  return String(text).replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Replace a table body's rows. */
export function fillBody(table, rows) {
  table.tBodies[0].replaceChildren(...rows);
}

/** The namespaces table's rows; `onPick(namespace)` when a row is clicked. */
export function namespaceRows(namespaces, selected, onPick) {
  return namespaces.map((n) =>
    h(
      "tr",
      { class: `clickable${n.namespace === selected ? " selected" : ""}`, "data-namespace": n.namespace, onclick: () => onPick(n.namespace) },
      h("td", {}, h("a", { href: `#ns=${encodeURIComponent(n.namespace)}` }, n.namespace)),
      h("td", { class: "num" }, n.heldLocks),
      h("td", { class: "num" }, n.heldTokens),
      h("td", { class: "num" }, n.waitingRequests),
      h("td", { class: "num" }, n.immutableTimestampLocks),
      h("td", { class: "num" }, ms(n.oldestHoldMs)),
      h("td", { class: "num" }, ms(n.longestWaitMs)),
    ),
  );
}

/** One row per holder and waiter of each descriptor; holders get a revoke button when allowed. */
export function lockRows(descriptors, canRevoke, onRevoke) {
  const rows = [];
  for (const d of descriptors) {
    const name = printable(d.descriptor) + (d.limit === undefined ? "" : ` (limit ${d.limit})`);
    const entries = [
      ...d.holders.map((x) => ({ role: x.acquiring ? "acquiring" : "holder", x })),
      ...d.waiters.map((x, i) => ({ role: "waiter", position: i + 1, x })),
    ];
    entries.forEach(({ role, position, x }, i) => {
      const isHolder = role !== "waiter";
      const button =
        canRevoke && role === "holder" && x.fingerprint
          ? h("button", { type: "button", class: "revoke", onclick: () => onRevoke(d.descriptor, x) }, "Revoke")
          : null;
      rows.push(
        h(
          "tr",
          {
            class: i === 0 ? "first" : undefined,
            "data-descriptor": d.descriptor,
            "data-role": role,
            "data-position": position,
            "data-fingerprint": x.fingerprint,
          },
          h("td", { class: "mono" }, i === 0 ? name : ""),
          h("td", { class: `role-${role}` }, role === "waiter" ? `waiter ${position}` : role),
          h("td", {}, x.mode),
          h("td", { class: "num" }, isHolder ? x.fencingToken : "-"),
          h("td", { class: "mono" }, x.fingerprint ?? "-"),
          h("td", { class: "num" }, ms(isHolder ? x.heldForMs : x.waitingForMs)),
          h("td", { class: "num" }, ms(isHolder ? x.leaseLeftMs : x.deadlineLeftMs)),
          h("td", { class: "wrap" }, printable(x.clientDescription)),
          h("td", {}, button),
        ),
      );
    });
    const more = [];
    if (d.holderCount > d.holders.length) more.push(`+${d.holderCount - d.holders.length} more holders`);
    if (d.queueLength > d.waiters.length) more.push(`+${d.queueLength - d.waiters.length} more waiters`);
    if (d.watchers > 0) more.push(`${d.watchers} as-many-as-possible watcher${d.watchers === 1 ? "" : "s"}`);
    if (more.length > 0) rows.push(h("tr", { "data-descriptor": d.descriptor }, h("td", {}), h("td", { class: "muted", colspan: 8 }, more.join(", "))));
  }
  return rows;
}

/** One row per lapse or revoked holder, newest first. */
export function eventRows(events) {
  const rows = [];
  for (const e of [...events].reverse()) {
    const time = new Date(e.at).toLocaleTimeString();
    const holders = e.kind === "lapse" ? [e] : e.holders;
    const what = e.kind === "lapse" ? "lease lapsed" : `revoked${e.reason ? `: ${e.reason}` : ""}`;
    for (const x of holders) {
      const held =
        x.startTimestamp !== undefined
          ? `immutable ts ${x.startTimestamp}`
          : `${printable(x.firstDescriptor)}${x.descriptors > 1 ? ` +${x.descriptors - 1} more` : ""}`;
      rows.push(
        h(
          "tr",
          { "data-kind": e.kind, "data-namespace": e.namespace, "data-fingerprint": x.fingerprint },
          h("td", {}, time),
          h("td", { class: `event-${e.kind}` }, what),
          h("td", {}, e.namespace),
          h("td", { class: "mono" }, x.fingerprint ?? "-"),
          h("td", { class: "wrap" }, printable(x.clientDescription)),
          h("td", { class: "mono" }, held),
          h("td", { class: "num" }, ms(x.heldForMs)),
        ),
      );
    }
  }
  return rows;
}
