// The live table: frames pushed by the table over one WebSocket (/live), drawn as they come.
// Read-only: nothing is ever sent back. Every text from the table goes in with textContent,
// never innerHTML, so a name can never become markup (docs/web.md, "Security").
"use strict";

const COLOURS = { R: "red", G: "green", B: "blue", Y: "yellow", P: "purple" };
const PHASES = {
  attract: "waiting for players", lobby: "lobby", countdown: "get ready",
  playing: "playing", round_result: "round over", match_result: "match over",
};
const REASONS = { too_late: "too late", false_start: "false start" };

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function fill(id, ...children) {
  const node = document.getElementById(id);
  node.replaceChildren(...children);
  return node;
}

function text(id, value) {
  document.getElementById(id).textContent = value === undefined || value === null ? "" : String(value);
}

function signed(n) {
  return n > 0 ? "+" + n : String(n);
}

// A card as a card: its colour, its value; `small` for a seat's own cards.
function card(c, extra) {
  const node = el("span", "card " + (COLOURS[c.c] || "grey") + (extra ? " " + extra : ""));
  // Colour is never the only signal (red and green look alike to many): its letter in the corner.
  node.appendChild(el("span", "letter", c.c));
  node.appendChild(el("span", "value", c.v));
  node.title = (COLOURS[c.c] || c.c) + " " + c.v;
  return node;
}

function empty(extra) {
  return el("span", "card none" + (extra ? " " + extra : ""), "–");
}

// ------------------------------------------------------------------ the board

// A board is what the game's hook gives (views/boards.py, docs/web.md "The boards"): a line
// above the middle, the middle's elements, and each seat's. The page draws the elements and
// never asks which game it shows.

// One place of a row: a card, an empty place (a dash), or a place in no colour with its value.
function place(x, extra) {
  const cls = [extra, x && x.look].filter(Boolean).join(" ");
  if (!x || (x.c === undefined && x.v === undefined)) return empty(cls);
  if (x.c === undefined) return el("span", "card " + cls, x.v);
  return card(x, cls);
}

function sizes(e) {
  return [e.small ? "small" : "", e.shape === "die" ? "die" : ""].filter(Boolean).join(" ");
}

const ELEMENTS = {
  // The open piles, each marked with the seat whose card is on top.
  piles(e) {
    const row = el("div", "piles");
    for (const p of e.cards) {
      const node = place(p, "");
      if (p && p.seat !== undefined) node.dataset.seat = p.seat;
      row.appendChild(node);
    }
    if (!e.cards.length) row.appendChild(el("div", "hint", e.empty));
    if (e.cards.length > 20) row.classList.add("many");  // up to 48 with 12 seats: smaller cards
    return [row];
  },
  cards(e) {
    return e.cards.map((x) => place(x, sizes(e)));
  },
  rows(e) {
    const rows = el("div", "rows");
    for (const line of e.rows) {
      const row = el("div", "row");
      for (const x of line) row.appendChild(place(x, sizes(e)));
      rows.appendChild(row);
    }
    return [rows];
  },
  grid(e) {
    const grid = el("div", "grid");
    grid.style.gridTemplateColumns = "repeat(" + e.cols + ", 1fr)";
    for (const sq of e.squares) {
      const node = el("span", "square " + (COLOURS[sq.c] || "grey"));
      node.style.gridRow = String(sq.r + 1);
      node.style.gridColumn = String(sq.col + 1);
      if (sq.token) {
        node.appendChild(el("span", "token" + (sq.held ? " held" : ""), sq.token));
      } else if (sq.cover !== undefined) {
        node.classList.add("covered");
        node.appendChild(el("span", "mark", sq.cover));
      } else {
        node.appendChild(el("span", "mark free", sq.c));  // its colour as a letter too
      }
      grid.appendChild(node);
    }
    return [grid];
  },
  tile(e) {
    const pair = el("span", "pair");
    for (const c of e.halves) pair.appendChild(el("span", "half " + (COLOURS[c] || "grey"), c));  // the letter too
    return [pair];
  },
  count(e) {
    return [el("span", "count", e.text)];
  },
  gap() {
    return [el("span", "gap")];
  },
};

function elements(list) {
  return (list || []).flatMap((e) => (ELEMENTS[e.type] ? ELEMENTS[e.type](e) : []));
}

function drawBoard(board) {
  return [el("div", "board-head", board.head), ...elements(board.middle)];
}

// The address as a QR code (its modules from the table: "1" dark), dark on a light margin.
function qr(rows) {
  const NS = "http://www.w3.org/2000/svg";
  const n = rows.length, margin = 4;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 " + (n + 2 * margin) + " " + (n + 2 * margin));
  svg.setAttribute("class", "qr");
  svg.setAttribute("shape-rendering", "crispEdges");
  const back = document.createElementNS(NS, "rect");
  back.setAttribute("width", String(n + 2 * margin));
  back.setAttribute("height", String(n + 2 * margin));
  back.setAttribute("fill", "#fff");
  svg.appendChild(back);
  rows.forEach((row, r) => {
    for (let c = 0; c < row.length; c++) {
      if (row[c] !== "1") continue;
      const dot = document.createElementNS(NS, "rect");
      dot.setAttribute("x", String(c + margin));
      dot.setAttribute("y", String(r + margin));
      dot.setAttribute("width", "1");
      dot.setAttribute("height", "1");
      svg.appendChild(dot);
    }
  });
  return svg;
}

function banner(s) {
  const lines = [];
  if (s.phase === "attract") {
    lines.push(el("div", "big-word", "Slap to play"));
  } else if (s.phase === "lobby") {
    lines.push(el("div", "big-word", s.title || s.game));
    const [lo, hi] = s.players_range;
    lines.push(el("div", "", s.seats.length + " joined (" + lo + " to " + hi + " players) · seat 1 starts"));
  } else if (s.phase === "countdown") {
    lines.push(el("div", "big-word countdown", s.countdown ? s.countdown : "GO"));
  } else if (s.phase === "round_result" && s.results.length) {
    const last = s.results[s.results.length - 1];
    lines.push(el("div", "big-word", "Round " + last.round + " over"));
    lines.push(el("div", "", last.ending.replaceAll("_", " ") +
      (last.finishers.length ? " · " + called(s, last.finishers[0]) + " first" : "")));
  } else if (s.phase === "match_result") {
    const w = s.winners.map((n) => called(s, n)).join(" and ");
    lines.push(el("div", "big-word", w ? w + (s.winners.length > 1 ? " win!" : " wins!") : "Match over"));
  }
  if ((s.phase === "attract" || s.phase === "lobby") && s.address) {
    lines.push(el("div", "watch", "Watch on your phone: " + s.address));
    if (s.qr) lines.push(qr(s.qr));
  }
  return lines;
}

// ------------------------------------------------------------------ the seats

function seatHolding(s, seat) {
  const b = s.board;
  if (!b || !b.hands) return null;
  const h = b.hands.find((x) => x.seat === seat.seat);
  if (!h) return null;
  const row = el("div", "holding");
  for (const node of elements(h.holding)) row.appendChild(node);
  return row;
}

// A seat as the players know it: its player's name (set as text: el), or "seat N" for a guest.
function called(s, n) {
  const seat = (s.seats || []).find((x) => x.seat === n);
  return seat && seat.name ? seat.name : "seat " + n;
}

function seatBox(s, seat) {
  const box = el("div", "seat");
  box.dataset.seat = seat.seat;
  const head = el("div", "seat-head");
  head.appendChild(el("span", "seat-no", "Seat " + seat.seat));
  head.appendChild(el("span", "who", seat.name || (seat.bot ? seat.who : "guest")));
  head.appendChild(el("span", "total", seat.total === null ? "" : signed(seat.total)));
  box.appendChild(head);
  const holding = seatHolding(s, seat);
  if (holding) box.appendChild(holding);
  if (seat.message) box.appendChild(el("div", "message", seat.message));
  if (s.winners.includes(seat.seat)) box.classList.add("winner");
  return box;
}

// ------------------------------------------------------------------ results and decisions

function results(s) {
  if (!s.results.length) return [];
  const table = el("table", "scores");
  const head = el("tr");
  head.appendChild(el("th", "", "round"));
  for (const seat of s.seats) head.appendChild(el("th", "", seat.name || seat.seat));
  table.appendChild(head);
  for (const r of s.results.slice(-5)) {
    const tr = el("tr");
    tr.appendChild(el("td", "", r.round));
    for (const score of r.scores) tr.appendChild(el("td", "", signed(score)));
    table.appendChild(tr);
  }
  const totals = el("tr", "totals");
  totals.appendChild(el("td", "", "total"));
  for (const seat of s.seats) totals.appendChild(el("td", "", seat.total === null ? "" : signed(seat.total)));
  table.appendChild(totals);
  return [el("h2", "", "Scores by seat"), table];
}

function decisions(s) {
  if (!s.decisions.length) return [];
  const list = el("ol", "decided");
  for (const d of s.decisions.slice().reverse()) {
    let line = called(s, d.seat) + " " + d.control + ": " + (d.refused ? (REASONS[d.refused] || d.refused.replaceAll("_", " ")) : "taken");
    if (d.delta_us !== null) {
      const us = Math.abs(d.delta_us);  // µs under a millisecond, ms above: as a person reads it
      const gap = us < 1000 ? us.toFixed(1) + " µs" : (us / 1000).toFixed(1) + " ms";
      line += d.tie ? " · tie within " + gap + ", drawn for " + called(s, d.by_seat)
        : " · Δ " + gap + " behind " + called(s, d.by_seat);
    }
    list.appendChild(el("li", d.refused ? "refused" : "taken", line));
  }
  return [el("h2", "", "Last decisions"), list];
}

// ------------------------------------------------------------------ drawing a frame

function draw(s) {
  document.body.dataset.phase = s.phase;
  document.body.dataset.game = s.game;
  document.body.dataset.seats = String(s.seats.length);
  text("game", s.title || s.game);
  text("phase", PHASES[s.phase] || s.phase);
  text("round", s.round ? "round " + s.round + (s.rounds ? " of " + s.rounds : "") +
    (s.target ? " · first to " + s.target : "") : "");
  text("status", s.status);
  text("address", s.address);
  fill("banner", ...banner(s));
  fill("board", ...(s.board ? drawBoard(s.board) : []));
  fill("seats", ...s.seats.map((seat) => seatBox(s, seat)));
  fill("results", ...results(s));
  fill("decisions", ...decisions(s));
  window.tableFrames = (window.tableFrames || 0) + 1;
  window.tableState = s;
}

// ------------------------------------------------------------------ the connection

let wait = 500;

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(scheme + location.host + "/live");
  ws.onopen = () => { wait = 500; text("link", "live"); document.body.classList.remove("lost"); };
  ws.onmessage = (event) => {
    const s = JSON.parse(event.data);
    if (s.type === "table") draw(s);
  };
  ws.onclose = () => {
    text("link", "connection lost: trying again");
    document.body.classList.add("lost");
    setTimeout(connect, wait);
    wait = Math.min(wait * 2, 10000);
  };
}

const params = new URLSearchParams(location.search);
if (location.pathname === "/big" || params.get("screen") === "big") document.body.classList.add("big");
if (!document.body.dataset.page) connect();  // the history pages (history.js) only borrow the drawing
