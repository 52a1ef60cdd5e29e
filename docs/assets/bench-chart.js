/* Hover (or tap) on a sample chart drawn by benchsite/views/chart.py: a tooltip with the nearest dot's
   variant, run, sample index and time. An enhancement only: the table beside each chart holds
   the numbers for keyboard and no-script readers.

   Each panel is an <svg class="bench-panel" data-axis="log|lin low high top bottom">; its dots
   are <path data-run d="M x y h0 m dx dy h0 ..."> inside <g data-variant>, one zero-length
   segment per sample in sample order (data-samples lists the indices when they are not 0, 1, 2...).
   The time is read back from the dot's height, so it is as exact as the drawing (about 0.1 %). */
(() => {
  "use strict";
  const UNITS = [[1, "s"], [1e-3, "ms"], [1e-6, "µs"], [1e-9, "ns"]];
  const NEAR = 14; // user units: farther than this from every dot shows nothing
  const SEGMENT = /([Mm])(-?\d+(?:\.\d+)?) ?(-?\d+(?:\.\d+)?)h0/g;
  const decoded = new WeakMap();
  let tip = null;

  // As benchsite/fmt.time_one: the largest unit that reads at least 1, three significant figures.
  function time(seconds) {
    const [scale, unit] = UNITS.find(([s]) => Math.abs(seconds) >= s) || UNITS[UNITS.length - 1];
    const v = seconds / scale;
    const decimals = v === 0 ? 0 : Math.max(0, 2 - Math.floor(Math.log10(Math.abs(v))));
    return `${v.toFixed(decimals)} ${unit}`;
  }

  function dots(svg) {
    if (decoded.has(svg)) return decoded.get(svg);
    const [kind, low, high, top, bottom] = svg.dataset.axis.split(" ");
    const lo = Number(low), hi = Number(high), t = Number(top), b = Number(bottom);
    const value = kind === "log"
      ? (y) => 10 ** (Math.log10(lo) + (b - y) / (b - t) * (Math.log10(hi) - Math.log10(lo)))
      : (y) => lo + (b - y) / (b - t) * (hi - lo);
    const out = [];
    for (const path of svg.querySelectorAll("path[data-run]")) {
      const variant = path.parentNode.dataset.variant || "";
      const samples = path.dataset.samples ? path.dataset.samples.split(" ") : null;
      let x = 0, y = 0, i = 0;
      for (const m of path.getAttribute("d").matchAll(SEGMENT)) {
        const dx = Number(m[2]), dy = Number(m[3]);
        [x, y] = m[1] === "M" ? [dx, dy] : [x + dx, y + dy];
        out.push({x, y, variant, run: path.dataset.run, sample: samples ? samples[i] : String(i),
                  colour: path.getAttribute("stroke")});
        i += 1;
      }
    }
    const found = {dots: out, value};
    decoded.set(svg, found);
    return found;
  }

  function hide() {
    if (tip) tip.hidden = true;
    for (const ring of document.querySelectorAll(".bench-hit")) ring.remove();
  }

  function show(svg, dot, value, event) {
    if (!tip) {
      tip = document.createElement("div");
      tip.className = "bench-tip";
      tip.setAttribute("role", "status");
      document.body.appendChild(tip);
    }
    tip.textContent = `${dot.variant} · run ${dot.run} · sample ${dot.sample} · ${time(value(dot.y))}`;
    tip.hidden = false;
    const pad = 12, w = tip.offsetWidth, h = tip.offsetHeight;
    const left = Math.min(event.clientX + pad, window.innerWidth - w - 4);
    const top = event.clientY + pad + h > window.innerHeight ? event.clientY - pad - h : event.clientY + pad;
    tip.style.left = `${Math.max(4, left)}px`;
    tip.style.top = `${Math.max(4, top)}px`;
    for (const ring of document.querySelectorAll(".bench-hit")) ring.remove();
    const ring = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    ring.setAttribute("class", "bench-hit");
    ring.setAttribute("cx", dot.x);
    ring.setAttribute("cy", dot.y);
    ring.setAttribute("r", "4");
    svg.appendChild(ring);
  }

  function onPointer(event) {
    const svg = event.target instanceof Element ? event.target.closest("svg.bench-panel") : null;
    if (!svg || !svg.dataset.axis) return hide();
    const ctm = svg.getScreenCTM();
    if (!ctm) return hide();
    const p = new DOMPoint(event.clientX, event.clientY).matrixTransform(ctm.inverse());
    const {dots: all, value} = dots(svg);
    let best = null, bestD = NEAR * NEAR;
    for (const d of all) {
      const dd = (d.x - p.x) ** 2 + (d.y - p.y) ** 2;
      if (dd < bestD) [best, bestD] = [d, dd];
    }
    return best ? show(svg, best, value, event) : hide();
  }

  document.addEventListener("pointermove", onPointer, {passive: true});
  document.addEventListener("pointerdown", onPointer, {passive: true});
  document.addEventListener("scroll", hide, {passive: true});
})();
