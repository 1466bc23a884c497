import { Pool } from "undici";

/** A bare JSON-over-HTTP caller for load generation: no retries, no client-side logic. */
export class JsonCaller {
  private readonly pool: Pool;

  constructor(baseUrl: string, connections: number) {
    this.pool = new Pool(baseUrl, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  /** POST a JSON body and parse the JSON answer; throws on a non-2xx status. */
  async post<T>(path: string, body: unknown): Promise<T> {
    const res = await this.pool.request({
      method: "POST",
      path,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.body.json()) as T;
    if (res.statusCode >= 300) throw new Error(`${path} answered ${res.statusCode}: ${JSON.stringify(json)}`);
    return json;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
