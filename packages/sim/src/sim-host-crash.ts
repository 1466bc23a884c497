import type { AimHost } from "./sim-aimed.js";

/**
 * `pnpm sim --host-crashes`: wait (up to 5 s) for a leader to answer a lock request that waited in
 * a queue with a grant, and host-crash it 0–3 ms after the answer left (the answer takes 0.3 ms;
 * the grant's replication entry, sent in the same turn, 0.2–1.5 ms): the answer may arrive while
 * the entry is lost with the host. Restarted `lasts` ms later. One failure, as a crash.
 */
export async function hostCrashAfterGrant(host: AimHost, lasts: number): Promise<void> {
  const { world, plan } = host;
  const delay = plan.float() * 3;
  const leader = await new Promise<string | null>((resolve) => {
    let done = false;
    const end = (server: string | null): void => {
      if (done) return;
      done = true;
      world.onAnswer = null;
      cancel();
      resolve(server);
    };
    const cancel = world.scheduler.after(5_000, "world", "host crash: no queued grant yet", () => end(null));
    world.onAnswer = (server, label, value, queued) => {
      if (queued && label.startsWith("lock") && typeof value === "object" && value !== null && (value as { status?: unknown }).status === "acquired") end(server);
    };
  });
  if (leader === null) {
    host.log("host crash: no queued lock request granted within 5 s");
    return;
  }
  await host.sleep(delay, `host crash ${leader}`);
  const heal = host.failure("crash", `host crash of ${leader} ${delay.toFixed(2)} ms after it answered a queued lock request with a grant, restarted ${lasts} ms later`);
  world.hostCrash(leader);
  await host.sleep(lasts, `restart ${leader}`);
  world.start(leader);
  heal();
}
