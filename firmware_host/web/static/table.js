// The live table: frames pushed by the table over one WebSocket (/live), drawn as they come.
// Read-only: nothing is ever sent back. Every text from the table goes in with textContent,
// never innerHTML, so a name can never become markup (docs/web.md, "Security").
"use strict";

const COLOURS = { R: "red", G: "green", B: "blue", Y: "yellow", P: "purple" };
const REASONS = { too_late: "too late", false_start: "false start" };
// Colour is never the only signal (red and green look alike to many): each colour has a shape too.
const SHAPES = { R: "circle", G: "triangle", B: "square", Y: "diamond", P: "star" };
const RACE_MS = 4000;  // a new race stays large on the page this long

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

// A colour's shape (circle, triangle, square, diamond, star): drawn, not a character.
function shape(letter) {
  const node = el("span", "shape " + (SHAPES[letter] || "none"));
  node.setAttribute("aria-hidden", "true");
  return node;
}

// A card as a card: its colour and its shape, its value; `small` for a seat's own cards.
function card(c, extra) {
  const node = el("span", "card " + (COLOURS[c.c] || "grey") + (extra ? " " + extra : ""));
  node.dataset.c = c.c;
  if (SHAPES[c.c]) node.appendChild(shape(c.c));
  node.appendChild(el("span", "value", c.v));
  node.title = (COLOURS[c.c] || c.c) + " " + c.v;
  node.setAttribute("aria-label", node.title);
  return node;
}

// Who sits at a seat, as the page says it: the name, and the seat's number when the name is not it.
function who(seat, name) {
  return !name || name === "seat " + seat ? "seat " + seat : name + " (seat " + seat + ")";
}

function capital(words) {
  return words.charAt(0).toUpperCase() + words.slice(1);
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
        node.dataset.c = sq.c;
        node.appendChild(shape(sq.c));  // its colour as a shape too
      }
      grid.appendChild(node);
    }
    return [grid];
  },
  tile(e) {
    const pair = el("span", "pair");
    for (const c of e.halves) {
      const half = el("span", "half " + (COLOURS[c] || "grey"));
      half.dataset.c = c;
      half.setAttribute("aria-label", COLOURS[c] || c);
      half.appendChild(shape(c));  // its colour as a shape too
      pair.appendChild(half);
    }
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
    lines.push(el("div", "", "players: " + s.seats.length + " (" + lo + " to " + hi + ") · seat 1 starts"));
  } else if (s.phase === "countdown") {
    lines.push(el("div", "big-word countdown", s.countdown ? s.countdown : "GO"));
  } else if (s.phase === "playing") {
    const race = raceShown(s);
    if (race) lines.push(raceLine(race, "race"));
  } else if (s.phase === "round_result" && s.results.length) {
    const last = s.results[s.results.length - 1];
    lines.push(el("div", "big-word", "Round " + last.round + " over"));
    lines.push(el("div", "", last.how));
    if (s.round_end && s.round_end.next_in !== null) lines.push(el("div", "next-in", nextIn(s)));
  } else if (s.phase === "match_result") {
    const w = s.winners.map((n) => called(s, n)).join(" and ");
    lines.push(el("div", "big-word", w ? w + (s.winners.length > 1 ? " win!" : " wins!") : "Match over"));
  }
  if ((s.phase === "attract" || s.phase === "lobby") && s.address && s.reachable) {
    lines.push(el("div", "watch", "Watch on your phone: " + s.address));
    if (s.qr) lines.push(qr(s.qr));
  } else if ((s.phase === "attract" || s.phase === "lobby") && s.address) {
    // 127.0.0.1 on a phone is the phone: say where the page is, and why no phone can open it.
    lines.push(el("div", "watch", "This page is on this computer only (" + s.address + "): " +
      "to watch on a phone, give the web view a network address ([web] bind, docs/web.md)"));
  }
  return lines;
}

// A race in words, large: who was first, who lost it, and by how much.
function raceLine(r, cls) {
  const winner = capital(who(r.winner, r.winner_name)), loser = who(r.loser, r.loser_name);
  const line = r.tie ? winner + " and " + loser + " tied within " + r.margin + ": drawn for seat " + r.winner
    : winner + " beat " + loser + " by " + r.margin;
  return el("div", cls, line);
}

// A new race (one the page has not shown yet) is shown for RACE_MS, then the page is drawn again.
let raceKey = null, raceUntil = 0, raceTimer = null;
function raceShown(s) {
  const r = s.race;
  if (!r) return null;
  const key = r.ts_ns + "/" + r.loser;
  const now = performance.now();
  if (key !== raceKey) {
    raceKey = key;
    raceUntil = now + RACE_MS;
    clearTimeout(raceTimer);
    raceTimer = setTimeout(() => window.tableState && draw(window.tableState), RACE_MS + 50);
  }
  return now < raceUntil ? r : null;
}

// The seconds to the next round, counted down on the page between frames.
let nextAt = null, nextTimer = null;
function nextIn(s) {
  return "next round in " + Math.max(0, Math.ceil((nextAt - performance.now()) / 1000)) + " s";
}
function countNext(s) {
  clearInterval(nextTimer);
  if (!s.round_end || s.round_end.next_in === null || s.phase !== "round_result") return;
  nextAt = performance.now() + s.round_end.next_in * 1000;
  nextTimer = setInterval(() => {
    const node = document.querySelector("#banner .next-in");
    if (node) node.textContent = nextIn(s);
  }, 250);
}

function signedPoints(n) {
  return n > 0 ? "+" + n : n < 0 ? "\u2212" + -n : "0";
}

// The round's end: each seat's place, its points and what they were made of, its total.
function roundTable(end) {
  const table = el("table", "ranked");
  const head = el("tr");
  for (const h of ["", "", "round", "how", "total"]) head.appendChild(el("th", "", h));
  table.appendChild(head);
  for (const r of end.ranked) {
    const tr = el("tr");
    tr.dataset.seat = r.seat;
    tr.appendChild(el("td", "place", r.place + "."));
    tr.appendChild(el("td", "name", who(r.seat, r.name)));
    tr.appendChild(el("td", "points", signedPoints(r.points)));
    tr.appendChild(el("td", "parts", r.parts.map((p) => p.words).join(" · ")));
    tr.appendChild(el("td", "total", signedPoints(r.total)));
    table.appendChild(tr);
  }
  const out = [el("h2", "", "Round " + end.round), table];
  if (end.closest) out.push(raceLine(end.closest, "closest"));
  if (end.fastest) out.push(el("div", "fastest", "Fastest reaction: " + who(end.fastest.seat, end.fastest.name) +
    ", " + end.fastest.ms.toFixed(0) + " ms"));
  const box = el("div", "round-end");
  box.append(...out);
  return box;
}

// The match's end: the first three on steps, the others below them.
function podium(places) {
  const steps = el("div", "podium");
  places.slice(0, 3).forEach((p, i) => {  // the first in the middle, the second left, the third right
    const step = el("div", "step at-" + i + " place-" + Math.min(p.place, 3));
    step.dataset.seat = p.seat;
    step.appendChild(el("div", "step-place", p.place === 1 ? "1st" : p.place === 2 ? "2nd" : p.place === 3 ? "3rd" : p.place + "th"));
    step.appendChild(el("div", "step-name", who(p.seat, p.name)));
    step.appendChild(el("div", "step-total", signedPoints(p.total)));
    if (p.rating !== null && p.rating !== undefined) {
      step.appendChild(el("div", "step-rating", "rating " + (p.rating >= 0 ? "+" : "\u2212") + Math.abs(p.rating).toFixed(1)));
    }
    steps.appendChild(step);
  });
  const out = [el("h2", "", "Final standings"), steps];
  if (places.length > 3) {
    const rest = el("ol", "rest");
    rest.start = 4;
    for (const p of places.slice(3)) {
      const rating = p.rating !== null && p.rating !== undefined
        ? " · rating " + (p.rating >= 0 ? "+" : "\u2212") + Math.abs(p.rating).toFixed(1) : "";
      const li = el("li", "", p.place + ". " + who(p.seat, p.name) + " " + signedPoints(p.total) + rating);
      li.dataset.seat = p.seat;
      rest.appendChild(li);
    }
    out.push(rest);
  }
  const box = el("div", "final");
  box.append(...out);
  return box;
}

// The attract screen: the leaderboards (tonight, all time) and the last match's highlights.
function standings(s) {
  const out = [];
  const board = s.leaderboard || {};
  for (const [key, title] of [["tonight", "Tonight"], ["all_time", "All time"]]) {
    const rows = board[key] || [];
    if (!rows.length) continue;
    const list = el("ol", "leaders");
    list.dataset.period = key;
    for (const r of rows.slice(0, 5)) {  // tonight by wins, all time by the table's game's rating
      const figure = key === "tonight" ? r.wins + (r.wins === 1 ? " win" : " wins")
        : "rating " + (r.rating === null ? "–" : r.rating.toFixed(1));
      list.appendChild(el("li", "", r.name + " · " + figure));
    }
    out.push(el("div", "leaderboard", undefined));
    out[out.length - 1].append(el("h2", "", title), list);
  }
  if ((s.highlights || []).length) {
    const list = el("ul", "highlights");
    for (const h of s.highlights.slice(0, 3)) list.appendChild(el("li", "", h));
    const box = el("div", "highlight-box");
    box.append(el("h2", "", "Last match"), list);
    out.push(box);
  }
  return out;
}

function ends(s) {
  if (s.phase === "attract" || s.phase === "lobby") return standings(s);
  const out = [];
  if (s.podium) out.push(podium(s.podium));
  if (s.round_end) out.push(roundTable(s.round_end));
  return out;
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
function called(s, n) {  // "Ann (seat 2)", "bot (seat 3)", "seat 1" (a guest)
  const seat = (s.seats || []).find((x) => x.seat === n);
  return who(n, seat && (seat.name || (seat.bot ? "bot" : null)));
}

function seatBox(s, seat) {
  const box = el("div", "seat");
  box.dataset.seat = seat.seat;
  const head = el("div", "seat-head");
  head.appendChild(el("span", "seat-no", String(seat.seat)));
  head.appendChild(el("span", "who", seat.name || (seat.bot ? "bot" : "guest")));
  if (seat.bot) head.appendChild(el("span", "level", seat.who.replace(/^bot \((.*)\)$/, "$1")));
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
  document.body.classList.toggle("many-seats", s.seats.length > 8);
  text("game", s.title || s.game);
  text("phase", s.phase_name);  // the players' words come from the table (table/words.py)
  text("round", s.round ? "round " + s.round + (s.rounds ? " of " + s.rounds : "") +
    (s.target ? " · first to " + s.target : "") : "");
  text("status", s.status);
  text("address", s.address);
  fill("banner", ...banner(s));
  fill("board", ...(s.board ? drawBoard(s.board) : []));
  fill("seats", ...s.seats.map((seat) => seatBox(s, seat)));
  fill("ends", ...ends(s));
  document.body.classList.toggle("has-ends", document.getElementById("ends").childElementCount > 0);
  fill("results", ...results(s));
  fill("decisions", ...decisions(s));
  window.tableFrames = (window.tableFrames || 0) + 1;
  window.tableState = s;
}

function received(s) {
  countNext(s);
  draw(s);
  window.tableDrawn = performance.now();  // bench web: when the page drew its newest frame
}

// ------------------------------------------------------------------ the connection

// Lost: the board dims under an overlay that says since when; the page tries again at once,
// then every 0.5, 1 and 2 s, never waiting longer than RETRY_MAX_MS.
const RETRY_MAX_MS = 2000;
let wait = 0, lostAt = null, lostTimer = null;

function two(n) {
  return String(n).padStart(2, "0");
}

function showLost() {
  const secs = Math.round((Date.now() - lostAt) / 1000);
  const at = new Date(lostAt);
  text("lost-since", "since " + two(at.getHours()) + ":" + two(at.getMinutes()) + ":" + two(at.getSeconds()) +
    " (" + (secs < 60 ? secs + " s" : Math.floor(secs / 60) + " min " + (secs % 60) + " s") + " ago)");
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(scheme + location.host + "/live");
  ws.onopen = () => {
    wait = 0;
    lostAt = null;
    clearInterval(lostTimer);
    text("link", "live");
    document.body.classList.remove("lost");
  };
  ws.onmessage = (event) => {
    const s = JSON.parse(event.data);
    if (s.type === "table") received(s);
  };
  ws.onclose = () => {
    if (lostAt === null) {
      lostAt = Date.now();
      lostTimer = setInterval(showLost, 1000);
    }
    showLost();
    text("link", "connection lost: trying again");
    document.body.classList.add("lost");
    setTimeout(connect, wait);
    wait = Math.min(Math.max(wait * 2, 500), RETRY_MAX_MS);
  };
}

const params = new URLSearchParams(location.search);
if (location.pathname === "/big" || params.get("screen") === "big") document.body.classList.add("big");
if (!document.body.dataset.page) connect();  // the history pages (history.js) only borrow the drawing
