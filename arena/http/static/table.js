// arena's table: one renderer for the live page, the replay viewer and `arena show --html`.
// The page gives its data in <script id="arena-data" type="application/json">. Events are
// the records' / Watch's event objects (docs/records.md); the state below is rebuilt from
// them alone, so the page never holds more than the events it was sent. No network but
// the live page's own event stream (same origin); nothing fetched from anywhere else.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("arena-data").textContent);
  const SUITS = { S: ["♠", "spades", "b"], H: ["♥", "hearts", "r"], C: ["♣", "clubs", "b"], D: ["♦", "diamonds", "r"] };
  const RANKS = { T: "10", J: "J", Q: "Q", K: "K", A: "A" };
  const RANK_NAMES = { J: "jack", Q: "queen", K: "king", A: "ace", T: "10" };
  const $ = (sel) => document.querySelector(sel);
  const names = DATA.seat_names;

  function cardEl(code) {
    const span = document.createElement("span");
    span.className = "c";
    if (code === "BJ" || code === "SJ") {
      span.textContent = code === "BJ" ? "J★" : "j☆";
      span.classList.add(code === "BJ" ? "r" : "b", "joker");
      span.setAttribute("aria-label", code === "BJ" ? "big joker" : "small joker");
    } else {
      const suit = SUITS[code[1]] || ["?", "?", "b"];
      const rank = RANKS[code[0]] || code[0];
      span.textContent = rank + suit[0];
      span.classList.add(suit[2]);
      span.setAttribute("aria-label", (RANK_NAMES[code[0]] || code[0]) + " of " + suit[1]);
    }
    span.dataset.card = code;
    return span;
  }
  function cardsEl(codes) {
    const frag = document.createDocumentFragment();
    for (const c of codes) frag.appendChild(cardEl(c));
    return frag;
  }
  // hands are shown grouped by suit, high to low (presentation only: no rules here)
  const SUIT_ORDER = "SHCD", RANK_ORDER = "AKQJT98765432";
  function sortKey(code) {
    if (code === "BJ") return -2;
    if (code === "SJ") return -1;
    return SUIT_ORDER.indexOf(code[1]) * 20 + RANK_ORDER.indexOf(code[0]);
  }
  const sorted = (codes) => codes.slice().sort((a, b) => sortKey(a) - sortKey(b));
  function removeCards(list, cards) {
    for (const c of cards) {
      const i = list.indexOf(c);
      if (i >= 0) list.splice(i, 1);
    }
  }

  // -- the state, rebuilt from events ---------------------------------------------------
  function fresh() {
    return {
      deal: 0, dealer: null, level: "2", levels: ["2", "2"], trump: null, bids: [],
      hands: [[], [], [], []], dealt: [0, 0, 0, 0], played: [0, 0, 0, 0], kittyIn: 0,
      trick: null, lastTrick: null, points: 0, pointsBySeat: [0, 0, 0, 0], kitty: [],
      faults: [0, 0, 0, 0], result: null, dealResult: null, log: [], over: false,
    };
  }
  function note(s, text) {
    s.log.push(text);
    if (s.log.length > 60) s.log.shift();
  }
  const seatName = (i) => (names && names[i] ? names[i] : "seat " + i) + " (" + i + ")";

  function apply(s, e) {
    switch (e.type) {
      case "deal_started":
        Object.assign(s, {
          deal: e.deal, dealer: e.dealer, level: e.level, levels: e.levels, trump: null,
          bids: [], hands: [[], [], [], []], dealt: [0, 0, 0, 0], played: [0, 0, 0, 0],
          kittyIn: 0, trick: null, lastTrick: null, points: 0, pointsBySeat: [0, 0, 0, 0],
          kitty: [], dealResult: null, over: false,
        });
        note(s, "deal " + e.deal + (e.attempt ? " (redeal " + e.attempt + ")" : "") + " starts");
        break;
      case "card_dealt":
        s.hands[e.seat].push(e.card);
        s.dealt[e.seat] += 1;
        break;
      case "bid_made":
        s.bids.push(e);
        note(s, seatName(e.seat) + (e.cards.length ? " bids " + e.cards.join(" ") : " passes"));
        break;
      case "redealt":
        note(s, "redeal: " + e.reason);
        break;
      case "trump_declared":
        s.trump = e;
        s.dealer = e.dealer;
        note(s, "trump " + (e.suit ? SUITS[e.suit][0] : "none") + " " + e.level + ", dealer " + seatName(e.dealer));
        break;
      case "kitty_taken":
        s.kittyIn = DATA.kitty_size;
        s.hands[e.seat].push(...e.cards);
        note(s, seatName(e.seat) + " takes the kitty");
        break;
      case "kitty_buried":
        s.kittyIn = 0;
        removeCards(s.hands[e.seat], e.cards);
        s.kitty = e.cards.slice();
        note(s, seatName(e.seat) + " buries " + (e.cards.length ? e.cards.join(" ") : DATA.kitty_size + " cards"));
        break;
      case "throw_failed":
        note(s, seatName(e.seat) + "'s throw " + e.attempted.join(" ") + " fails: plays " + e.played.join(" "));
        break;
      case "cards_played":
        if (!s.trick || s.trick.number !== e.trick || s.trick.winner !== null) {
          if (s.trick && s.trick.winner !== null) s.lastTrick = s.trick;
          s.trick = { number: e.trick, plays: [], winner: null };
        }
        s.trick.plays.push({ seat: e.seat, cards: e.cards });
        removeCards(s.hands[e.seat], e.cards);
        s.played[e.seat] += e.cards.length;
        break;
      case "trick_won":
        if (s.trick) s.trick.winner = e.winner;
        s.points = e.attacker_points;
        s.pointsBySeat[e.winner] += e.points;
        note(s, "trick " + e.trick + " to " + seatName(e.winner) + (e.points ? " (+" + e.points + ")" : ""));
        break;
      case "penalty_applied":
        note(s, "penalty: team " + e.team + " −" + e.points + " (" + e.reason + ")");
        break;
      case "deal_ended":
        s.kitty = e.kitty;
        s.levels = e.levels;
        s.over = true;
        s.dealResult = e;
        note(s, "deal " + e.deal + ": " + e.winner + " win, " + e.attacker_points + " points, +" + e.levels_gained + " level(s)");
        break;
      case "deal_revealed": // the deal is over: every hand as dealt, face up
        s.hands = e.hands.map((h) => h.slice());
        s.dealt = e.hands.map((h) => h.length);
        s.played = [0, 0, 0, 0];
        break;
      case "match_ended":
        s.result = e;
        s.levels = e.levels;
        note(s, "match over: " + (e.winner === null ? "a draw" : "team " + e.winner + " wins") + " (" + e.reason + ")");
        break;
      case "fault":
        s.faults[e.seat] += 1;
        note(s, "FAULT " + seatName(e.seat) + ": " + e.kind + (e.reason ? " — " + e.reason : ""));
        break;
    }
  }

  // -- drawing --------------------------------------------------------------------------
  let seatFilter = "all";
  let status = null;

  function handCount(s, seat) {
    if (s.dealt[seat]) return s.hands[seat].length; // a replay: the dealt cards are known
    if (!s.deal) return 0;
    let n = DATA.hand_size - s.played[seat];
    if (s.trump && s.trump.dealer === seat) n += s.kittyIn;
    return Math.max(0, n);
  }

  function draw(s) {
    for (let seat = 0; seat < 4; seat++) {
      const box = $("#seat" + seat);
      const team = seat % 2;
      box.querySelector(".level").textContent = "level " + s.levels[team];
      box.querySelector(".role").textContent = s.dealer === seat ? "dealer" : "";
      box.querySelector(".faults").textContent = s.faults[seat] ? "faults " + s.faults[seat] : "";
      box.querySelector(".won").textContent = s.pointsBySeat[seat] ? "won " + s.pointsBySeat[seat] : "";
      if (status) {
        box.querySelector(".bank").textContent = "bank " + (status.banks[seat] / 1000).toFixed(1) + "s";
        box.querySelector(".faults").textContent = status.faults[seat] ? "faults " + status.faults[seat] : "";
        box.classList.toggle("away", !status.connected[seat]);
      }
      const hand = box.querySelector(".hand");
      hand.replaceChildren();
      const visible = seatFilter === "all" || String(seat) === seatFilter;
      if (visible && s.hands[seat].length) {
        hand.appendChild(cardsEl(sorted(s.hands[seat])));
      } else {
        const n = handCount(s, seat);
        const back = document.createElement("span");
        back.className = "backs";
        back.textContent = n ? n + " cards" : "";
        hand.appendChild(back);
      }
      const slot = $("#play" + seat);
      slot.replaceChildren();
      const play = s.trick && s.trick.plays.find((p) => p.seat === seat);
      if (play) slot.appendChild(cardsEl(play.cards));
      slot.classList.toggle("winner", !!(s.trick && s.trick.winner === seat));
    }
    const t = s.trump;
    $("#trump").replaceChildren();
    if (t) {
      if (t.suit) $("#trump").appendChild(cardEl(t.level + t.suit));
      else $("#trump").textContent = t.level + " no trump";
    } else $("#trump").textContent = "—";
    $("#deal").textContent = s.deal ? String(s.deal) : "—";
    $("#trickno").textContent = s.trick ? String(s.trick.number) : "—";
    $("#points").textContent = String(s.points);
    $("#levels").textContent = s.levels[0] + " / " + s.levels[1];
    const bids = $("#bids");
    bids.replaceChildren();
    for (const b of s.bids.slice(-4)) {
      const li = document.createElement("li");
      li.append(seatName(b.seat) + ": ");
      if (b.cards.length) li.appendChild(cardsEl(b.cards));
      else li.append("pass");
      bids.appendChild(li);
    }
    const kitty = $("#kitty");
    kitty.replaceChildren();
    if (s.kitty.length && (s.over || seatFilter === "all" || String(s.dealer) === seatFilter)) kitty.appendChild(cardsEl(s.kitty));
    else kitty.textContent = "—";
    const log = $("#log");
    log.replaceChildren();
    for (const line of s.log.slice(-8)) {
      const li = document.createElement("li");
      li.textContent = line;
      log.appendChild(li);
    }
    $("#result").textContent = s.result
      ? "Result: " + (s.result.winner === null ? "a draw" : "team " + s.result.winner + " (seats " + s.result.winner + "+" + (s.result.winner + 2) + ") wins") + " — " + s.result.reason
      : "";
  }

  // -- live: the match's public event stream (Server-Sent Events) -----------------------
  function live() {
    const s = fresh();
    let pending = false;
    const redraw = () => {
      if (!pending) {
        pending = true;
        requestAnimationFrame(() => { pending = false; draw(s); });
      }
    };
    const source = new EventSource(DATA.events_url);
    source.onmessage = (m) => {
      const e = JSON.parse(m.data);
      apply(s, e);
      redraw();
    };
    source.addEventListener("status", (m) => {
      status = JSON.parse(m.data);
      $("#state").textContent = status.state + (status.delay !== "none" ? " (spectators " + status.delay + " behind)" : "");
      redraw();
    });
    source.onerror = () => {  // a refusal (503: too many pages) closes it for good
      if (source.readyState === EventSource.CLOSED) {
        $("#state").textContent = "the server refused this page's live stream (too many pages open on this match?) — reload to try again";
      }
    };
    source.addEventListener("end", () => {
      source.close();
      $("#state").textContent = "finished — reload for the replay";
      redraw();
    });
    draw(s);
  }

  // -- replay: step through the record --------------------------------------------------
  function replay() {
    const events = DATA.events;
    const steps = [];
    events.forEach((e, i) => { if (e.type !== "card_dealt") steps.push(i); });
    // a step shows everything up to its event and the cards dealt right after it
    const ends = steps.map((i, k) => (k + 1 < steps.length ? steps[k + 1] - 1 : events.length - 1));
    const deals = [];
    steps.forEach((i, k) => { if (events[i].type === "deal_started") deals.push({ deal: events[i].deal, step: k }); });
    let at = 0;
    let timer = null;
    const stateAt = (k) => {
      const s = fresh();
      for (let i = 0; i <= ends[k]; i++) apply(s, events[i]);
      return s;
    };
    const dealSel = $("#jump-deal");
    const trickSel = $("#jump-trick");
    const seen = new Set();
    for (const d of deals) {
      if (seen.has(d.deal)) continue; // a redeal: keep the first attempt as the jump target
      seen.add(d.deal);
      dealSel.add(new Option("deal " + d.deal, String(d.step)));
    }
    function fillTricks(s) {
      trickSel.replaceChildren(new Option("trick…", ""));
      let k0 = 0;
      for (let k = at; k >= 0; k--) if (events[steps[k]].type === "deal_started") { k0 = k; break; }
      const seenTricks = new Set();
      for (let k = k0; k < steps.length; k++) {
        const e = events[steps[k]];
        if (k > k0 && e.type === "deal_started") break;
        if (e.type === "cards_played" && !seenTricks.has(e.trick)) {
          seenTricks.add(e.trick);
          trickSel.add(new Option("trick " + e.trick, String(k)));
        }
      }
      trickSel.value = "";
    }
    function show(k) {
      at = Math.max(0, Math.min(steps.length - 1, k));
      const s = stateAt(at);
      draw(s);
      $("#step").textContent = "step " + (at + 1) + " / " + steps.length;
      let dealStep = "";
      for (const d of deals) if (d.step <= at) dealStep = String(d.step);
      if (dealSel.value !== dealStep && [...dealSel.options].some((o) => o.value === dealStep)) dealSel.value = dealStep;
      fillTricks(s);
    }
    const findStep = (from, dir, pred) => {
      for (let k = from + dir; k >= 0 && k < steps.length; k += dir) if (pred(events[steps[k]], k)) return k;
      return dir > 0 ? steps.length - 1 : 0;
    };
    const nextTrick = (dir) => show(findStep(at, dir, (e, k) => e.type === "cards_played" && (k === 0 || events[steps[k - 1]].type !== "cards_played" || events[steps[k - 1]].trick !== e.trick)));
    const nextDeal = (dir) => show(findStep(at, dir, (e) => e.type === "deal_started"));
    function playPause() {
      if (timer) { clearInterval(timer); timer = null; }
      else timer = setInterval(() => { if (at >= steps.length - 1) playPause(); else show(at + 1); }, DATA.play_ms || 700);
      $("#play").textContent = timer ? "❚❚ pause" : "▶ play";
      $("#play").setAttribute("aria-pressed", timer ? "true" : "false");
    }
    $("#prev").onclick = () => show(at - 1);
    $("#next").onclick = () => show(at + 1);
    $("#first").onclick = () => show(0);
    $("#last").onclick = () => show(steps.length - 1);
    $("#play").onclick = playPause;
    dealSel.onchange = () => show(Number(dealSel.value));
    trickSel.onchange = () => { if (trickSel.value !== "") show(Number(trickSel.value)); };
    $("#seat-filter").onchange = () => { seatFilter = $("#seat-filter").value; show(at); };
    document.addEventListener("keydown", (ev) => {
      if (ev.target instanceof HTMLSelectElement || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      const keys = {
        ArrowRight: () => show(at + 1), ArrowLeft: () => show(at - 1), " ": playPause,
        Home: () => show(0), End: () => show(steps.length - 1),
        ArrowDown: () => nextTrick(1), ArrowUp: () => nextTrick(-1),
        PageDown: () => nextDeal(1), PageUp: () => nextDeal(-1), n: () => show(at + 1), p: () => show(at - 1),
      };
      const f = keys[ev.key];
      if (f) { ev.preventDefault(); f(); }
    });
    show(0);
  }

  if (DATA.mode === "live") live();
  else replay();
})();
