/**
 * Every lock token in a protocol answer: strings under a `token` key and in a `tokens`, `unlocked`
 * or `refreshed` array, anywhere in a JSON value. Only answers are scanned (requests may carry made-up tokens).
 */
export function collectTokens(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectTokens(item, into);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  for (const [key, child] of Object.entries(value)) {
    if (key === "token" && typeof child === "string") into.add(child);
    else if ((key === "tokens" || key === "unlocked" || key === "refreshed") && Array.isArray(child)) {
      for (const t of child) if (typeof t === "string") into.add(t);
    } else collectTokens(child, into);
  }
}

/** Tokens from an answer body that is JSON or NDJSON (a lock-batch answer). */
export function collectTokensFromBody(body: string, into: Set<string>): void {
  for (const line of body.split("\n")) {
    if (line.trim() === "") continue;
    try {
      collectTokens(JSON.parse(line) as unknown, into);
    } catch {
      // Not JSON (metrics text, an empty answer): nothing to collect.
    }
  }
}

/** Which of `secrets` occur in `text` (each at most once in the answer). */
export function leakedIn(text: string, secrets: Iterable<string>): string[] {
  const found: string[] = [];
  for (const secret of secrets) if (text.includes(secret)) found.push(secret);
  return found;
}
