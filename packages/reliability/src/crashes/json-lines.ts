import type { Readable } from "node:stream";

/**
 * Call `onLine` with every newline-terminated line of `stream` parsed as JSON. Lines that are not
 * JSON objects (a stray `console.log`, a stack trace) go to `onOther`, so a child's noise never
 * throws inside a stream handler.
 */
export function onJsonLines(
  stream: Readable,
  onLine: (value: Record<string, unknown>) => void,
  onOther: (line: string) => void = () => undefined,
): void {
  let buffered = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffered += chunk;
    let end = buffered.indexOf("\n");
    while (end >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      end = buffered.indexOf("\n");
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        onOther(line);
        continue;
      }
      if (typeof value === "object" && value !== null && !Array.isArray(value)) onLine(value as Record<string, unknown>);
      else onOther(line);
    }
  });
}
