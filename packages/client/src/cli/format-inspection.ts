import type { NamespaceLocksResponse, NamespacesResponse, NamespaceSummary } from "@leasehold/protocol";
import { formatMs, formatTable, printable } from "./format-table.js";

/** `leasehold inspect` without a namespace, as a table. */
export function formatNamespaces(answer: NamespacesResponse): string {
  if (answer.namespaces.length === 0) return "no namespaces in use\n";
  const rows = answer.namespaces.map((n) => [
    n.namespace,
    String(n.heldLocks),
    String(n.heldTokens),
    String(n.waitingRequests),
    String(n.immutableTimestampLocks),
    formatMs(n.oldestHoldMs),
    formatMs(n.longestWaitMs),
  ]);
  const table = formatTable(["NAMESPACE", "HELD", "TOKENS", "WAITING", "IMMUTABLE", "OLDEST HOLD", "LONGEST WAIT"], rows);
  return table + more(answer.nextCursor);
}

function summaryLine(s: NamespaceSummary): string {
  return (
    `namespace ${s.namespace}: ${s.heldLocks} held, ${s.heldTokens} tokens, ${s.waitingRequests} waiting, ` +
    `${s.immutableTimestampLocks} immutable-timestamp locks; oldest hold ${formatMs(s.oldestHoldMs)}, longest wait ${formatMs(s.longestWaitMs)}\n`
  );
}

function more(cursor: string | undefined): string {
  return cursor === undefined ? "" : `… more: continue with --cursor ${JSON.stringify(cursor)}\n`;
}

/** `leasehold inspect <namespace>`, as a summary line and a table of the chosen view. */
export function formatLocksPage(page: NamespaceLocksResponse): string {
  const head = summaryLine(page.summary);
  if (page.view === "watchers") {
    if (page.watchers.length === 0) return `${head}no waiting as-many-as-possible requests\n`;
    const rows = page.watchers.map((w) => [
      String(w.descriptorCount),
      printable(w.firstDescriptor),
      String(w.max),
      formatMs(w.waitingForMs),
      formatMs(w.deadlineLeftMs),
      printable(w.clientDescription),
    ]);
    return head + formatTable(["DESCRIPTORS", "FIRST", "MAX", "WAITING FOR", "DEADLINE IN", "DESCRIPTION"], rows) + more(page.nextCursor);
  }
  if (page.view === "immutable") {
    if (page.immutableTimestampLocks.length === 0) return `${head}no immutable-timestamp locks\n`;
    const rows = page.immutableTimestampLocks.map((l) => [String(l.startTimestamp), l.fingerprint, formatMs(l.heldForMs), formatMs(l.leaseLeftMs)]);
    return head + formatTable(["START TIMESTAMP", "FINGERPRINT", "HELD FOR", "LEASE LEFT"], rows) + more(page.nextCursor);
  }
  if (page.descriptors.length === 0) return `${head}no descriptor is held or waited for\n`;
  const rows: string[][] = [];
  for (const d of page.descriptors) {
    const name = printable(d.descriptor) + (d.limit === undefined ? "" : ` (limit ${d.limit})`);
    d.holders.forEach((h, i) => {
      rows.push([
        i === 0 ? name : "",
        h.acquiring === true ? "acquiring" : "holder",
        h.mode,
        String(h.fencingToken),
        h.fingerprint ?? "-",
        formatMs(h.heldForMs),
        formatMs(h.leaseLeftMs),
        printable(h.clientDescription),
      ]);
    });
    d.waiters.forEach((w, i) => {
      rows.push([
        d.holders.length === 0 && i === 0 ? name : "",
        `waiter ${i + 1}`,
        w.mode,
        "-",
        "-",
        formatMs(w.waitingForMs),
        formatMs(w.deadlineLeftMs),
        printable(w.clientDescription),
      ]);
    });
    // Pages list at most MAX_LISTED_PER_DESCRIPTOR of each; the counts are always whole.
    if (d.holderCount > d.holders.length) rows.push(["", `+${d.holderCount - d.holders.length} more holders`, "", "", "", "", "", ""]);
    if (d.queueLength > d.waiters.length) rows.push(["", `+${d.queueLength - d.waiters.length} more waiters`, "", "", "", "", "", ""]);
    if (d.watchers > 0) rows.push(["", `+${d.watchers} watching`, "", "", "", "", "", ""]);
  }
  // AGE is held-for for a holder and waiting-for for a waiter; LEFT is lease left or deadline left.
  return head + formatTable(["DESCRIPTOR", "ROLE", "MODE", "FENCE", "FINGERPRINT", "AGE", "LEFT", "DESCRIPTION"], rows) + more(page.nextCursor);
}
