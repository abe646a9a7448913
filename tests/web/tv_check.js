(inject) => {
  // The TV page's checks (tests/web/test_tv.py): run in the page, on one consistent frame.
  if (inject) draw({...window.tableState, ...inject});
  const W = innerWidth, H = innerHeight;
  const visible = (e) => { const s = getComputedStyle(e); const r = e.getBoundingClientRect();
    return s.visibility !== "hidden" && s.display !== "none" && r.width > 0 && r.height > 0; };
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (typeof e.className === "string" && e.className ? "." + e.className.trim().replaceAll(" ", ".") : "") +
    (e.textContent ? " '" + e.textContent.trim().slice(0, 24) + "'" : "");
  const all = [...document.querySelectorAll("body *")].filter((e) => !e.closest(".lost-overlay") && visible(e));
  const outside = all.filter((e) => { const r = e.getBoundingClientRect();
    return r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5; }).map(name);
  // Boxes that must not overlap: each text (its own lines, not its block), each card, square, shape, code.
  const boxes = [];
  const canvas = document.createElement("canvas").getContext("2d");
  let least = null;
  const lows = [];
  const rgba = (c) => { const m = c.match(/[\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const behind = (e) => {  // the colour behind an element: its backgrounds laid over each other
    const layers = [];
    for (let n = e; n; n = n.parentElement) {
      const c = rgba(getComputedStyle(n).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let out = [0, 0, 0];
    for (const c of layers.reverse()) out = out.map((v, i) => v * (1 - c[3]) + c[i] * c[3]);
    return out;
  };
  for (const e of all) {
    const own = [...e.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim());
    if (own.length) {
      const range = document.createRange();
      for (const n of own) { range.selectNodeContents(n);
        for (const r of range.getClientRects()) if (r.width > 0) boxes.push([e, r]); }
      const s = getComputedStyle(e);
      canvas.font = s.fontWeight + " " + s.fontSize + " " + s.fontFamily;
      const cap = canvas.measureText("H").actualBoundingBoxAscent;
      if (!least || cap < least.cap) least = {cap, what: name(e), size: parseFloat(s.fontSize)};
      const fg = rgba(s.color), bg = behind(e);
      const ink = fg.slice(0, 3).map((v, i) => v * fg[3] + bg[i] * (1 - fg[3]));
      const [hi, lo] = [lum(ink), lum(bg)].sort((a, b) => b - a);
      const ratio = (hi + 0.05) / (lo + 0.05);
      const px = parseFloat(s.fontSize), bold = Number(s.fontWeight) >= 700;
      const need = px >= 24 || (bold && px >= 18.66) ? 3 : 4.5;
      if (ratio < need) lows.push(name(e) + " " + ratio.toFixed(2) + ":1");
    }
    if (e.matches(".card, .square, .half, .shape, svg.qr, .token")) boxes.push([e, e.getBoundingClientRect()]);
  }
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, ra] = boxes[i], [b, rb] = boxes[j];
    if (a === b || a.contains(b) || b.contains(a)) continue;
    const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
    const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
    if (w > 0.5 && h > 0.5) overlaps.push(name(a) + " × " + name(b));
  }
  const colours = ["red", "green", "blue", "yellow", "purple"];
  const coloured = [...document.querySelectorAll(".card, .square, .half")].filter(visible)
    .filter((n) => colours.some((c) => n.classList.contains(c)) && !n.classList.contains("covered") && !n.querySelector(".token"));
  const shapeless = coloured.filter((n) => { const s = n.querySelector(":scope > .shape");
    return !s || s.getBoundingClientRect().height < 0.4 * n.getBoundingClientRect().height; }).map(name);
  const doc = document.documentElement;
  return {outside, overlaps: overlaps.slice(0, 10), least, lows: lows.slice(0, 10), shapeless,
          shapes: coloured.length, scroll: [doc.scrollWidth, doc.scrollHeight], texts: boxes.length};
}
