// card-envs play: the page. Plain JavaScript, no build step, nothing from the network.
"use strict";

const $ = (id) => document.getElementById(id);
let GAMES = [];
let state = null;        // the last payload of a game (play / watch)
let replay = null;       // the last payload of a replay
let replayWanted = 0;    // the position last asked for: quick clicks add up before replies
let moving = false;      // a move is on its way, or its reply is still being shown
let watchTimer = null;
let paused = false;
// Milliseconds between the other seats' moves as they are shown (?delay=0 shows them at once).
const DELAY = Number(new URLSearchParams(location.search).get("delay") ?? 150);

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) {
    throw new Error(data.error || `${response.status} ${response.statusText}`);
  }
  return data;
}

function optionValue(text) {
  try { return JSON.parse(text); } catch (e) { return text; }
}

// -- setup ------------------------------------------------------------------------------------
function currentGame() { return GAMES.find((g) => g.name === $("game").value); }

function playerCount() {
  const input = document.querySelector('#options [data-key="num_players"]');
  return input ? Number(optionValue(input.value)) : 2;
}

function buildOptions() {
  const game = currentGame();
  const box = $("options");
  box.innerHTML = "";
  for (const [key, option] of Object.entries(game.options)) {
    const label = document.createElement("label");
    label.title = `${option.doc} (allowed: ${option.allowed})`;
    label.append(`${key} `);
    let input;
    if (option.choices) {
      input = document.createElement("select");
      for (const choice of option.choices) {
        const opt = document.createElement("option");
        opt.value = JSON.stringify(choice);
        opt.textContent = String(choice);
        opt.selected = JSON.stringify(choice) === JSON.stringify(option.default);
        input.append(opt);
      }
    } else {
      input = document.createElement("input");
      input.value = JSON.stringify(option.default);
      input.size = 10;
    }
    input.dataset.key = key;
    input.addEventListener("change", () => { if (key === "num_players") buildSeats(); });
    label.append(input);
    box.append(label);
  }
  buildSeats();
}

function buildSeats() {
  const game = currentGame();
  const box = $("seats");
  box.innerHTML = "";
  for (let seat = 0; seat < playerCount(); seat++) {
    const row = document.createElement("div");
    row.className = "seat";
    const select = document.createElement("select");
    select.id = `seat-${seat}`;
    for (const kind of game.agents) {
      const opt = document.createElement("option");
      opt.value = kind;
      opt.textContent = kind;
      opt.selected = (seat === 0 && kind === "person") || (seat > 0 && kind === "heuristic");
      select.append(opt);
    }
    const path = document.createElement("input");
    path.id = `seat-${seat}-path`;
    path.placeholder = "policy .zip or run directory";
    path.hidden = true;
    select.addEventListener("change", () => { path.hidden = select.value !== "policy"; });
    row.append(`player_${seat} `, select, " ", path);
    box.append(row);
  }
}

function setupBody() {
  const options = {};
  for (const input of document.querySelectorAll("#options [data-key]")) {
    const value = optionValue(input.value);
    if (JSON.stringify(value) !== JSON.stringify(currentGame().options[input.dataset.key].default)) {
      options[input.dataset.key] = value;
    }
  }
  const seats = [];
  for (let seat = 0; seat < playerCount(); seat++) {
    const kind = $(`seat-${seat}`).value;
    seats.push(kind === "policy" ? { kind, path: $(`seat-${seat}-path`).value } : { kind });
  }
  const body = { game: $("game").value, options, seats, show_policy: $("show-policy").checked };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  return body;
}

// -- drawing a scene --------------------------------------------------------------------------
function drawScene(scene, legal) {
  $("lines").innerHTML = "";
  for (const line of [scene.title, ...scene.lines]) {
    const div = document.createElement("div");
    div.textContent = line;
    $("lines").append(div);
  }
  const table = $("table");
  table.innerHTML = "";
  const legalSet = new Set(legal);
  for (const zone of scene.zones) {
    const box = document.createElement("div");
    box.className = "zone";
    const title = document.createElement("h3");
    title.textContent = zone.title;
    const slots = document.createElement("div");
    slots.className = "slots";
    if (zone.columns) {
      slots.classList.add("grid");
      slots.style.gridTemplateColumns = `repeat(${zone.columns}, 40px)`;
    }
    for (const slot of zone.slots) {
      const wrap = document.createElement("div");
      wrap.className = "slot";
      const card = document.createElement("div");
      card.className = `card face-${slot.face} ${slot.colour || "plain"}`;
      if (slot.marked) card.classList.add("marked");
      card.textContent = slot.label;
      if (slot.caption) {
        const caption = document.createElement("span");
        caption.className = "caption";
        caption.textContent = slot.caption;
        card.append(caption);
      }
      const playable = slot.actions.filter((a) => legalSet.has(a));
      if (playable.length) {
        card.classList.add("playable");
        card.dataset.actions = playable.join(" ");
        card.addEventListener("click", () => chooseFrom(playable));
      }
      wrap.append(card);
      slots.append(wrap);
    }
    box.append(title, slots);
    table.append(box);
  }
}

function chooseFrom(actions) {
  if (actions.length === 1) { move(actions[0]); return; }
  const box = $("choices");
  box.innerHTML = "Which move? ";
  for (const action of actions) {
    const button = document.createElement("button");
    button.textContent = action;
    button.dataset.action = action;
    button.addEventListener("click", () => move(action));
    box.append(button);
  }
}

function logEvent(event) {
  const li = document.createElement("li");
  const who = event.who ? ` (${event.who})` : "";
  li.textContent = `player_${event.seat}${who}: ${event.action}`;
  if (event.policy) li.textContent += `  [value ${event.policy.value}; ` +
    event.policy.probs.map(([a, p]) => `${a} ${p.toFixed(2)}`).join(", ") + "]";
  $("log").append(li);
  li.scrollIntoView({ block: "nearest" });
}

// -- a game (play / watch) --------------------------------------------------------------------
function showGame(payload, animate) {
  state = payload;
  replay = null;
  $("setup").hidden = true;
  $("game-view").hidden = false;
  $("replay-controls").hidden = true;
  $("watch-controls").hidden = payload.mode !== "watch";
  $("choices").innerHTML = "";
  const events = payload.events;
  const finish = () => {
    moving = false;
    drawScene(payload.scene, payload.legal);
    const moves = $("moves");
    moves.innerHTML = payload.legal.length ? "Your move: " : "";
    for (const action of payload.legal) {
      const button = document.createElement("button");
      button.textContent = action;
      button.dataset.action = action;
      button.addEventListener("click", () => move(action));
      moves.append(button);
    }
    $("policy").textContent = payload.policy ? `policy: value ${payload.policy.value}; ` +
      payload.policy.probs.map(([a, p]) => `${a} ${p.toFixed(2)}`).join(", ") : "";
    $("result").textContent = payload.over ? `Game over: winners ${
      payload.result.winners.map((s) => "player_" + s).join(", ") || "none"}` : "";
    $("status").textContent = `${payload.game}, ${payload.mode}` +
      (payload.seat !== null ? `, you are player_${payload.seat}` : "") +
      (payload.your_turn ? ": your turn" : "");
    const link = $("download");
    link.hidden = false;
    link.href = `/api/sessions/${payload.id}/record`;
    link.download = `${payload.game}-${payload.id}.jsonl`;
    if (payload.mode === "watch" && !payload.over) scheduleWatch();
  };
  if (!animate || events.length <= 1 || DELAY <= 0) {
    events.forEach(logEvent);
    finish();
    return;
  }
  // Other seats' moves shown as they happen, one after another.
  let i = 0;
  const step = () => {
    if (i < events.length) { logEvent(events[i++]); setTimeout(step, DELAY); } else finish();
  };
  step();
}

async function move(action) {
  // One move per reply: a double click must not send its second click as the next move.
  if (moving) return;
  moving = true;
  try {
    showError("");
    showGame(await api("POST", `/api/sessions/${state.id}/move`, { action }), true);
  } catch (err) {
    moving = false;
    showError(err.message);
  }
}

function scheduleWatch() {
  clearTimeout(watchTimer);
  if (paused) return;
  watchTimer = setTimeout(async () => {
    try {
      showGame(await api("POST", `/api/sessions/${state.id}/advance`), false);
    } catch (err) { showError(err.message); }
  }, Math.max(0, Number($("speed").value) || 0));
}

async function start() {
  try {
    showError("");
    $("log").innerHTML = "";
    paused = false;
    $("pause").textContent = "Pause";
    showGame(await api("POST", "/api/sessions", setupBody()), true);
  } catch (err) {
    showError(err.message);
  }
}

// -- a replay ---------------------------------------------------------------------------------
function showReplay(payload) {
  replay = payload;
  replayWanted = payload.t;
  state = null;
  $("setup").hidden = true;
  $("game-view").hidden = false;
  $("watch-controls").hidden = true;
  $("replay-controls").hidden = false;
  $("download").hidden = true;
  $("moves").innerHTML = "";
  $("policy").textContent = "";
  $("result").textContent = "";
  drawScene(payload.scene, []);
  $("position").textContent = `position ${payload.t} of ${payload.length}`;
  $("back").disabled = payload.t === 0;
  $("forward").disabled = payload.t === payload.length;
  $("log").innerHTML = "";
  if (payload.event) logEvent(payload.event);
  $("status").textContent = `${payload.game}, replay`;
}

async function openReplay() {
  try {
    showError("");
    const file = $("record-file").files[0];
    const text = file ? await file.text() : $("record-text").value;
    showReplay(await api("POST", "/api/replays", { record: text }));
  } catch (err) {
    showError(err.message);
  }
}

async function stepReplay(delta) {
  const target = Math.min(Math.max(replayWanted + delta, 0), replay.length);
  if (target === replayWanted) return;
  replayWanted = target;
  try {
    showError("");
    const payload = await api("GET", `/api/replays/${replay.id}/${target}`);
    // A later click has asked for another position: its own reply will show it.
    if (payload.id === replay.id && payload.t === replayWanted) showReplay(payload);
  } catch (err) {
    replayWanted = replay.t;
    showError(err.message);
  }
}

// -- wiring -----------------------------------------------------------------------------------
async function init() {
  try {
    GAMES = await api("GET", "/api/games");
  } catch (err) {
    showError(err.message);
    return;
  }
  for (const game of GAMES) {
    const opt = document.createElement("option");
    opt.value = game.name;
    opt.textContent = game.title;
    $("game").append(opt);
  }
  $("game").addEventListener("change", buildOptions);
  buildOptions();
  $("start").addEventListener("click", start);
  $("open-replay").addEventListener("click", openReplay);
  $("back").addEventListener("click", () => stepReplay(-1));
  $("forward").addEventListener("click", () => stepReplay(1));
  $("pause").addEventListener("click", () => {
    paused = !paused;
    $("pause").textContent = paused ? "Resume" : "Pause";
    if (!paused && state) scheduleWatch();
  });
  $("new-game").addEventListener("click", () => {
    clearTimeout(watchTimer);
    $("game-view").hidden = true;
    $("setup").hidden = false;
    $("status").textContent = "";
  });
}

init();
