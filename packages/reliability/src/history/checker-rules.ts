/**
 * The history checker's rules in Markdown, for the report: what each rule demands and how it is
 * computed. Kept next to the checks so that the two change together.
 */
export const CHECKER_RULES_MARKDOWN = `The history checker (\`packages/reliability/src/history/\`) is a set of pure functions over the
recorded history: grants (holder, descriptor, mode, fencing token, when the request was sent, when
the grant was received, and the guarantee's end), releases (when the release call was made), every
operation each resource received in its order of arrival (holder, token, mode, read or write,
accepted or refused, value), and each resource's final counter. All times come from one monotonic
clock (\`performance.now()\`) in the process that runs the holders and the resources. Each rule is
unit-tested on small hand-made histories that pass and that fail it
(\`packages/reliability/test/mutual-exclusion/check-history.test.ts\`).

- **Lease guarantee of a grant**: from \`grantReceivedAt\` to \`min(guaranteeEndsAt, releasedAt)\`, where
  \`guaranteeEndsAt = requestSentAt + lease.validForMs\` (measured from before the request was sent,
  as the protocol says). A grant whose request waited in the server's queue for more than half of
  \`validForMs\` is renewed at once by the holder with \`LockClient.refresh\`; when the refresh answers
  the token, the guarantee runs to that refresh's send time plus \`validForMs\` (the token was held
  without a break since the grant: a lapsed token is never revived). Empty when it ran out before
  the grant arrived.
- **(a) No two holders' lease guarantees overlap in conflicting modes** (exclusive against anything)
  on one descriptor. Per descriptor, the guarantees are swept in order of start, keeping the latest
  end among all guarantees so far and among exclusive ones: an exclusive guarantee starting before
  the first, or a shared one before the second, overlaps a conflicting one. Touching is not overlap.
  One violation per guarantee that starts inside a conflicting one.
- **(b) Fencing tokens strictly increase in grant order** per descriptor, and are unique. Grant A is
  before grant B when A was received before B's request was sent, or when A and B conflict, both
  arrived inside their guarantees, and A was received first (the server grants B only after A was
  released, which its holder does after receiving A, or lapsed, which is after A's guarantee; so
  for such pairs the order of receipt is the server's order of grant). Computed by one sweep in
  order of receipt and one merge of receipt against send times. One violation per grant whose token
  is not above every grant before it, or repeats another's.
- **(c) Every operation of a stale holder was refused, and only those.** Per resource, operations are
  replayed in order of arrival, keeping the highest token of every operation before: an operation
  with a lower token is stale (a newer holder has already used the resource) and must have been
  refused; every other operation must have been accepted (so a resource that refused everything
  would fail here rather than pass (d) trivially). One violation per misjudged operation.
- **(d) No acknowledged write is lost.** Every write is one increment (read \`v\` and write \`v + 1\`
  under an exclusive lock), so each descriptor's final counter must equal the writes its resource
  accepted. One violation per increment lost or gained.
- **Well-formedness**: every operation comes from a recorded grant with the same descriptor, token
  and mode, after the grant was received and before its release, and writes only under an exclusive
  lock; every release names one recorded grant, once. Violations here count like the others.
`;
