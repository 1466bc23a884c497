import { expect } from "vitest";
import type { CliServer } from "../../../src/cli-server.js";
import type { Secrets } from "./credentials.js";
import { encode, exchange, jsonOf, type Answer, type ExchangeOptions } from "./exchange.js";
import { sample } from "./metrics-text.js";
import type { SecurityTally } from "./security-tally.js";
import { SourceAddresses } from "./source-addresses.js";
import { collectTokensFromBody } from "./token-scan.js";

/**
 * What every test of the security section shares: the CLI server, the run's secrets, the tally,
 * and the lock tokens clients received (scanned for in the logs and metrics at the end). Its own
 * requests (seeding, scrapes, cleanup) go out from a pool of 200 loopback addresses, far below the
 * rate limit, and are counted as operations of the check that sent them.
 */
export class Harness {
  /** Every lock token any client of the run received. */
  readonly received = new Set<string>();
  private readonly pool = new SourceAddresses("127.0.7", 200);

  constructor(
    readonly server: CliServer,
    readonly secrets: Secrets,
    readonly tally: SecurityTally,
  ) {}

  /** A source address for one ordinary request. */
  address(): string {
    return this.pool.take();
  }

  /** Send raw bytes from a pool address, and collect any lock token in the answer. */
  async send(check: string, request: Buffer, options: ExchangeOptions = {}): Promise<Answer> {
    const answer = await exchange(this.server.port, request, { localAddress: this.address(), ...options });
    this.collect(answer);
    return answer;
  }

  /** Collect the lock tokens of an answer (JSON or NDJSON). */
  collect(answer: Answer): void {
    collectTokensFromBody(answer.body.toString("utf8"), this.received);
  }

  /** POST a JSON body with `authorization: Bearer <token>`; counted as an extra request of `check`. */
  async post(check: string, namespace: string, op: string, body: unknown, token: string, options: ExchangeOptions = {}): Promise<Answer> {
    this.tally.extra(check, 1);
    const request = encode({ method: "POST", target: `/v1/namespaces/${namespace}/${op}`, headers: [["content-type", "application/json"], ["authorization", `Bearer ${token}`]], body: JSON.stringify(body) });
    return this.send(check, request, options);
  }

  /** Take an exclusive lock with the admin token (acquired at once, or the test fails) and return its token. */
  async take(check: string, namespace: string, descriptor: string, token = this.secrets.admin): Promise<string> {
    const answer = await this.post(check, namespace, "lock", { locks: [{ descriptor, mode: "exclusive" }] }, token);
    const json = jsonOf(answer) as { status?: string; token?: string } | undefined;
    expect(answer.status, answer.body.toString("utf8")).toBe(200);
    expect(json?.status).toBe("acquired");
    return json?.token ?? "";
  }

  /** `GET /metrics` with the admin token; the Prometheus text. */
  async scrape(check: string): Promise<string> {
    this.tally.extra(check, 1);
    const answer = await this.send(check, encode({ method: "GET", target: "/metrics", headers: [["authorization", `Bearer ${this.secrets.admin}`]] }));
    expect(answer.status).toBe(200);
    return answer.body.toString("utf8");
  }

  /** Poll `/metrics` until sample `name` equals `value` (fails after `timeoutMs`). */
  async waitForSample(check: string, name: string, value: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let seen = Number.NaN;
    while (Date.now() < deadline) {
      seen = sample(await this.scrape(check), name);
      if (seen === value) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`${name} stayed ${seen}, not ${value}, for ${timeoutMs} ms`);
  }
}
