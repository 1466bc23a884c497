/** A server's `GET /metrics` answer (Prometheus text), fetched once and read series by series. */
export interface MetricsText {
  /** The value of the series whose line starts with `series` and a space (name and labels exactly as written); `undefined` when there is none. */
  value(series: string): number | undefined;
}

/** Fetch `url`'s `GET /metrics` once, to read several series of the same moment from it. */
export async function fetchMetrics(url: string): Promise<MetricsText> {
  const lines = (await (await fetch(`${url}/metrics`)).text()).split("\n");
  return {
    value(series) {
      const line = lines.find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
    },
  };
}
