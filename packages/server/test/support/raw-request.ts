import { request as httpRequest, type IncomingHttpHeaders, type ClientRequest } from "node:http";

/** What came back from a {@link rawRequest}. */
export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

/** Options of {@link rawRequest}. */
export interface RawRequestOptions {
  readonly method?: string | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Sent with a content-length (unless `chunks` is given). */
  readonly body?: string | Buffer | undefined;
  /** Sent as separate writes with `transfer-encoding: chunked`. */
  readonly chunks?: readonly (string | Buffer)[] | undefined;
  /** Receives the request object as soon as it exists, to destroy it mid-flight. */
  readonly onRequest?: ((req: ClientRequest) => void) | undefined;
}

/**
 * One HTTP request over node:http with full control of method, headers and framing, on a fresh
 * connection (no keep-alive agent), so tests can send what no well-behaved client would. Write
 * errors after the answer arrived (the server closed a connection it refused a body on) are ignored.
 */
export function rawRequest(url: string, path: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(path, url);
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined && options.chunks === undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
    if (options.chunks !== undefined) headers["transfer-encoding"] = "chunked";
    const req = httpRequest(target, { method: options.method ?? "POST", headers, agent: false });
    options.onRequest?.(req);
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(text) as unknown;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    if (options.chunks !== undefined) {
      for (const chunk of options.chunks) req.write(chunk);
      req.end();
    } else req.end(options.body);
  });
}

/** The `{ error: { code, message } }` of an error answer (throws when the body is not one). */
export function errorOf(res: RawResponse): { code: string; message: string; details: Record<string, unknown> } {
  const error = (res.json as { error?: { code: string; message: string; details: Record<string, unknown> } } | undefined)?.error;
  if (!error) throw new Error(`not an error body (status ${res.status}): ${res.text.slice(0, 200)}`);
  return error;
}
