// History and replays: the matches played (/history) and one match step by step with its race
// view (/history/N). Read-only: it only GETs /api/matches. The board and the seats are drawn by
// table.js's own functions (drawBoard, seatHolding, card), so a replay looks like the live table.
// Every text goes in with textContent (el()), never as markup.
"use strict";

const US = "\u00b5s";

function when(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString() : "";
}

async function fetchJson(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  if (!r.ok) throw new Error((await r.text()).trim() || r.status + " " + r.statusText);
  return r.json();
}

// ------------------------------------------------------------------ who sat where

// A seat as the table names it: "Ann (seat 2)" with the name linked to the player's page
// (/players/N), "bot (seat 3)", "seat 1" (a guest). `people`: the match's, each {seat, kind, name, id}.
function person(people, seat) {
  const p = (people || []).find((x) => x.seat === seat);
  const node = el("span", "who-sat");
  if (p && p.name) {
    if (p.id !== null && p.id !== undefined) {
      const link = el("a", "player", p.name);
      link.href = "/players/" + encodeURIComponent(p.id);
      node.appendChild(link);
    } else {
      node.appendChild(el("span", "player", p.name));
    }
    node.appendChild(document.createTextNode(" (seat " + seat + ")"));
  } else if (p && p.kind === "bot") {
    node.textContent = "bot (seat " + seat + ")";
  } else {
    node.textContent = "seat " + seat;
  }
  return node;
}

// A line in parts (web/history.py's `words`): text, and {seat: N} where a seat is named.
function said(words, people) {
  const node = el("span", "said");
  for (const w of words || []) {
    node.appendChild(w !== null && typeof w === "object" ? person(people, w.seat) : document.createTextNode(String(w)));
  }
  return node;
}

// The people of a listed match (/api/matches: kinds, names and ids in the players' order).
function listedPeople(m) {
  return m.seats.map((seat, i) => ({ seat, kind: m.kinds ? m.kinds[i] : "guest",
    name: m.names ? m.names[i] : null, id: m.ids ? m.ids[i] : null }));
}

// "won by Ann (seat 2) and seat 3"
function wonBy(winners, people) {
  const node = el("span", "won-by", "won by ");
  winners.forEach((seat, i) => {
    if (i) node.appendChild(document.createTextNode(" and "));
    node.appendChild(person(people, seat));
  });
  return node;
}

function joined(nodes, between) {
  const node = el("span");
  nodes.forEach((n, i) => {
    if (i) node.appendChild(document.createTextNode(between));
    node.appendChild(n);
  });
  return node;
}

// A match set aside, in words (as tablectl history says it): "aborted", or why it was set aside.
function setAside(why) {
  return why === "aborted" ? "aborted" : "set aside: " + why;
}

// ------------------------------------------------------------------ the matches list

function row(cells, tag) {
  const tr = el("tr");
  for (const c of cells) {
    const cell = el(tag || "td");
    if (c instanceof Node) cell.appendChild(c);
    else cell.textContent = String(c);
    tr.appendChild(cell);
  }
  return tr;
}

// A page of the list; the older ones are the next page (the answer's Link header, rel="next").
async function showMatches() {
  const before = new URLSearchParams(location.search).get("before");
  let list, older = null;
  try {
    const r = await fetch("/api/matches" + (before ? "?before=" + encodeURIComponent(before) : ""),
      { headers: { Accept: "application/json" } });
    if (!r.ok) throw new Error((await r.text()).trim() || r.status + " " + r.statusText);
    const next = /[?&]before=(\d+)>;\s*rel="next"/.exec(r.headers.get("Link") || "");
    older = next ? next[1] : null;
    list = await r.json();
  } catch (err) {
    text("note", "cannot read the matches: " + err.message);
    return;
  }
  const table = document.getElementById("matches");
  table.replaceChildren(row(["match", "game", "seats", "started", "rounds", "result"], "th"));
  for (const m of list) {
    const link = el("a", "", "#" + m.match);
    link.href = "/history/" + encodeURIComponent(m.match);
    const people = listedPeople(m);
    const result = m.set_aside ? setAside(m.set_aside)
      : m.winners ? wonBy(m.winners, people) : m.ended ? "over" : "not finished";
    const seats = joined(m.seats.map((seat) => person(people, seat)), ", ");
    table.appendChild(row([link, m.title || m.game, seats, when(m.started), String(m.rounds.length), result]));
  }
  text("note", list.length ? "" : before ? "no older match" : "no match has been played yet");
  if (older) {
    const link = el("a", "", "older matches");
    link.href = "/history?before=" + encodeURIComponent(older);
    link.id = "older";
    document.getElementById("note").replaceChildren(link);
  }
  window.historyReady = true;
}

// ------------------------------------------------------------------ one match

const replay = { match: null, at: 0, timer: null };

function seatsAt(match, step) {
  return match.seats.map((seat, player) => ({
    seat, who: match.bots[String(seat)] ? "bot (" + match.bots[String(seat)] + ")" : "player",
    bot: Boolean(match.bots[String(seat)]), name: match.people && match.people[player] ? match.people[player].name : null,
    total: step.totals[player], message: "",
  }));
}

function drawStep() {
  const match = replay.match;
  const step = match.steps[replay.at];
  if (!step) return;
  const s = { board: step.board, winners: [] };
  fill("board", ...(step.board ? drawBoard(step.board) : []));
  fill("seats", ...seatsAt(match, step).map((seat) => seatBox(s, seat)));
  fill("step-text", document.createTextNode("round " + step.round + ": "),
    step.words ? said(step.words, match.people) : document.createTextNode(step.text),
    document.createTextNode(intoRound(match, step) +
      (step.result ? " · round over (" + step.result.ending + ")" : "")));
  text("where", "step " + (replay.at + 1) + " of " + match.steps.length);
  document.getElementById("scrub").value = String(replay.at);
  for (const tr of document.querySelectorAll("#race-table tr[data-step]")) {
    tr.classList.toggle("here", Number(tr.dataset.step) === replay.at);
  }
  document.body.dataset.step = String(replay.at);
}

// When in the round, from its first play (the kernel's stamps, as the table decided by them): a
// person reads "1.250 s in", never the raw clock ("@ 1076203.814 ms").
function intoRound(match, step) {
  const at = sinceFirstPlay(match, step.round, step.ts_ns);
  return at ? " · " + at + " after the round's first play" : "";
}

// A stamp as seconds from the round's first play, to the microsecond ("" when there is none).
function sinceFirstPlay(match, round, ns) {
  const first = match.steps.find((s) => s.round === round && s.ts_ns !== null);
  if (ns === null || ns === undefined || !first) return "";
  return ((ns - first.ts_ns) / 1e9).toFixed(6) + " s";
}

function go(at) {
  const last = replay.match.steps.length - 1;
  replay.at = Math.max(0, Math.min(last, at));
  drawStep();
}

// Table speed: the time between two presses as the kernel stamped them; a new deal waits a second.
function pause(from, to) {
  const speed = Number(document.getElementById("speed").value) || 1;
  const gap = from.ts_ns !== null && to.ts_ns !== null && to.round === from.round ? (to.ts_ns - from.ts_ns) / 1e6 : 1000;
  return Math.max(0, Math.min(gap, 3000)) / speed;
}

function stop() {
  clearTimeout(replay.timer);
  replay.timer = null;
  text("play", "▶ play");
}

function play() {
  if (replay.timer !== null) { stop(); return; }
  if (replay.at >= replay.match.steps.length - 1) go(0);
  text("play", "⏸ pause");
  const next = () => {
    const steps = replay.match.steps;
    if (replay.at >= steps.length - 1) { stop(); return; }
    replay.timer = setTimeout(() => { go(replay.at + 1); next(); }, pause(steps[replay.at], steps[replay.at + 1]));
  };
  next();
}

const RACE_COLUMNS = ["#", "round", "seat", "its press (from the round's first play)", "won by", "winner's press", "Δ (" + US + ")",
  "window / ε (" + US + ")", "decision", "why", "step"];

function races(match) {
  const table = document.getElementById("race-table");
  table.replaceChildren(row(RACE_COLUMNS, "th"));
  for (const r of match.races) {
    const jump = el("button", "jump", r.step === null ? "–" : String(r.step + 1));
    jump.type = "button";
    if (r.step !== null) jump.addEventListener("click", () => { stop(); go(r.step); });
    const at = (ns) => sinceFirstPlay(match, r.round, ns);
    const tr = row([String(r.n), String(r.round), person(match.people, r.seat), at(r.loser_ts_ns),
      r.by_seat ? person(match.people, r.by_seat) : (r.kind === "false_start" ? "go" : ""),
      r.kind === "false_start" ? at(r.go_ns) : at(r.winner_ts_ns),
      r.delta_us === undefined ? "" : String(r.delta_us),
      (r.window_us === null ? "?" : r.window_us) + " / " + (r.epsilon_us === null ? "?" : r.epsilon_us),
      r.kind.replace("_", " "), r.reason_words ? said(r.reason_words, match.people) : r.reason, jump]);
    RACE_COLUMNS.forEach((name, i) => { tr.children[i].dataset.label = name; });  // a phone's stacked rows
    tr.children[6].className = "delta";
    tr.children[9].className = "reason";
    tr.dataset.kind = r.kind;
    if (r.step !== null) tr.dataset.step = String(r.step);
    table.appendChild(tr);
  }
  if (!match.races.length) {
    const none = row(["no contested press and no false start in this match"]);
    none.firstChild.colSpan = 11;
    table.appendChild(none);
  }
}

function scores(match) {
  if (!match.rounds.length) return [];
  const table = el("table", "scores");
  table.appendChild(row(["round", ...match.seats.map((s) => person(match.people, s))], "th"));
  for (const r of match.rounds) table.appendChild(row([String(r.round), ...r.scores.map(signed)]));
  return [el("h2", "", "Scores by seat"), table];
}

async function showMatch() {
  const id = location.pathname.split("/").pop();
  let match;
  try {
    match = await fetchJson("/api/matches/" + encodeURIComponent(id));
  } catch (err) {
    text("problem", "cannot show match " + id + ": " + err.message);
    return;
  }
  replay.match = match;
  document.body.dataset.game = match.game;
  text("game", (match.title || match.game) + " · match " + match.match);
  fill("facts", document.createTextNode(match.players + " players: "),
    joined(match.seats.map((seat) => person(match.people, seat)), ", "),
    document.createTextNode(" · started " + when(match.started)),
    ...(match.winners ? [document.createTextNode(" · "), wonBy(match.winners, match.people)] : []),
    document.createTextNode(match.set_aside ? " · " + setAside(match.set_aside) : ""));
  document.getElementById("download").href = "/api/matches/" + encodeURIComponent(id) + "/journal.json";
  document.getElementById("download").setAttribute("download", "match-" + match.match + ".json");
  text("problem", match.problem || "");
  const scrub = document.getElementById("scrub");
  scrub.max = String(Math.max(0, match.steps.length - 1));
  scrub.addEventListener("input", () => { stop(); go(Number(scrub.value)); });
  document.getElementById("first").addEventListener("click", () => { stop(); go(0); });
  document.getElementById("back").addEventListener("click", () => { stop(); go(replay.at - 1); });
  document.getElementById("forward").addEventListener("click", () => { stop(); go(replay.at + 1); });
  document.getElementById("last").addEventListener("click", () => { stop(); go(match.steps.length - 1); });
  document.getElementById("play").addEventListener("click", play);
  fill("results", ...scores(match));
  races(match);
  go(0);
  window.historyReady = true;
}

if (document.body.dataset.page === "history") showMatches();
if (document.body.dataset.page === "match") showMatch();
