import { describe, expect, it } from "vitest";
import { locateJsonError } from "../../src/http/locate-json-error.js";

describe("locateJsonError", () => {
  it.each([
    ['{"locks": [}', 11, "a value or ']'"],
    ['{"locks": [1 2]}', 13, "',' or ']'"],
    ['{"a":1,}', 7, "field name"],
    ['{"a" 1}', 5, "':'"],
    ["", 0, "a value"],
    ['{"a": [1, 2', 11, "the end of the body"],
    ['{"a": tru}', 9, '"true"'],
    ['{"a": 01}', 7, "the end of the number"],
    ['{"a": "x\\q"}', 9, "valid escape"],
    ['{"a": "\\u12G4"}', 11, "hex"],
    ['{"a": "tab\there"}', 10, "control character"],
    ["{} {}", 3, "the end of the body"],
    ["{'a': 1}", 1, "double quotes"],
    ["-", 0, "a value"],
  ])("%j fails at %i (%s)", (text, position, words) => {
    const found = locateJsonError(text);
    expect(found?.position).toBe(position);
    expect(found?.problem).toContain(words);
  });

  it.each(['{"a":[1,-2.5e3,true,false,null,"\\u00e9\\n"],"b":{}}', " [ ] ", '"x"', "0"])("accepts valid JSON %j", (text) => {
    expect(() => JSON.parse(text) as unknown).not.toThrow();
    expect(locateJsonError(text)).toBeUndefined();
  });
});
