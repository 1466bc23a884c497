import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "@leasehold/server";
import { sendRaw } from "./support/raw-http.js";
import { postRequest } from "./support/arbitraries/requests.js";
import { expectErrorBody } from "./support/check-answer.js";

/**
 * Found by the generated content-type cases: the media type was trimmed with String#trim, which
 * also strips characters HTTP does not count as whitespace (NBSP, vertical tab, form feed), so
 * `application/json<NBSP>` was served as JSON. HTTP's optional whitespace is only SP and HTAB.
 */
describe("content type: only HTTP whitespace (SP, HTAB) around the media type is ignored", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  // Node's parser itself refuses VT and FF in a header value (400); NBSP reaches the handler.
  it.each([
    ["a trailing no-break space", "application/json\u00a0", 415, "UNSUPPORTED_MEDIA_TYPE"],
    ["a leading no-break space", "\u00a0application/json", 415, "UNSUPPORTED_MEDIA_TYPE"],
    ["a no-break space before the charset", "application/json\u00a0; charset=utf-8", 415, "UNSUPPORTED_MEDIA_TYPE"],
    ["a trailing vertical tab", "application/json\u000b", 400, "INVALID_ARGUMENT"],
    ["a trailing form feed", "application/json\u000c", 400, "INVALID_ARGUMENT"],
  ] as const)("%s is refused and acquires nothing", async (_what, contentType, status, code) => {
    const port = Number(new URL(server.url).port);
    const body = JSON.stringify({ locks: [{ descriptor: "ct", mode: "exclusive" }] });
    const answer = await sendRaw(port, [postRequest("ct", "lock", body, { contentType })]);
    expect(answer.status).toBe(status);
    expectErrorBody(answer, code);
    expect(server.service.snapshot("ct").heldTokens).toBe(0);
  });

  it("still accepts SP and HTAB around the media type and its parameters", async () => {
    const port = Number(new URL(server.url).port);
    const answer = await sendRaw(port, [postRequest("ct", "timestamps", '{"count":1}', { contentType: " \tapplication/json \t; \tcharset=utf-8 \t" })]);
    expect(answer.status).toBe(200);
  });
});
