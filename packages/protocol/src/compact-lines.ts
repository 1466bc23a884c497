import { TypeCompiler } from "@sinclair/typebox/compiler";
import { LeaseholdError } from "./errors.js";
import * as S from "./schemas.js";
import type { Lease, LockBatchGrantLine, LockBatchLine, LockRequest } from "./types.js";
import { responseValidators } from "./validation.js";

const leaseLine = TypeCompiler.Compile(S.LockBatchLeaseLineSchema);
const grantLine = TypeCompiler.Compile(S.LockBatchGrantLineSchema);

/**
 * The fencing tokens of a grant that can be written as a compact grant line: every lock the entry
 * asked for was acquired, in the order it asked for them. `undefined` otherwise (a partial grant
 * of `as-many-as-possible`, or an entry that is not a well-formed request), which is then written
 * as a full line.
 */
function fencingTokensInRequestOrder(acquired: LockBatchGrantSource["acquired"], request: unknown): number[] | undefined {
  const locks = typeof request === "object" && request !== null ? (request as { locks?: unknown }).locks : undefined;
  if (!Array.isArray(locks) || locks.length !== acquired.length || acquired.length === 0) return undefined;
  const fencing = new Array<number>(acquired.length);
  for (let i = 0; i < acquired.length; i++) {
    const spec = locks[i] as { descriptor?: unknown; mode?: unknown } | null;
    const got = acquired[i]!;
    if (spec === null || spec.descriptor !== got.descriptor || spec.mode !== got.mode) return undefined;
    fencing[i] = got.fencingToken;
  }
  return fencing;
}

type LockBatchGrantSource = Extract<Extract<LockBatchLine, { result: unknown }>["result"], { status: "acquired" }>;

/**
 * Writes the lines of one `lock-batch` answer for a client that asked for `compact: true`. A grant
 * of every lock an entry asked for becomes `{"index","token","fencingTokens"}`, preceded by a
 * `{"lease"}` line whenever its lease differs from the last one written (so once per answer in
 * practice: the lease is the server's leader id and lease length). Every other line (timeouts,
 * errors, partial grants) is written in full, as without `compact`. One writer per answer: the
 * lease line state belongs to the answer's stream.
 */
export class CompactLineWriter {
  #leaderId: string | undefined;
  #validForMs: number | undefined;

  /** The text for `line` (one or two lines, each ended by `\n`); `request` is the entry the line answers. */
  text(line: LockBatchLine, request: unknown): string {
    if (!("result" in line) || line.result.status !== "acquired") return `${JSON.stringify(line)}\n`;
    const { token, lease, acquired } = line.result;
    const fencing = fencingTokensInRequestOrder(acquired, request);
    if (fencing === undefined) return `${JSON.stringify(line)}\n`;
    let text = "";
    if (lease.leaderId !== this.#leaderId || lease.validForMs !== this.#validForMs) {
      this.#leaderId = lease.leaderId;
      this.#validForMs = lease.validForMs;
      text = `{"lease":${JSON.stringify({ leaderId: lease.leaderId, validForMs: lease.validForMs })}}\n`;
    }
    return `${text}{"index":${line.index},"token":${JSON.stringify(token)},"fencingTokens":[${fencing.join(",")}]}\n`;
  }
}

const bad = (message: string, line: unknown): LeaseholdError =>
  new LeaseholdError("BAD_RESPONSE", `lock-batch: ${message}`, { body: JSON.stringify(line).slice(0, 200) });

/**
 * Reads the parsed lines of one `lock-batch` answer, full or compact, back into full lines: a
 * grant line becomes exactly the `lock` answer a full line would have carried (status, token, the
 * last lease line's lease, and the entry's locks with their fencing tokens). One reader per answer.
 * Anything that is not a protocol line, a grant line before any lease line, a grant line for an
 * entry that was not sent, or with a fencing token count other than the entry's lock count is
 * `BAD_RESPONSE`.
 */
export class CompactLineReader {
  readonly #requests: readonly LockRequest[];
  #lease: Lease | undefined;

  /** @param requests - the batch's entries, as sent: grant lines are completed from them. */
  constructor(requests: readonly LockRequest[]) {
    this.#requests = requests;
  }

  /** The full line `parsed` stands for, or `undefined` for a lease line (it answers no entry). */
  read(parsed: unknown): LockBatchLine | undefined {
    if (typeof parsed === "object" && parsed !== null && "token" in parsed) return this.#grant(parsed);
    if (responseValidators["lock-batch"].check(parsed)) return parsed;
    if (leaseLine.Check(parsed)) {
      // Shared by every grant it covers, so frozen: no caller can change another's lease.
      this.#lease = Object.freeze({ leaderId: parsed.lease.leaderId, validForMs: parsed.lease.validForMs });
      return undefined;
    }
    throw bad("a line of the answer does not match the protocol", parsed);
  }

  #grant(parsed: object): LockBatchLine {
    if (!grantLine.Check(parsed)) throw bad("a line of the answer does not match the protocol", parsed);
    const line: LockBatchGrantLine = parsed;
    const lease = this.#lease;
    if (lease === undefined) throw bad("a grant line came before any lease line", line);
    const request = this.#requests[line.index];
    if (request === undefined) throw bad(`a grant line answers entry ${line.index}, which was not sent`, line);
    const { locks } = request;
    if (line.fencingTokens.length !== locks.length) {
      throw bad(`a grant line has ${line.fencingTokens.length} fencing tokens for an entry of ${locks.length} locks`, line);
    }
    const acquired = new Array<{ descriptor: string; mode: LockRequest["locks"][number]["mode"]; fencingToken: number }>(locks.length);
    for (let i = 0; i < locks.length; i++) {
      acquired[i] = { descriptor: locks[i]!.descriptor, mode: locks[i]!.mode, fencingToken: line.fencingTokens[i]! };
    }
    return { index: line.index, result: { status: "acquired", token: line.token, lease, acquired } };
  }
}
