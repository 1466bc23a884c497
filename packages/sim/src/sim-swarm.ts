import type { NetworkOdds } from "./sim-network.js";
import { SimRandom } from "./sim-random.js";

/** The odds of the small misfortunes a run draws from, per message or call. */
export interface SimOdds extends NetworkOdds {
  /** A server's answer to a client call is lost on the way (the client sees a reset and re-sends). */
  readonly clientAnswerLost: number;
}

/** The odds every run uses unless `--swarm` draws others: the ones the recorded seeds and traces were made with. */
export const DEFAULT_ODDS: SimOdds = { clientAnswerLost: 0.02, answerLost: 0.01, notifyTwice: 0.05, notifyLost: 0.05 };

/** The stream swarm draws come from: its own, from the seed, so the default run's streams are untouched. */
const SWARM_STREAM = 0x5357_524d;

/**
 * Swarm testing (`pnpm sim --swarm`): each seed draws its own odds, most of them the defaults and
 * some several times higher, so that the rare combinations a rule guards against (two or three lost
 * answers in a row, a lost NOTIFY beside a lost read, a re-send after a lost grant) come up in some
 * seeds within a budget of 1,000, not once in tens of thousands. The odds stay within what the
 * one-failure model treats as ordinary trouble (statements time out, NOTIFYs go missing, connections
 * reset), never a failure: every promise is still checked in full. The draws come from a stream of
 * their own, so a seed without `--swarm` runs exactly as before.
 */
export function swarmOdds(seed: number): SimOdds {
  const r = new SimRandom(seed, SWARM_STREAM);
  return {
    clientAnswerLost: r.pick([0.02, 0.02, 0.06, 0.12]),
    answerLost: r.pick([0.01, 0.01, 0.03, 0.06]),
    notifyTwice: r.pick([0.05, 0.05, 0.3]),
    notifyLost: r.pick([0.05, 0.05, 0.3, 0.6]),
  };
}

/** The odds, and the share of clients re-sending the whole wait when there are any, as one line of a seed's report. */
export function describeOdds(odds: SimOdds, fullWaitResends = 0): string {
  const line = `odds: client answers lost ${odds.clientAnswerLost}, statement answers lost ${odds.answerLost}, NOTIFY lost ${odds.notifyLost}, twice ${odds.notifyTwice}`;
  return fullWaitResends > 0 ? `${line}; clients re-sending the whole wait ${fullWaitResends}` : line;
}

/**
 * The share of clients that re-send a waiting request with its whole wait again under
 * `--full-wait-resends` (two of each five): the others keep leasehold's client's way, so both kinds
 * queue on the same descriptors.
 */
export const FULL_WAIT_RESENDS_SHARE = 0.4;
