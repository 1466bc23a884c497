import { FencedCounter } from "./fenced-counter.js";

/**
 * The negative control's counter: it records the fencing token of every operation but accepts
 * everything, like a store that trusts the lock alone. A holder that read, paused past its lease
 * and then writes overwrites whatever newer holders wrote meanwhile, so increments get lost.
 */
export class UnfencedCounter extends FencedCounter {
  /** Every operation is let through, whatever its token. */
  protected override admits(): boolean {
    return true;
  }
}
