/** The decoded query parameters of a request target (`req.url`); none when it has no `?`. */
export function queryOf(url: string | undefined): URLSearchParams {
  const target = url ?? "";
  const q = target.indexOf("?");
  return new URLSearchParams(q < 0 ? "" : target.slice(q + 1));
}
