import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/start-server.js";
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

  it.each([
    ["a trailing no-break space", "application/json\u00a0"],
    ["a leading no-break space", "\u00a0application/json"],
    ["a trailing vertical tab", "application/json\u000b"],
    ["a trailing form feed", "application/json\u000c"],
    ["a no-break space before the charset", "application/json\u00a0; charset=utf-8"],
  ])("%s is refused with 415 and acquires nothing", async (_what, contentType) => {
    const port = Number(new URL(server.url).port);
    const body = JSON.stringify({ locks: [{ descriptor: "ct", mode: "exclusive" }] });
    const answer = await sendRaw(port, [postRequest("ct", "lock", body, { contentType })]);
    expect(answer.status).toBe(415);
    expectErrorBody(answer, "UNSUPPORTED_MEDIA_TYPE");
    expect(server.service.snapshot("ct").heldTokens).toBe(0);
  });

  it("still accepts SP and HTAB around the media type and its parameters", async () => {
    const port = Number(new URL(server.url).port);
    const answer = await sendRaw(port, [postRequest("ct", "timestamps", '{"count":1}', { contentType: " \tapplication/json \t; \tcharset=utf-8 \t" })]);
    expect(answer.status).toBe(200);
  });
});
