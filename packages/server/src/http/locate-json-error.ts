/** Where a JSON text stops being valid JSON, and what was expected there. */
export interface JsonErrorLocation {
  /** Offset in UTF-16 code units from the start of the text. */
  readonly position: number;
  /** What was wrong, in words: `expected ',' or ']' but found '}'`. */
  readonly problem: string;
}

class Stop extends Error {
  constructor(readonly location: JsonErrorLocation) {
    super(location.problem);
  }
}

/**
 * Find the first syntax error of a JSON text with a small recursive-descent scanner. V8's own
 * messages do not always give a position (Node 20: `Unexpected token '}', "..." is not valid JSON`),
 * and a position is what lets a person find the mistake. Only ever run after `JSON.parse` failed,
 * so it favours clarity over speed. Returns undefined if the text is in fact valid.
 */
export function locateJsonError(text: string): JsonErrorLocation | undefined {
  let i = 0;
  const shown = (): string => (i >= text.length ? "the end of the body" : JSON.stringify(text[i]));
  const fail = (expected: string): never => {
    throw new Stop({ position: i, problem: `expected ${expected} but found ${shown()}` });
  };
  const ws = (): void => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const literal = (word: string): void => {
    for (const c of word) {
      if (text[i] !== c) fail(`${JSON.stringify(word)}`);
      i++;
    }
  };
  const string = (): void => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail("a closing '\"'");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail("an escaped control character (\\n, \\t, \\u00XX)");
      if (c === 0x5c) {
        i++;
        const e = text[i];
        if (e === "u") {
          i++;
          for (let k = 0; k < 4; k++, i++) if (!/[0-9a-fA-F]/.test(text[i] ?? "")) fail("4 hex digits after \\u");
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail("a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
      } else i++;
    }
  };
  const number = (): void => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    const matched = match?.[0] ?? "";
    if (matched === "" || matched === "-") fail("a value");
    i += matched.length;
    if (/[0-9.eE+-]/.test(text[i] ?? "")) fail("the end of the number");
  };
  const value = (expected = "a value"): void => {
    ws();
    const c = text[i];
    if (c === "{") object();
    else if (c === "[") array();
    else if (c === '"') string();
    else if (c === "t") literal("true");
    else if (c === "f") literal("false");
    else if (c === "n") literal("null");
    else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) number();
    else fail(expected);
    ws();
  };
  const object = (): void => {
    i++;
    ws();
    if (text[i] === "}") return void i++;
    for (;;) {
      ws();
      if (text[i] !== '"') fail("a field name in double quotes");
      string();
      ws();
      if (text[i] !== ":") fail("':' after the field name");
      i++;
      value();
      if (text[i] === ",") i++;
      else if (text[i] === "}") return void i++;
      else fail("',' or '}'");
    }
  };
  const array = (): void => {
    i++;
    ws();
    if (text[i] === "]") return void i++;
    for (;;) {
      value("a value or ']'");
      if (text[i] === ",") i++;
      else if (text[i] === "]") return void i++;
      else fail("',' or ']'");
    }
  };
  try {
    value();
    if (i < text.length) fail("the end of the body");
    return undefined;
  } catch (err) {
    if (err instanceof Stop) return err.location;
    // Nesting deep enough to exhaust the stack: give up locating rather than fail the request.
    if (err instanceof RangeError) return undefined;
    throw err;
  }
}
