// A phone claims a seat (web/claim.py): the seat and its one-time code come from this page's
// address (/c/SEAT/CODE, the QR code on the seat's screen). Names are set as text, never as
// markup (textContent, option.text): a name that looks like HTML is shown as it was typed.
"use strict";

const parts = location.pathname.split("/");  // ["", "c", SEAT, CODE]
const seat = Number(parts[2]);
const token = parts[3] || "";

function say(text, ok) {
  const said = document.getElementById("said");
  said.textContent = text;
  said.className = ok ? "ok" : "refused";
}

async function known() {
  try {
    const answer = await fetch("/api/players", { cache: "no-store" });
    const body = await answer.json();
    const list = document.getElementById("known");
    for (const name of body.players || []) {
      const option = document.createElement("option");
      option.value = name;
      option.text = name;
      list.appendChild(option);
    }
  } catch (e) {
    // no list: typing a name still works
  }
}

async function take() {
  const typed = document.getElementById("name").value;
  const chosen = document.getElementById("known").value;
  const name = typed.trim() || chosen;
  if (!name) {
    say("Choose a name from the list or type one.", false);
    return;
  }
  const button = document.getElementById("take");
  button.disabled = true;
  try {
    const answer = await fetch("/api/claim", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ seat, token, name }),
    });
    const body = await answer.json();
    if (body.ok) {
      say("Seat " + body.seat + " is yours, " + body.name + ". Slap in when the match starts!", true);
      return;
    }
    say(body.error || "refused", false);
  } catch (e) {
    say("The table did not answer: try again.", false);
  }
  button.disabled = false;
}

document.getElementById("title").textContent = "Seat " + seat;
document.getElementById("known").addEventListener("change", (e) => {
  document.getElementById("name").value = e.target.value;
});
document.getElementById("take").addEventListener("click", take);
known();
