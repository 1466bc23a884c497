import type { ShardTerm } from "../shard-term.js";
import { canHandOver, handOverTerm, type HandOverContext } from "./hand-over.js";

/**
 * TEST ONLY (`LEASEHOLD_TEST_BREAK=move-row-before-gate`): a SIGTERM hand-over in the wrong order.
 * Every term with an in-sync standby is handed over (the row moves, the standby serves) while it
 * still serves, and this resolves a leader lease later: the renewer has stopped, so by then each
 * term has ended by its gate closing on time, not synchronously before the move. For the negative
 * control of the hand-over's order. Under SIGTERM the reliability suite saw no check fire with it
 * (docs/reliability.md, section 5b: the listener closes before the runtime stops, and a grant the
 * old term decides after the move waits for an acknowledgement the promoted standby refuses); a
 * balance hand-over, whose listener stays open, is where it should bite. Never used in production.
 */
export async function moveRowsBeforeGate(terms: readonly (ShardTerm | null)[], context: HandOverContext): Promise<void> {
  const live = terms.filter((term): term is ShardTerm => term !== null && canHandOver(term));
  await Promise.all(live.map((term) => handOverTerm(term, context)));
  await new Promise<void>((resolve) => setTimeout(resolve, context.leaderLeaseMs));
}
