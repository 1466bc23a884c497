import { rawRequest, type RawResponse } from "../../support/raw-request.js";

/** POST a JSON body to an operation of a namespace, on a fresh connection. */
export function postJson(url: string, namespace: string, operation: string, body: unknown): Promise<RawResponse> {
  return rawRequest(url, `/v1/namespaces/${namespace}/${operation}`, {
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
}
