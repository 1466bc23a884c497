// Two small SVG charts drawn from the per-second history of GET /v1/events: no library.
const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 120;
const PAD = { left: 40, right: 6, top: 8, bottom: 16 };

function svg(tag, attrs = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

function frame(max, unit, seconds) {
  const root = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: "none", role: "img" });
  const y0 = HEIGHT - PAD.bottom;
  root.append(svg("line", { class: "axis", x1: PAD.left, x2: WIDTH - PAD.right, y1: y0, y2: y0 }));
  const top = svg("text", { x: 2, y: PAD.top + 8 });
  top.textContent = `${niceNumber(max)}${unit}`;
  const zero = svg("text", { x: 2, y: y0 });
  zero.textContent = `0${unit}`;
  const left = svg("text", { x: PAD.left, y: HEIGHT - 3 });
  left.textContent = `-${seconds}s`;
  const right = svg("text", { x: WIDTH - PAD.right - 22, y: HEIGHT - 3 });
  right.textContent = "now";
  root.append(top, zero, left, right);
  return root;
}

function niceNumber(n) {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 10000 ? 0 : 1)}k` : String(Math.round(n));
}

function scale(seconds, max) {
  const innerW = WIDTH - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const step = innerW / Math.max(1, seconds.length);
  return {
    step,
    x: (i) => PAD.left + i * step,
    y: (v) => HEIGHT - PAD.bottom - (max === 0 ? 0 : (v / max) * innerH),
  };
}

/** Bars of grants per second. */
export function drawGrants(container, seconds) {
  const max = Math.max(1, ...seconds.map((s) => s.grants));
  const root = frame(max, "/s", seconds.length);
  const { step, x, y } = scale(seconds, max);
  seconds.forEach((s, i) => {
    if (s.grants === 0) return;
    const top = y(s.grants);
    const bar = svg("rect", { class: "bar", x: x(i), y: top, width: Math.max(1, step - 1), height: HEIGHT - PAD.bottom - top });
    const title = svg("title");
    title.textContent = `${new Date(s.at * 1000).toLocaleTimeString()}: ${s.grants} grants`;
    bar.append(title);
    root.append(bar);
  });
  container.replaceChildren(root);
  container.dataset.total = String(seconds.reduce((sum, s) => sum + s.grants, 0));
}

/** Lines of the p50, p99 and max wait of the requests granted after queueing, per second. */
export function drawWaits(container, seconds) {
  const max = Math.max(1, ...seconds.map((s) => s.waits?.maxMs ?? 0));
  const root = frame(max, "ms", seconds.length);
  const { step, x, y } = scale(seconds, max);
  for (const key of ["maxMs", "p99Ms", "p50Ms"]) {
    const points = [];
    seconds.forEach((s, i) => {
      if (s.waits !== undefined) points.push(`${x(i) + step / 2},${y(s.waits[key])}`);
    });
    if (points.length === 1) points.push(points[0]);
    if (points.length > 0) root.append(svg("polyline", { class: key.replace("Ms", ""), points: points.join(" ") }));
  }
  container.replaceChildren(root);
  container.dataset.waited = String(seconds.reduce((sum, s) => sum + (s.waits?.count ?? 0), 0));
}
