#!/usr/bin/env node
// A small Tractor bot for the arena referee, in plain JavaScript (Node >= 18).
//
//   npm ci                                   # once, in this folder
//   node bot.js --server 127.0.0.1:50051 --token TOKEN
//   node bot.js --server HOST:PORT --token TOKEN --tls-ca ca.pem   # a TLS server
//   node bot.js --server HOST:PORT --bot-key KEY --parallel 2      # a competition's lobby
//   arena match --bot "node sample_bots/node/bot.js" --bot builtin:greedy ...
//
// It loads the contract (proto/arena/v1/arena.proto) at run time, so there is no
// generated code. Read it top to bottom: cards, effective suits, the decisions,
// then the connection. The guide is docs/protocol.md.
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// The contract, from this repository (set ARENA_PROTO when this file is copied elsewhere).
const PROTO = process.env.ARENA_PROTO ||
  path.join(__dirname, '..', '..', 'proto', 'arena', 'v1', 'arena.proto');
// keepCase: field names exactly as in the .proto (deadline_ms, legal_bids).
// enums: String gives readable values ('HEARTS', 'PLAY'); longs: Number makes
// the uint64 seq a plain number; defaults: unset fields read as 0 / '' / [].
// oneofs: each oneof gets a virtual field naming the member that is set, so
// a RefereeMessage has message.kind === 'request' and message.request = {...}.
const packageDef = protoLoader.loadSync(PROTO, {
  keepCase: true, enums: String, longs: Number, defaults: true, oneofs: true,
});
const arena = grpc.loadPackageDefinition(packageDef).arena.v1;

// ---- Cards: the wire's {suit, rank} enums <-> 2-character codes ("TH", "SJ")
const SUITS = { SPADES: 'S', HEARTS: 'H', CLUBS: 'C', DIAMONDS: 'D' };
const RANKS = {
  TWO: '2', THREE: '3', FOUR: '4', FIVE: '5', SIX: '6', SEVEN: '7', EIGHT: '8',
  NINE: '9', TEN: 'T', JACK: 'J', QUEEN: 'Q', KING: 'K', ACE: 'A',
};
const ORDER = '23456789TJQKA'; // side-suit order, low to high
const invert = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [v, k]));
const [SUIT_OF, RANK_OF] = [invert(SUITS), invert(RANKS)];

function toCode(card) {
  if (card.suit === 'JOKER') return card.rank === 'BIG_JOKER' ? 'BJ' : 'SJ';
  return RANKS[card.rank] + SUITS[card.suit];
}
function toCard(code) {
  if (code === 'BJ') return { suit: 'JOKER', rank: 'BIG_JOKER' };
  if (code === 'SJ') return { suit: 'JOKER', rank: 'SMALL_JOKER' };
  return { suit: SUIT_OF[code[1]], rank: RANK_OF[code[0]] };
}
const codes = (cards) => cards.map(toCode);
const points = (code) => ({ 5: 5, T: 10, K: 10 })[code[0]] || 0;

// ---- The one rule every follower needs: a card's effective suit (RULES.md §3).
// Trumps are both jokers, every card of the level rank, and every card of the
// trump suit (view.trump.suit is SUIT_UNSPECIFIED in a no-trump deal).
function trumpOf(view) {
  const t = view.trump;
  return { level: RANKS[t.level], suit: t.no_trump ? null : SUITS[t.suit] || null };
}
function isTrump(code, trump) {
  return code[1] === 'J' || code[0] === trump.level || code[1] === trump.suit;
}
const effectiveSuit = (code, trump) => (isTrump(code, trump) ? 'TRUMP' : code[1]);

// A strength to sort by: side cards by rank, trump-suit cards above them, then
// off-suit level cards (all equal: none beats another), the trump-suit level
// card, SJ, BJ. Equal strength never wins a trick (the earlier card stays ahead).
function strength(code, trump) {
  if (code === 'BJ') return 104;
  if (code === 'SJ') return 103;
  if (code[0] === trump.level) return code[1] === trump.suit ? 102 : 101;
  return ORDER.indexOf(code[0]) + (code[1] === trump.suit ? 50 : 0);
}
// Cheapest first: side cards before trumps, cards without points first, low first.
function cheapness(code, trump) {
  return (isTrump(code, trump) ? 1000 : 0) + points(code) * 10 + strength(code, trump);
}
const byCheapness = (trump) => (a, b) => cheapness(a, trump) - cheapness(b, trump);

// Every pair in a list of codes (a face held twice), lowest first.
function pairsIn(cards, trump) {
  const twice = new Set(cards.filter((c, i) => cards.indexOf(c) !== i));
  return [...twice].sort((a, b) => strength(a, trump) - strength(b, trump));
}
function removeOnce(cards, taken) { // a multiset difference
  const rest = [...cards];
  taken.forEach((c) => rest.splice(rest.indexOf(c), 1));
  return rest;
}

// Who is winning a trick of singles: a trump beats a side card, a higher card
// of the same effective suit beats a lower one, and a tie stays with the
// earlier play; a card of another side suit never wins.
function singlesWinner(trick, trump) {
  let best = { seat: trick.plays[0].seat, card: toCode(trick.plays[0].cards[0]) };
  for (const play of trick.plays.slice(1)) {
    const card = toCode(play.cards[0]);
    const [s, b] = [effectiveSuit(card, trump), effectiveSuit(best.card, trump)];
    if ((s === b && strength(card, trump) > strength(best.card, trump)) || (s === 'TRUMP' && b !== 'TRUMP')) {
      best = { seat: play.seat, card };
    }
  }
  return best;
}

// ---- Decisions. Each returns a list of card codes (an empty list passes a bid).
// The request alone is enough: its view is a complete snapshot, so the bot keeps
// no state between requests (and survives a reconnection for free).
function decide(request) {
  const view = request.view;
  const hand = codes(view.hand);
  if (request.kind === 'BID') return bid(request, hand);
  const trump = trumpOf(view);
  if (request.kind === 'BURY') return [...hand].sort(byCheapness(trump)).slice(0, request.count);
  if (request.kind !== 'PLAY') return codes(request.fallback.cards); // a kind we don't know
  const trick = view.current_trick;
  if (!trick || trick.plays.length === 0) return lead(hand, trump);
  return follow(request, hand, trump, trick);
}

// Bid when it looks worth it: always with a pair; with a single level card
// only when a quarter of the hand is of that suit. legal_bids lists every bid
// allowed right now, so this never sends an illegal one.
function bid(request, hand) {
  let best = [];
  for (const b of request.legal_bids) {
    const shown = codes(b.cards);
    const suit = shown[0][1];
    const long = hand.filter((c) => c[1] === suit).length >= Math.max(3, hand.length / 4);
    if (shown.length > best.length && (shown.length > 1 || long)) best = shown;
  }
  return best;
}

// Lead the strongest side card (as a pair if we hold two of it); with only
// trumps left, the weakest trump. A single and a pair are always legal leads.
function lead(hand, trump) {
  const side = hand.filter((c) => !isTrump(c, trump));
  const pool = side.length ? side : hand;
  const sorted = [...pool].sort((a, b) => strength(a, trump) - strength(b, trump));
  const card = side.length ? sorted[sorted.length - 1] : sorted[0];
  return hand.filter((c) => c === card).length >= 2 ? [card, card] : [card];
}

function follow(request, hand, trump, trick) {
  const led = codes(trick.plays[0].cards);
  const n = request.count; // = led.length
  const suit = effectiveSuit(led[0], trump);
  const mine = hand.filter((c) => effectiveSuit(c, trump) === suit);
  const cheap = (cards) => [...cards].sort(byCheapness(trump));

  // Short of the led suit: all of it, then our cheapest other cards. This is
  // legal whatever was led, even a tractor or a throw.
  if (mine.length <= n) return [...mine, ...cheap(removeOnce(hand, mine)).slice(0, n - mine.length)];

  if (n === 1) {
    // Singles: find who is winning so far, then take points with the cheapest
    // card that beats it; when the partner is winning, or nothing wins, play cheap.
    const { seat: winner, card: best } = singlesWinner(trick, trump);
    const beats = (c) => effectiveSuit(best, trump) === suit && strength(c, trump) > strength(best, trump);
    const winners = cheap(mine.filter(beats));
    const partnerWins = winner % 2 === request.view.seat % 2; // partners: seats 0+2, 1+3
    if (!partnerWins && trick.points > 0 && winners.length) return [winners[0]];
    return [cheap(mine)[0]];
  }
  if (n === 2 && led[0] === led[1]) {
    // A pair was led: we must follow with a pair of the suit if we hold one
    // (pairs inside a tractor count); otherwise any two cards of the suit.
    const pairs = pairsIn(mine, trump);
    if (pairs.length) return [pairs[0], pairs[0]];
    return cheap(mine).slice(0, 2);
  }
  // A tractor or a throw, and we hold more than enough of its suit: the shape
  // rules get subtle (RULES.md §7), so play the legal action the referee sent.
  return codes(request.fallback.cards);
}

// ---- The connection: one bidirectional Play stream for the whole match.
function option(name, envName) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : process.env[envName] || '';
}

function main() {
  const server = option('server', 'ARENA_SERVER') || '127.0.0.1:50051';
  const token = option('token', 'ARENA_TOKEN');
  const name = option('name', 'ARENA_BOT_NAME') || 'node_bot';
  const botKey = option('bot-key', 'ARENA_BOT_KEY');
  if (!token && botKey) { // a registered bot: wait in the lobby (docs/competition.md)
    const parallel = Number(option('parallel', 'ARENA_PARALLEL')) || 1;
    return lobby({ server, botKey, name, parallel, credentials: credentials(), playing: new Set(), lostAt: 0 });
  }
  if (!token) {
    console.error(`${name}: no seat token (--token or ARENA_TOKEN)`);
    process.exit(2);
  }
  play({ server, token, name, credentials: credentials(), faults: 0, accepted: 0, over: false, lostAt: 0 });
}

// Plaintext, or TLS: --tls-ca (ARENA_TLS_CA) is the CA that signed the server's
// certificate (--tls alone trusts the system's roots); --tls-cert and --tls-key
// (ARENA_TLS_CERT, ARENA_TLS_KEY) are this bot's certificate when the server
// asks for one (mutual TLS).
function credentials() {
  const [ca, cert, key] = ['tls-ca', 'tls-cert', 'tls-key'].map(
    (name) => option(name, `ARENA_${name.replace('-', '_').toUpperCase()}`));
  const tls = ca || cert || process.argv.includes('--tls') ||
    !['', '0', undefined].includes(process.env.ARENA_TLS);
  if (!tls) return grpc.credentials.createInsecure();
  const read = (file) => (file ? fs.readFileSync(file) : null);
  return grpc.credentials.createSsl(read(ca), read(key), read(cert));
}

// One Play stream. If it breaks before MatchEnd, connect again with the same
// token (for up to 30 s): the referee re-sends the pending request.
function play(bot, server = bot.server) {
  // no bandwidth-delay pings: one sent after an answer would date its arrival late
  const client = new arena.Arena(server, bot.credentials, { "grpc.http2.bdp_probe": 0 });
  const call = client.Play(); // no gRPC deadline: the stream lasts the whole match

  // The server sends its initial metadata as soon as it accepts the stream.
  // Wait for it before the first write: a bad token is then reported cleanly
  // as UNAUTHENTICATED.
  // verdicts: 'VERDICT_FAULTS_ONLY' asks for a Verdict only when an answer is not
  // accepted; an accepted one is acknowledged by `accepted_seq` on the next message
  // (one message less per decision). Leave it out to get a Verdict for every answer.
  call.on('metadata', () => {
    call.write({ hello: { token: bot.token, name: bot.name, version: '1.0', protocol: 1,
                          verdicts: 'VERDICT_FAULTS_ONLY' } });
  });

  call.on('data', (message) => {
    if (message.accepted_seq) bot.accepted += 1; // our previous answer, accepted
    switch (message.kind) {
      case 'welcome':
        bot.lostAt = 0;
        console.error(`${bot.name}: seat ${message.welcome.seat} in ${message.welcome.match_id}` +
          (message.welcome.resumed ? ' (resumed)' : ''));
        break;
      case 'request': {
        const request = message.request;
        let chosen;
        try {
          chosen = decide(request);
        } catch (err) { // a bug in the bot: the fallback is always legal
          console.error(`${bot.name}: decide failed (${err.stack}); playing the fallback`);
          chosen = codes(request.fallback.cards);
        }
        // Echo the request's seq: an answer with any other seq is never applied.
        call.write({ action: { seq: request.seq, cards: chosen.map(toCard) } });
        break;
      }
      case 'verdict': // with VERDICT_FAULTS_ONLY, only for an answer not accepted
        if (message.verdict.accepted) {
          bot.accepted += 1;
        } else {
          bot.faults += 1;
          console.error(`${bot.name}: fault on seq ${message.verdict.seq}: ${message.verdict.reason}`);
        }
        break;
      case 'match_end': {
        const r = message.match_end.result;
        console.error(`${bot.name}: match over (${r.reason}), winner team ${r.winner_team}, ` +
          `levels ${r.levels.map((l) => RANKS[l] || l).join('/')}, ` +
          `accepted ${bot.accepted}, my faults ${bot.faults}`);
        bot.over = true;
        call.end(); // half-close our side; the server then ends the stream
        break;
      }
      default: // 'notice' (events between requests) and anything newer: ignore
        break;
    }
  });

  call.on('error', (err) => { // e.g. UNAUTHENTICATED for a bad token, UNAVAILABLE
    const code = grpc.status[err.code];
    // arena serve --workers: the seat plays at another address (docs/workers.md).
    const moved = code === 'FAILED_PRECONDITION' && err.metadata &&
      err.metadata.get('arena-seat-address')[0];
    if (moved) return void (bot.next = String(moved));
    // ALREADY_EXISTS after having played: back before the referee saw the old stream go.
    const early = code === 'ALREADY_EXISTS' && bot.lostAt;
    const refused = !early && ['UNAUTHENTICATED', 'ALREADY_EXISTS', 'FAILED_PRECONDITION'].includes(code);
    if (refused || !bot.lostAt) console.error(`${bot.name}: ${code}: ${err.details}`);
    if (refused) [bot.over, process.exitCode] = [true, 1];
  });
  call.on('status', () => { // the stream is finished, one way or another
    client.close();
    if (bot.over) return bot.done && bot.done();
    if (bot.next) { // redirected: go there now; after a lost stream, ask bot.server again
      const next = bot.next;
      bot.next = null;
      return play(bot, next);
    }
    bot.lostAt = bot.lostAt || Date.now();
    if (Date.now() - bot.lostAt < 30000) return setTimeout(() => play(bot), 500);
    console.error(`${bot.name}: gave up reconnecting`);
    if (bot.done) return bot.done();
    process.exitCode = 1;
  });
}

// Lobby mode: join with the bot key and play every seat the server offers (a
// seat offered again while we play it, after a restart, is not played twice).
function lobby(l) {
  const client = new arena.Lobby(l.server, l.credentials);
  const call = client.Join({ bot_key: l.botKey, parallel: l.parallel, name: l.name, version: '1.0', protocol: 1 });
  call.on('data', (message) => {
    l.lostAt = 0;
    if (message.kind === 'welcome') console.error(`${l.name}: in the lobby as ${message.welcome.bot}`);
    if (message.kind !== 'offer') return;
    const seat = `${message.offer.match_id}/${message.offer.seat}`;
    if (l.playing.has(seat)) return;
    l.playing.add(seat);
    play({ server: l.server, token: message.offer.seat_token, name: l.name, credentials: l.credentials,
      faults: 0, accepted: 0, over: false, lostAt: 0, done: () => l.playing.delete(seat) });
  });
  call.on('error', (err) => { // UNAUTHENTICATED: a wrong or rotated key; PERMISSION_DENIED: disabled
    const code = grpc.status[err.code];
    if (['UNAUTHENTICATED', 'PERMISSION_DENIED'].includes(code)) {
      console.error(`${l.name}: ${code}: ${err.details}`);
      [l.refused, process.exitCode] = [true, 1];
    }
  });
  call.on('status', () => {
    client.close();
    if (l.refused) return;
    l.lostAt = l.lostAt || Date.now();
    if (Date.now() - l.lostAt < 60000) return setTimeout(() => lobby(l), 500);
    console.error(`${l.name}: gave up on the lobby`);
    process.exitCode = 1;
  });
}

main();
