/**
 * The "Test breaks" section of docs/reliability.md: each `LEASEHOLD_TEST_BREAK` name (a safety rule
 * switched off, packages/server/src/cluster/test-breaks.ts) and the test that fails without the
 * rule, so removing a rule can be seen to matter. Static text: it does not come from a run.
 */
export const TEST_BREAKS_MARKDOWN = [
  "## Test breaks",
  "",
  "Each name switches one safety rule off on a server started with `--unsafe-test-knobs --log-level debug`",
  "(`LEASEHOLD_TEST_BREAK`, comma-separated; never on a real cluster). The test named fails with it (its negative",
  "control asserts exactly that), so a rule whose removal no test notices would show here.",
  "",
  "| break | the rule it removes | the test that catches it |",
  "| --- | --- | --- |",
  "| `hand-over-stale-ack` | a hand-over (SIGTERM or balance) completes only on the taker's acknowledgement of the hand-over entry, appended after the gate closed (issue 29 item 3) | `packages/server/test/cluster/replication/hand-over-ack.test.ts` (a dead standby \"acknowledges\" at once) and `shard-mover-balance.test.ts` (the row moves to a dead taker); with `balance-to-silent-member` too, `packages/reliability/test/cluster/cluster-repeated-crash.test.ts`'s control (soak mode) loses held locks |",
  "| `balance-to-silent-member` | a member is a balance target, and counts in the shares, only while it answers: a health probe answered within a leader lease, its own terms renewing (issue 29 item 3) | `packages/server/test/cluster/replication/shard-mover-balance.test.ts` (a silent member is chosen as the taker); `packages/server/test/cluster/plan-shards.test.ts` and `answering-members.test.ts` check the shares and the probes themselves; `cluster-repeated-crash.test.ts` asserts no move towards a dead server |",
  "| `balance-abandon-release` | a balance move never releases a shard: without the taker's acknowledgement its gate reopens and the term serves on with its table (issue 29 item 3) | `packages/server/test/cluster/replication/shard-mover-balance.test.ts` (the shard is released, table and all) |",
  "| `release-synced-orphan` | a row of this process's that it no longer leads (its gate closed while its statements stalled) and that names an in-sync standby is left to expire, so the standby takes the shard over with its table, instead of being released empty (found by the 20-kill run of `cluster-repeated-crash.test.ts`: one server's statements stalled for a second and 5 held locks were lost) | `packages/server/test/cluster/plan-shards.test.ts` (\"leaves a row it lost that names an in-sync standby to that standby\"); with `release-handing-over` too, the control of `packages/server/test/cluster/replication/cluster-hand-over-pass.test.ts` (each rule alone keeps a row being handed over) |",
  "",
];
