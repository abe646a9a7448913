// The live table: frames pushed by the table over one WebSocket (/live), drawn as they come.
// Read-only: nothing is ever sent back. Every text from the table goes in with textContent,
// never innerHTML, so a name can never become markup (docs/web.md, "Security").
"use strict";

const COLOURS = { R: "red", G: "green", B: "blue", Y: "yellow", P: "purple" };
const PHASES = {
  attract: "waiting for players", lobby: "lobby", countdown: "get ready",
  playing: "playing", round_result: "round over", match_result: "match over",
};
const GAME_NAMES = { classic: "Ligretto", dice: "Ligretto Dice", domino: "Ligretto Domino", crazy: "Ligretto Crazy" };
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

// ------------------------------------------------------------------ the middle of the table

// The open piles as cards, each marked with the seat whose card is on top.
function pileCards(piles, mark, hint) {
  const row = el("div", "piles");
  for (const p of piles) {
    const node = card(p, mark(p));
    node.dataset.seat = p.seat;
    row.appendChild(node);
  }
  if (!piles.length) row.appendChild(el("div", "hint", hint));
  if (piles.length > 20) row.classList.add("many");  // up to 48 with 12 seats: smaller cards
  return row;
}

function classicBoard(board) {
  const piles = pileCards(board.piles, (p) => (p.complete ? "complete" : ""), "no pile yet: a 1 starts one");
  const head = el("div", "board-head", board.piles.length + (board.piles.length === 1 ? " pile" : " piles") + (board.descending ? ", counting down" : ""));
  return [head, piles];
}

function diceBoard(board) {
  const rows = el("div", "dice-rows");
  for (const row of board.rows) {
    const line = el("div", "dice-row");
    for (let face = 1; face <= row.faces; face++) {
      line.appendChild(face <= row.placed ? card({ c: row.c, v: face }, "die") : el("span", "card die free", face));
    }
    rows.appendChild(line);
  }
  return [el("div", "board-head", "faces placed per colour"), rows];
}

function dominoBoard(board) {
  const grid = el("div", "domino");
  grid.style.gridTemplateColumns = "repeat(" + board.cols + ", 1fr)";
  for (const sq of board.squares) {
    const node = el("span", "square " + (COLOURS[sq.c] || "grey"));
    node.style.gridRow = String(sq.r + 1);
    node.style.gridColumn = String(sq.col + 1);
    if (sq.token) {
      node.appendChild(el("span", "token" + (sq.held ? " held" : ""), sq.token));
    } else if (sq.joker) {
      node.classList.add("covered");
      node.appendChild(el("span", "mark", "★"));
    } else if (sq.by !== undefined) {
      node.classList.add("covered");
      node.appendChild(el("span", "mark", sq.by === null ? "" : sq.by));
    } else {
      node.appendChild(el("span", "mark free", sq.c));  // its colour as a letter too
    }
    grid.appendChild(node);
  }
  return [el("div", "board-head", "the board: tokens 1–4, free squares by colour letter, covered squares by seat, ★ a joker"), grid];
}

function crazyBoard(board) {
  const piles = pileCards(board.piles, (p) => (p.crazy ? "crazy" : ""), "no pile yet: a 1 or a Crazy starts one");
  return [el("div", "board-head", board.piles.length + " of " + board.limit + " piles"), piles];
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

const BOARDS = { classic: classicBoard, dice: diceBoard, domino: dominoBoard, crazy: crazyBoard };

function banner(s) {
  const lines = [];
  if (s.phase === "attract") {
    lines.push(el("div", "big-word", "Slap to play"));
  } else if (s.phase === "lobby") {
    lines.push(el("div", "big-word", GAME_NAMES[s.game] || s.game));
    const [lo, hi] = s.players_range;
    lines.push(el("div", "", s.seats.length + " joined (" + lo + " to " + hi + " players) · seat 1 starts"));
  } else if (s.phase === "countdown") {
    lines.push(el("div", "big-word countdown", s.countdown ? s.countdown : "GO"));
  } else if (s.phase === "round_result" && s.results.length) {
    const last = s.results[s.results.length - 1];
    lines.push(el("div", "big-word", "Round " + last.round + " over"));
    lines.push(el("div", "", last.ending.replaceAll("_", " ") +
      (last.finishers.length ? " · seat " + last.finishers[0] + " first" : "")));
  } else if (s.phase === "match_result") {
    const w = s.winners.map((n) => "seat " + n).join(" and ");
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
  if (b.kind === "classic") {
    for (const c of h.row) row.appendChild(c ? card(c, "small") : empty("small"));
    row.appendChild(el("span", "gap"));
    row.appendChild(h.stack_top ? card(h.stack_top, "small stack") : empty("small stack"));
    row.appendChild(h.discard_top ? card(h.discard_top, "small") : empty("small"));
    row.appendChild(el("span", "count", "stack " + h.stack + " · hand " + h.hand));
  } else if (b.kind === "dice") {
    for (const d of h.dice) row.appendChild(card(d, "small die"));
    row.appendChild(el("span", "count", h.dice.length + " dice"));
  } else if (b.kind === "domino") {
    if (h.top) {
      const pair = el("span", "pair");
      pair.appendChild(el("span", "half " + COLOURS[h.top[0]], h.top[0]));  // the letter too
      pair.appendChild(el("span", "half " + COLOURS[h.top[1]], h.top[1]));
      row.appendChild(pair);
    }
    row.appendChild(el("span", "count", "hand " + h.hand + " · jokers " + h.jokers));
  } else if (b.kind === "crazy") {
    for (const c of h.hand) row.appendChild(card(c, "small"));
    row.appendChild(el("span", "count", "draw " + h.draw + " · won " + h.won));
  }
  return row;
}

function seatBox(s, seat) {
  const box = el("div", "seat");
  box.dataset.seat = seat.seat;
  const head = el("div", "seat-head");
  head.appendChild(el("span", "seat-no", "Seat " + seat.seat));
  head.appendChild(el("span", "who", seat.who));
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
  for (const seat of s.seats) head.appendChild(el("th", "", seat.seat));
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
    let line = "seat " + d.seat + " " + d.control + ": " + (d.refused ? (REASONS[d.refused] || d.refused.replaceAll("_", " ")) : "taken");
    if (d.delta_us !== null) {
      const us = Math.abs(d.delta_us);  // µs under a millisecond, ms above: as a person reads it
      const gap = us < 1000 ? us.toFixed(1) + " µs" : (us / 1000).toFixed(1) + " ms";
      line += d.tie ? " · tie within " + gap + ", drawn for seat " + d.by_seat
        : " · Δ " + gap + " behind seat " + d.by_seat;
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
  text("game", GAME_NAMES[s.game] || s.game);
  text("phase", PHASES[s.phase] || s.phase);
  text("round", s.round ? "round " + s.round + (s.rounds ? " of " + s.rounds : "") +
    (s.target ? " · first to " + s.target : "") : "");
  text("status", s.status);
  text("address", s.address);
  fill("banner", ...banner(s));
  const build = s.board && BOARDS[s.board.kind];
  fill("board", ...(build ? build(s.board) : []));
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
