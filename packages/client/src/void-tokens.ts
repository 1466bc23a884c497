import type { CallOptions, LockService, UnlockRequest, UnlockResponse } from "@leasehold/protocol";

/** Most void tokens remembered so that an unlock does not send them (the newest are kept). */
export const MAX_VOIDED = 10_000;

/**
 * Tokens of leader terms known to have ended (lost as `leader-changed`): void on every server, so
 * an unlock never carries them. Bounded ({@link MAX_VOIDED}, oldest forgotten first), and each is
 * forgotten once an unlock has left it out.
 */
export class VoidTokens {
  readonly #tokens = new Set<string>();

  /** Remember `token` as void. */
  add(token: string): void {
    if (this.#tokens.size >= MAX_VOIDED) this.#tokens.delete(this.#tokens.values().next().value!);
    this.#tokens.add(token);
  }

  /** `unlock` through `service` of the tokens of `body` that are not void (none: answered at once). */
  unlock(service: Pick<LockService, "unlock">, namespace: string, body: UnlockRequest, options: CallOptions | undefined): Promise<UnlockResponse> {
    if (this.#tokens.size === 0) return service.unlock(namespace, body, options);
    const tokens = body.tokens.filter((token) => !this.#tokens.delete(token));
    if (tokens.length === 0) return Promise.resolve({ unlocked: [] });
    return service.unlock(namespace, { tokens }, options);
  }
}
