import { responseValidators, type ClusterLeaderStandby, type HealthCluster } from "@leasehold/protocol";
import { Agent, request } from "undici";

/** What one probe of a member's `GET /v1/health` (and `GET /v1/cluster`) found. */
export interface ProbeResult {
  /** It answered 200 with its own server id (or, from an older server, with none). */
  readonly answering: boolean;
  /** Why not, in a few words: no answer in time, refused, another server id, a status. */
  readonly problem?: string | undefined;
  /** Its part of the cluster's protection, as its health answer gave it (absent: not answering, or an older server). */
  readonly cluster?: HealthCluster | undefined;
  /**
   * The standbys of the shards it leads, as its `GET /v1/cluster` names them, with the lag only a
   * leader measures; by shard, each with the epoch of its entry (absent: it did not answer it).
   */
  readonly standbys?: ReadonlyMap<number, { readonly epoch: number; readonly standby: ClusterLeaderStandby }> | undefined;
}

/** One GET's outcome: the status and parsed JSON body, or why there is none. */
type Fetched = { readonly status: number; readonly body: unknown } | { readonly problem: string };

/** Options of {@link HealthProber}. */
export interface HealthProberOptions {
  /**
   * Longest a probe may take, connection included. Default 1,000 ms: a member that needs longer
   * to answer its health route is not serving anyone well either, and the status page that waits
   * for the probes should stay within a couple of seconds.
   */
  readonly timeoutMs?: number | undefined;
}

/** Health answers are a few hundred bytes; a peer sending more is not a leasehold server. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** A cluster answer is about 200 bytes a shard, and a cluster has at most a few thousand shards. */
const MAX_CLUSTER_BYTES = 4 * 1024 * 1024;

/**
 * Probes other members' `GET /v1/health` and `GET /v1/cluster` (both open without a token) over a connection pool of its
 * own, not the process's global dispatcher: an application that embeds the server may route its
 * own HTTP through a proxy, and members must be asked directly. It remembers, per server id, when
 * each last answered. It never probes by itself: callers decide when (the status page's route,
 * rate-limited by `ClusterMembersView`).
 */
export class HealthProber {
  private readonly timeoutMs: number;
  private readonly agent: Agent;
  /** Server id → `performance.now()` of its last good answer. */
  private readonly answeredAt = new Map<string, number>();

  constructor(options: HealthProberOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 1_000;
    if (!Number.isSafeInteger(this.timeoutMs) || this.timeoutMs < 1) throw new RangeError(`timeoutMs must be a positive integer (got ${this.timeoutMs})`);
    // Keep-alive a little longer than the view's cache: the next look reuses the connection.
    this.agent = new Agent({ connectTimeout: this.timeoutMs, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs, keepAliveTimeout: 4_000, connections: 2 });
  }

  /**
   * Probe the member `serverId` at `url`: its health, and (in parallel) its cluster view for the
   * standbys of the shards it leads; never rejects.
   */
  async probe(serverId: string, url: string): Promise<ProbeResult> {
    let health: URL;
    let cluster: URL;
    try {
      // Relative to the URL as a directory: a URL with a path prefix (behind a proxy) keeps it.
      const base = url.endsWith("/") ? url : `${url}/`;
      health = new URL("v1/health", base);
      // `?lag`: the standby lag of the shards it leads, which only a leader measures.
      cluster = new URL("v1/cluster?lag", base);
    } catch {
      return { answering: false, problem: "its URL is not a valid URL" };
    }
    if (health.protocol !== "http:" && health.protocol !== "https:") return { answering: false, problem: "its URL is not http(s)" };
    const [result, standbys] = await Promise.all([this.ask(health, serverId), this.standbys(cluster, serverId)]);
    if (!result.answering) return result;
    this.answeredAt.set(serverId, performance.now());
    return standbys === undefined ? result : { ...result, standbys };
  }

  /** `performance.now()` of the member's last good answer, or `undefined` when it never gave one. */
  lastAnswered(serverId: string): number | undefined {
    return this.answeredAt.get(serverId);
  }

  /** Forget members no longer listed, so the memory stays bounded by the member table. */
  retain(serverIds: ReadonlySet<string>): void {
    for (const id of this.answeredAt.keys()) if (!serverIds.has(id)) this.answeredAt.delete(id);
  }

  /** Close the pooled connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private async ask(target: URL, serverId: string): Promise<ProbeResult> {
    const got = await this.get(target, MAX_ANSWER_BYTES, "health");
    if ("problem" in got) return { answering: false, problem: got.problem };
    if (got.status !== 200) return { answering: false, problem: `its health route answered ${got.status}` };
    const body = got.body;
    const answeredId = typeof body === "object" && body !== null ? (body as { serverId?: unknown }).serverId : undefined;
    // Another process now listens at the URL (the member died and its port was reused).
    if (typeof answeredId === "string" && answeredId !== serverId) return { answering: false, problem: `another server answers at its URL: ${JSON.stringify(answeredId.slice(0, 100))}` };
    const cluster = responseValidators.health.check(body) ? body.cluster : undefined;
    return cluster === undefined ? { answering: true } : { answering: true, cluster };
  }

  /** The standbys `serverId` names for the shards it leads (those with a lag: only a leader has one); `undefined` when it did not answer. */
  private async standbys(target: URL, serverId: string): Promise<ProbeResult["standbys"]> {
    const got = await this.get(target, MAX_CLUSTER_BYTES, "cluster");
    if ("problem" in got || got.status !== 200 || !responseValidators.cluster.check(got.body) || got.body.serverId !== serverId) return undefined;
    const led = new Map<number, { epoch: number; standby: ClusterLeaderStandby }>();
    for (const l of got.body.leaders) if (l.standby?.lagEntries !== undefined) led.set(l.shard, { epoch: l.epoch, standby: l.standby });
    return led;
  }

  /** GET `target` as JSON, at most `maxBytes` of it; never rejects. */
  private async get(target: URL, maxBytes: number, what: string): Promise<Fetched> {
    try {
      const res = await request(target, { method: "GET", dispatcher: this.agent, signal: AbortSignal.timeout(this.timeoutMs) });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) {
          res.body.destroy();
          return { problem: `its ${what} answer is too large` };
        }
        chunks.push(chunk);
      }
      try {
        return { status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown };
      } catch {
        return res.statusCode === 200 ? { problem: `its ${what} answer is not JSON` } : { status: res.statusCode, body: null };
      }
    } catch (err) {
      return { problem: this.describe(err) };
    }
  }

  private describe(err: unknown): string {
    const code = (err as { code?: unknown }).code;
    const name = (err as { name?: unknown }).name;
    if (name === "TimeoutError" || code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
      return `no answer within ${this.timeoutMs} ms`;
    }
    if (code === "ECONNREFUSED") return "connection refused";
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "its host name does not resolve";
    const text = typeof code === "string" ? code : err instanceof Error ? err.message : String(err);
    return `no answer: ${text}`.slice(0, 200);
  }
}
