// queue.js: the queue page follows the event's board, and looks for itself rarely.
// A look (the section's htmx request, hx-trigger="queuepoll") costs the server a
// session, a Redis script and a render; the board (GET …/queue/board, data-board) is
// the same for every waiter and cached, so a crowd reading it costs one read a second.
// The status of the last look carries, on its [data-poll-after] span, the paces, the
// state shown and the waiter's number, place and served at that look.
// Every pollAfter seconds (1 to 5, as waitroom.pollAfter) the page reads the board and
// rewrites the marked texts (data-q) in the server's words (web/page_queue.go):
// position = number − served (one high for each waiter ahead who left since the look),
// wait = (ahead + 1) × secondsPerPlace[Min, Max] + noticeSeconds, or, when ahead + 1 is
// above the board's lastsFor, the words that the tickets may be gone first. It looks:
//   - lookAfter seconds after the last look, as the server says (waitroom's lookAfter:
//     2.5 min when its turn is due within that, else about a minute; in the pre-queue
//     after the draw, by its place);
//   - at once when the board's head reaches its place: its turn has come (a pre-queue
//     place is the number the draw orders by, so this holds from the draw on);
//   - soon, 0 to 3 s at random so that a crowd does not ask in one instant (0 to 10 s
//     after the draw when the board has no drawn places to stand among), when the board
//     shows what the page cannot say itself: a state other than the one shown (the
//     draw done, the board back after a pause), fewer served than at the look (Redis
//     lost the queue), or no board (the room turned off). A waiting page shows all held
//     and sold out, begun or ended, from the board itself, without a look.
// After the draw a pre-queue page has a drawn place but no number until it looks, which
// the server spreads over the minute after the draw by place (lookAfterSeconds): it
// shows meanwhile where the place stands among the board's drawn ones, uniform draws:
// about (drawn − 1) × (place − head) / (1 − head) ahead ("about number n").
// A board that fails (the network, a 5xx) leaves the page as it is and is read again at
// the pace. Paces count from when the request went out, so that a slow answer does not
// stretch them; a look that fails is tried again at the last pace. A page that cannot
// follow the board (no fetch, or waiting without a number) looks at the pace.
// No eval, no inline script or style: it runs under the page's strict CSP.
(function () {
  "use strict";
  // The draw sends the whole pre-queue to look for its number: spread over 10 s (a
  // waiter drawn near the front hears of its turn from the board meanwhile).
  var JITTER = 3000, DRAW_JITTER = 10000;
  var q = null, cfg = null, gen = 0, pace = 3, sentAt = 0, inFlight = false;
  var lookTimer = 0, lookAt = 0, soonAsked = false, turnAsked = NaN, boardTimer = 0, left = false;

  function since(t) { return t ? Date.now() - t : 0; }
  function attr(el, name) { return el.getAttribute("data-" + name) || ""; }
  function num(el, name) { return parseFloat(attr(el, name)); }

  // The server's words: aheadText, waitText, oddsText, roughly (web/page_queue.go) and
  // wording.Thousands. Kept in step by TestBrowserQueueWordsAsServer, through
  // window.queueWords below.
  function thousands(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function countOf(n, unit) { return n + " " + unit + (n === 1 ? "" : "s"); }
  function aheadText(n) {
    if (n === 0) return "Nobody is ahead of you.";
    if (n === 1) return "1 person is ahead of you.";
    return thousands(n) + " people are ahead of you.";
  }
  // lo and hi in seconds.
  function waitText(lo, hi, ahead) {
    var a, b;
    if (ahead === 0 && hi < 60) return "any moment now";
    if (!(hi > 0)) return "not known yet: it is measured from how fast people are let in";
    if (hi < 60) return "less than a minute";
    if (hi > 90 * 60) {
      a = Math.floor(lo / 3600);
      b = Math.ceil(hi / 3600);
      return a >= b || a === 0 ? "about " + countOf(b, "hour") : "about " + a + " to " + b + " hours";
    }
    a = Math.floor(lo / 60);
    b = Math.ceil(hi / 60);
    if (a >= b) return "about " + countOf(b, "minute");
    if (a === 0) return "up to " + countOf(b, "minute");
    return "about " + a + " to " + b + " minutes";
  }
  // As waitroom.LikelyGone: more ahead, the waiter included, than the free places are
  // likely to serve (lastsFor, -1 unknown).
  function likelyGone(position, lastsFor) { return lastsFor >= 0 && position > lastsFor; }
  function roughly(n) {
    if (n < 100) return n;
    var p = Math.pow(10, String(n).length - 2);
    return Math.floor((n + Math.floor(p / 2)) / p) * p;
  }
  function oddsText(left, ahead) {
    if (!(left > 0)) return "";
    var people = "nobody ahead of you";
    if (ahead === 1) people = "1 person ahead of you";
    else if (ahead > 1) people = thousands(ahead) + " people ahead of you";
    return "About " + thousands(roughly(left)) + " seats left, " + people + ".";
  }

  // following: the page knows its number and place, so the board says where it stands.
  function following() { return cfg.number > 0 && !isNaN(cfg.place); }
  // drawnAhead: after the draw, for a drawn place with no number yet, about how many
  // are ahead of it (see the top); -1 otherwise.
  function drawnAhead(b) {
    if (following() || isNaN(cfg.place) || cfg.place >= 1 || b.preQueue || !(b.drawn > 0)) return -1;
    var h = Math.max(b.head, 0);
    return cfg.place <= h ? 0 : Math.round((b.drawn - 1) * (cfg.place - h) / (1 - h));
  }
  // The state the board shows, named as views.QueueStatus.State names the page's.
  function boardState(b) {
    return b.soldOut ? "soldOut" : b.preQueue ? "preQueue" : b.allHeld ? "allHeld" : "waiting";
  }
  // As waitroom.pollAfter: every second when the turn (or the draw) may come within a
  // few, less often further back, at most every 5 s.
  function paceOf(b, ahead) {
    var d = 5;
    if (b.preQueue) d = (Date.parse(b.drawAt) - Date.parse(b.at)) / 1000;
    else if ((following() || drawnAhead(b) >= 0) && b.secondsPerPlaceMin > 0) d = (ahead + 1) * b.secondsPerPlaceMin / 4;
    else if (!isNaN(cfg.place) && !following()) d = 1; // drawn, number not known yet: the head may come any moment
    if (isNaN(d)) d = 5;
    return Math.min(Math.max(Math.ceil(d), 1), 5);
  }

  function put(name, text) {
    var el = q.querySelector('[data-q="' + name + '"]');
    if (el && el.textContent !== text) el.textContent = text;
    return el;
  }
  function hide(name, hidden) {
    var el = q.querySelector('[data-q="' + name + '"]');
    if (el) el.hidden = hidden;
  }
  // show: about, the position is the drawn place's estimate, not the look's number.
  function show(b, ahead, about) {
    hide("line", b.soldOut);
    hide("soldout", !b.soldOut);
    // More ahead than the unsold places are likely to serve (the board's lastsFor, as
    // waitroom's Status.LikelyGone): no wait, but why.
    var gone = !b.allHeld && likelyGone(ahead + 1, b.lastsFor);
    hide("estimate", b.allHeld || gone);
    hide("held", !b.allHeld);
    hide("gone", b.allHeld || !gone);
    if (b.soldOut) return put("position", "Sold out");
    put("position", about ? "You are about number " + thousands(roughly(ahead + 1)) + " in the queue"
      : "You are number " + thousands(ahead + 1) + " in the queue");
    put("ahead", aheadText(ahead));
    var notice = b.noticeSeconds || 0; // how long after its turn the page learns of it
    put("wait", waitText((ahead + 1) * b.secondsPerPlaceMin + notice, (ahead + 1) * b.secondsPerPlaceMax + notice, ahead));
    var odds = put("odds", oddsText(b.seatsLeft, ahead));
    if (odds) odds.hidden = !odds.textContent;
    var bar = q.querySelector('[data-q="progress"]');
    if (bar) drawBar(bar, ahead, 0); // its max is how many were ahead when the visitor joined
  }
  // drawBar draws a progress bar through the line with ahead still ahead: its whole is
  // the most ever seen ahead (its max, or atLeast), which it returns. The door page
  // draws its bar with it too (window.queueWords.bar).
  function drawBar(bar, ahead, atLeast) {
    var total = Math.max(parseInt(bar.getAttribute("max"), 10) || 1, atLeast || 0, ahead, 1);
    bar.setAttribute("max", total);
    bar.setAttribute("value", total - ahead);
    var pct = Math.floor((total - ahead) * 100 / total) + "%";
    if (bar.textContent !== pct) bar.textContent = pct;
    return total;
  }

  function look() {
    lookAt = 0;
    if (!inFlight && !left) htmx.trigger(q, "queuepoll");
  }
  // lookIn makes the next look come within ms at the latest.
  function lookIn(ms) {
    var at = Date.now() + ms;
    if (lookAt && lookAt <= at) return;
    clearTimeout(lookTimer);
    lookAt = at;
    lookTimer = setTimeout(look, Math.max(ms, 0));
  }
  // soon: a look within spread ms (0 to 3 s by default), for what the whole crowd sees
  // at once.
  function soon(spread) {
    if (soonAsked) return;
    soonAsked = true;
    lookIn(Math.random() * (spread || JITTER));
  }

  function boardIn(ms) {
    clearTimeout(boardTimer);
    boardTimer = setTimeout(readBoard, Math.max(ms, 250));
  }
  function readBoard() {
    if (inFlight || left) return;
    var g = gen, at = Date.now();
    function again() { if (g === gen) boardIn(pace * 1000 - since(at)); }
    fetch(cfg.board, { credentials: "omit", headers: { Accept: "application/json" } }).then(function (r) {
      if (g !== gen) return;
      if (r.ok) return r.json().then(function (b) { if (g === gen) onBoard(b, at); });
      if (r.status < 500 && r.status !== 429) soon(); // no room any more: the look says where to go
      again();
    }).catch(again);
  }
  function onBoard(b, at) {
    var ahead = 0, state = boardState(b);
    // Its turn: at once, no jitter. A pre-queue place is the number the draw orders
    // by, so a waiter drawn near the front learns it here before its first look.
    if (!isNaN(cfg.place) && b.head >= cfg.place && turnAsked !== cfg.place) {
      turnAsked = cfg.place;
      lookIn(0);
    }
    // A waiting page shows all held and sold out from the board itself: a crowd that
    // looked whenever they began or ended would ask all at once, each time.
    var itself = following() && (cfg.state === "waiting" || cfg.state === "allHeld");
    if (following()) {
      if (b.served < cfg.served) soon();
      ahead = Math.max(0, cfg.number - b.served - 1);
      if (itself) show(b, ahead);
    }
    var drawn = drawnAhead(b);
    if (drawn >= 0) { // drawn, no number yet: where the place stands, until the look
      var box = q.querySelector('[data-q="drawn"]');
      if (box && box.hidden) {
        box.hidden = false;
        hide("draw", true);
      }
      ahead = drawn;
      show(b, ahead, true);
    }
    if (state !== cfg.state && !itself && drawn < 0) soon(cfg.state === "preQueue" ? DRAW_JITTER : JITTER);
    pace = paceOf(b, ahead);
    boardIn(pace * 1000 - since(at));
  }

  // settle starts over from the status a look has just put in place (or the page's).
  function settle() {
    clearTimeout(lookTimer);
    clearTimeout(boardTimer);
    lookAt = 0;
    soonAsked = false;
    gen++;
    var el = q.querySelector("[data-poll-after]");
    if (!el) return;
    cfg = {
      board: window.fetch ? attr(el, "board") : "", state: attr(el, "state"),
      number: num(el, "number"), place: num(el, "place"), served: num(el, "served"),
      look: num(el, "look-after")
    };
    var s = num(el, "poll-after");
    if (s > 0) pace = s;
    if (cfg.state === "admitted") return; // the answer sends the browser on
    if (!boards()) return lookIn(Math.max(pace * 1000 - since(sentAt), 250));
    boardIn(pace * 1000 - since(sentAt));
    // Before the draw, and while paused, the crowd's looks come due together (at the
    // draw, as Redis is back): spread them.
    var jitter = cfg.state === "preQueue" || cfg.state === "paused" ? Math.random() * JITTER : 0;
    lookIn(Math.max((cfg.look > 0 ? cfg.look : pace) * 1000 - since(sentAt), 250) + jitter);
  }
  // boards: the status shown can be followed on the board.
  function boards() {
    if (!cfg.board || cfg.state === "admitted") return false;
    return following() || (cfg.state !== "waiting" && cfg.state !== "allHeld");
  }

  // leave: the page is on its way elsewhere; nothing more of its own.
  function leave() {
    clearTimeout(lookTimer);
    clearTimeout(boardTimer);
    lookAt = 0;
    gen++;
    left = true; // look and readBoard do nothing from now on
  }
  // Back to a page kept from before it left (the back button): what it shows is stale
  // and it has stopped; load it afresh, which asks the room where it stands.
  window.addEventListener("pageshow", function (e) { if (e.persisted && left) location.reload(); });

  function fromQueue(e) { return e.target && e.target.id === "queue"; }
  document.addEventListener("htmx:beforeRequest", function (e) {
    if (!fromQueue(e)) return;
    sentAt = Date.now();
    inFlight = true;
    clearTimeout(lookTimer);
    clearTimeout(boardTimer);
    lookAt = 0;
    gen++;
  });
  // afterRequest comes for every ending, success or not: until a new status is in
  // place (afterSettle, which starts over from it) the page goes on as it was, and a
  // look that failed is tried again at the last pace.
  document.addEventListener("htmx:afterRequest", function (e) {
    if (!fromQueue(e)) return;
    inFlight = false;
    // Admitted: htmx follows the answer's HX-Redirect to the seat map. Until that page
    // is in, this one neither looks nor reads the board: a look would be told the same
    // and start the navigation over, again and again on a slow phone.
    var xhr = e.detail && e.detail.xhr;
    if (xhr && xhr.getResponseHeader("HX-Redirect")) return leave();
    if (cfg && boards()) boardIn(pace * 1000 - since(sentAt));
    lookIn(Math.max(pace * 1000 - since(sentAt), 250));
  });
  document.addEventListener("htmx:afterSettle", function (e) { if (fromQueue(e)) settle(); });
  function start() {
    q = document.getElementById("queue");
    if (q && window.htmx) settle();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  // The wording, for the test that holds it to the server's.
  window.queueWords = { ahead: aheadText, wait: waitText, odds: oddsText, gone: likelyGone, bar: drawBar };
})();
