// The players' pages: a player's statistics, rating over time and matches (/players/N), and the
// leaderboard tonight and all time (/leaderboard). Read-only: it only GETs /api/players/N and
// /api/leaderboard. Every text goes in with textContent (el()), never as markup: a name is text.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

async function getJson(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  if (!r.ok) throw new Error((await r.text()).trim() || r.status + " " + r.statusText);
  return r.json();
}

function cellsRow(cells, tag) {
  const tr = el("tr");
  for (const c of cells) {
    const cell = el(tag || "td");
    if (c instanceof Node) cell.appendChild(c);
    else cell.textContent = c === null || c === undefined ? "–" : String(c);
    tr.appendChild(cell);
  }
  return tr;
}

function link(href, words) {
  const a = el("a", null, words);
  a.href = href;
  return a;
}

function ms(value) {
  return value === null || value === undefined ? null : value + " ms";
}

function date(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString() : "";
}

// ------------------------------------------------------------------ a player's page

const FIGURES = [
  ["matches", "matches", (v) => v],
  ["wins", "wins", (v) => v],
  ["rounds", "rounds", (v) => v],
  ["points per round", "points_per_round", (v) => v],
  ["slaps", "slaps", (v) => v],
  ["false starts", "false_starts", (v) => v],
  ["races", "races", (v) => v],
  ["races won", "races_won", (v) => v],
  ["races lost", "races_lost", (v) => v],
  ["median margin of a race won", "median_margin_won_ms", ms],
  ["median margin of a race lost", "median_margin_lost_ms", ms],
  ["reactions", "reactions", (v) => v],
  ["median reaction", "median_reaction_ms", ms],
  ["best reaction", "best_reaction_ms", ms],
];

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
}

// One game's rating after each match: the band mu ± sigma, the line mu, and the rating shown
// (mu - 3 sigma) as a dashed line; its lowest and highest values written beside the axis.
function ratingChart(title, points) {
  const W = 640, H = 200, PAD = 44;
  const figure = el("figure", "rating-chart");
  figure.appendChild(el("figcaption", null, title + ": " + points.length + " rated matches, now " +
    points[points.length - 1].shown.toFixed(1) + " (mu " + points[points.length - 1].mu.toFixed(1) +
    ", sigma " + points[points.length - 1].sigma.toFixed(2) + ")"));
  const lows = points.map((p) => Math.min(p.shown, p.mu - p.sigma));
  const highs = points.map((p) => p.mu + p.sigma);
  const lo = Math.floor(Math.min(...lows)), hi = Math.ceil(Math.max(...highs));
  const x = (i) => PAD + (points.length === 1 ? (W - 2 * PAD) / 2 : i * (W - 2 * PAD) / (points.length - 1));
  const y = (v) => H - PAD / 2 - (v - lo) * (H - PAD) / Math.max(1, hi - lo);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img",
    "aria-label": title + " rating over time" });
  chart.appendChild(svg("line", { x1: PAD, y1: y(lo), x2: W - PAD, y2: y(lo), class: "axis" }));
  chart.appendChild(svg("line", { x1: PAD, y1: y(lo), x2: PAD, y2: y(hi), class: "axis" }));
  for (const [v, cls] of [[lo, "low"], [hi, "high"]]) {
    const label = svg("text", { x: PAD - 6, y: y(v) + 5, "text-anchor": "end", class: "label " + cls });
    label.textContent = String(v);
    chart.appendChild(label);
  }
  const band = points.map((p, i) => `${x(i)},${y(p.mu + p.sigma)}`)
    .concat(points.map((p, i) => `${x(i)},${y(p.mu - p.sigma)}`).reverse());
  chart.appendChild(svg("polygon", { points: band.join(" "), class: "band" }));
  chart.appendChild(svg("polyline", { points: points.map((p, i) => `${x(i)},${y(p.mu)}`).join(" "),
    class: "mu" }));
  chart.appendChild(svg("polyline", { points: points.map((p, i) => `${x(i)},${y(p.shown)}`).join(" "),
    class: "shown" }));
  figure.appendChild(chart);
  return figure;
}

async function showPlayer() {
  const id = location.pathname.split("/").pop();
  let page;
  try {
    page = await getJson("/api/players/" + id + location.search);
  } catch (err) {
    text("note", "cannot read this player: " + err.message);
    return;
  }
  text("name", page.name);
  document.title = "Ligretto table: " + page.name;
  const chosen = new URLSearchParams(location.search).get("game");
  const title = (g) => (page.titles || {})[g] || g;
  const choices = document.getElementById("choices");
  choices.replaceChildren(link(location.pathname, "every game"),
    ...Object.keys(page.ratings).flatMap((g) => [document.createTextNode(" · "),
      link(location.pathname + "?game=" + encodeURIComponent(g), title(g))]));
  const columns = [["every game", page.all],
    ...(chosen ? [] : Object.entries(page.games).map(([g, f]) => [title(g), f]))];
  const table = document.getElementById("figures");
  table.replaceChildren(cellsRow(["", ...columns.map((c) => c[0])], "th"),
    ...FIGURES.map(([words, key, shown]) => cellsRow([words, ...columns.map((c) => shown(c[1][key]))])));
  const charts = document.getElementById("ratings");
  const games = Object.entries(page.ratings);
  charts.replaceChildren(...(games.length ? games.map(([g, points]) => ratingChart(title(g), points))
    : [el("p", "note", "no rating yet: a rating comes after a finished match")]));
  const matches = document.getElementById("matches");
  matches.replaceChildren(cellsRow(["match", "game", "begun", "seat", "points", ""], "th"),
    ...page.matches.map((m) => cellsRow([link("/history/" + m.match, "match " + m.match), title(m.game),
      date(m.started), "seat " + m.seat, m.points, m.won ? "won" : ""])));
  text("note", page.matches.length ? "" : "no finished match yet");
}

// ------------------------------------------------------------------ the leaderboard

async function showLeaderboard() {
  let board;
  try {
    board = await getJson("/api/leaderboard");
  } catch (err) {
    text("note", "cannot read the leaderboard: " + err.message);
    return;
  }
  const tonight = document.getElementById("tonight");
  tonight.replaceChildren(cellsRow(["", "player", "wins", "matches", "points per round"], "th"),
    ...board.tonight.map((e, i) => cellsRow([i + 1, link("/players/" + e.player, e.name), e.wins, e.matches,
      e.points_per_round])));
  const all = document.getElementById("all-time");
  all.replaceChildren(...Object.entries(board.all_time).map(([game, entries]) => {
    const section = el("section");
    section.appendChild(el("h3", null, (board.titles || {})[game] || game));
    const t = el("table", "matches");
    t.replaceChildren(cellsRow(["", "player", "rating", "mu ± sigma", "matches"], "th"),
      ...entries.map((e, i) => cellsRow([i + 1, link("/players/" + e.player, e.name), e.shown.toFixed(1),
        e.mu.toFixed(1) + " ± " + e.sigma.toFixed(2), e.matches])));
    section.appendChild(t);
    return section;
  }));
  text("note", board.tonight.length || Object.keys(board.all_time).length ? ""
    : "no named player has finished a match yet");
}

if (document.body.dataset.page === "player") showPlayer();
if (document.body.dataset.page === "leaderboard") showLeaderboard();
