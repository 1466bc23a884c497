import type { ProbeResult } from "@leasehold/server/internal";
import type { SimProcess } from "./sim-clock.js";
import type { Scheduler } from "./scheduler.js";

/**
 * One health probe from process `from` (answering-members.ts, through the `probe` port): it
 * arrives 1 ms later, and is answered only when `listening()` names the member's process then (one
 * that listens and runs) and that process runs it: at once, or when it resumes if it is paused (a
 * crash meanwhile drops it); `answered` hears that moment. The answer arrives 1 ms later, lost if
 * the member's host crashed meanwhile. With no answer within 1,000 ms (the prober's timeout) the
 * probe fails. Partitions do not touch it (the sim's cuts are of the replication and database
 * paths).
 */
export function simProbe(scheduler: Scheduler, from: SimProcess, member: string, listening: () => SimProcess | null, answered: () => void): Promise<ProbeResult> {
  return new Promise<ProbeResult>((resolve) => {
    const cancel = from.setTimer(() => resolve({ answering: false, problem: "no answer in time" }), 1_000);
    scheduler.after(1, "network", `probe ${member}`, () => {
      const probed = listening();
      if (probed === null) return;
      probed.deliver("probe", () => {
        answered();
        scheduler.after(1, "network", "probe answer", () => {
          // Lost with its host only if that crashed before the answer arrived.
          const lostWithHost = probed.hostCrashed;
          from.deliver("probe answer", () => {
            if (lostWithHost) return;
            cancel();
            resolve({ answering: true });
          });
        });
      });
    });
  });
}
