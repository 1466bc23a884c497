/**
 * A pool of loopback source addresses (`127.<a>.<b>.1..count`), handed out round robin. The server's
 * rate limit keys on the client's address, so spreading ordinary traffic over many addresses keeps
 * it far below the limit, while a flood from an address of its own goes over it. On Linux every
 * address of 127/8 is loopback and can be bound without configuration.
 */
export class SourceAddresses {
  private next = 0;

  /**
   * @param prefix the first three octets, for example `"127.0.2"`.
   * @param count how many addresses (1..254).
   */
  constructor(
    private readonly prefix: string,
    readonly count: number,
  ) {
    if (!/^127\.\d{1,3}\.\d{1,3}$/.test(prefix) || count < 1 || count > 254) throw new RangeError(`bad address pool ${prefix} × ${count}`);
  }

  /** The next address of the pool. */
  take(): string {
    const address = `${this.prefix}.${(this.next % this.count) + 1}`;
    this.next++;
    return address;
  }
}
