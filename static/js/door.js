// door.js: the front door's waiting room (views/door.templ, web/queue_place.go). The
// page is the same for everyone; the visitor's place is its own cookie. The page takes
// a place with one request (POST …/queue/place, which keeps a place the visitor has:
// the browser's Sec-Fetch-Site passes the CSRF check without a token), or, when the
// page asks a proof of work, looks for the visitor's place (GET) before the proof and
// the POST; then it reads the event's board (one cached read for the whole crowd) every
// second near its turn, up to every 5 s far back (paceOf), and works out from it and
// the place where it stands (the position, the wait, the seats left against the
// people ahead, the progress through the line), in the server's
// words (queue.js's window.queueWords): a place (group, tiebreak) has had its turn once it comes before
// the board's cursor; about number − passed are ahead of it (in the pre-queue, its
// share of the pre-queue beyond the cursor). At its turn it claims (POST
// …/queue/claim, with an Idempotency-Key of the place's: claimKey), which makes the
// session and the admission, and goes to the seats;
// a claim that finds every slot taken is answered "not yet" and asked again.
// A board showing another epoch means Redis lost the counts: the place is taken again
// (the same place, counted again). An onsale of verified buyers refuses a session that
// has not confirmed an email (403 email_not_verified): the page goes to the
// registration page (data-verify). While only a presale's room takes arrivals, a
// session without an access code is refused (403 access_code_required): the page goes
// to the code page (data-code). A presale's code holder follows the presale room's
// board, which the place call names. No eval, no inline script or style.
(function () {
  "use strict";
  var box = null, csrf = "", place = null, words = null, keys = {};

  function attr(name) { return box.getAttribute("data-" + name) || ""; }
  function say(name, s) {
    var el = box.querySelector('[data-d="' + name + '"]');
    if (el && el.textContent !== s) el.textContent = s;
  }
  function api(method, url, proof, key) {
    var h = { Accept: "application/json" };
    if (csrf) h["X-CSRF-Token"] = csrf;
    if (proof) h["X-Altcha"] = proof;
    if (key) h["Idempotency-Key"] = key;
    return fetch(url, { method: method, headers: h, credentials: "same-origin" }).then(function (r) {
      return r.json().then(function (j) { return { status: r.status, body: j }; });
    });
  }
  function later(f, seconds) { setTimeout(f, (seconds || 1) * 1000); }
  function unverified(a) { return a.status === 403 && a.body && a.body.error === "email_not_verified" && attr("verify"); }
  function needsCode(a) { return a.status === 403 && a.body && a.body.error === "access_code_required" && attr("code"); }
  function board() { return (place && place.board) || attr("board"); }

  function passed(p, b) { return p.group < b.cursorGroup || (p.group === b.cursorGroup && p.tiebreak < b.cursorFrac); }
  function ahead(p, b) {
    if (p.group === 0) {
      var from = b.cursorGroup === 0 ? b.cursorFrac : 0;
      return Math.floor(b.preQueueCount * Math.max(0, p.tiebreak - from));
    }
    return Math.floor(Math.max(0, (p.number || 0) - b.passed));
  }
  // The wait at per seconds a place, as waitroom.Place.Wait works it out: the
  // position's worth from when the cursor opens (the draw's settle, which the
  // pre-queue waits out first), no sooner than the cursor may enter the place's
  // group, and the notice of the turn.
  function wait(p, b, pos, per) {
    if (!(per > 0)) return 0;
    var at = Date.parse(b.at), opens = Date.parse(b.opensAt);
    if (isNaN(at) || isNaN(opens)) at = opens = 0;
    var start = Math.max(opens - at, 0) / 1000;
    var group = Math.max(opens + p.group * (b.groupSpanSeconds || 0) * 1000 - at, 0) / 1000 - start;
    return start + Math.max(pos * per, group) + b.noticeSeconds;
  }
  // How soon the board is read again, as waitroom.Place.PollAfter works it out: every
  // second while the turn (or the draw) may come within a few, a quarter of the
  // shortest wait further back, at most every 5 s; every 5 s with no figure.
  function paceOf(p, b) {
    var d = 5;
    if (passed(p, b)) d = 1;
    else if (b.soldOut) d = 5;
    else if (b.preQueue && p.group === 0) d = (Date.parse(b.drawAt) - Date.parse(b.at)) / 1000;
    else if (b.secondsPerPlaceMin > 0) d = (wait(p, b, ahead(p, b) + 1, b.secondsPerPlaceMin) - b.noticeSeconds) / 4;
    if (isNaN(d)) d = 1;
    return Math.min(Math.max(Math.ceil(d), 1), 5);
  }
  function shown(name, on) {
    var el = box.querySelector('[data-d="' + name + '"]');
    if (el) el.hidden = !on;
  }
  // show says where the place stands on board b: its position and wait (or why there
  // is none: everything left held, or the tickets likely gone first), the seats left
  // against the people ahead, and the progress through the line.
  function show(p, b) {
    var drawn = !(b.preQueue && p.group === 0); // a later group's place is queued after the draw
    shown("held", drawn && !b.soldOut && b.allHeld);
    if (b.soldOut || !drawn) shown("odds", false), shown("bar", false);
    if (b.soldOut) return say("title", "Sold out"), say("ahead", ""), say("wait", "");
    if (!drawn) {
      say("title", "You are in the waiting room");
      say("ahead", "Before the " + (place.presale ? "presale" : "onsale") + ": your place is drawn at random when it opens. Arriving early or reloading does not change your chances.");
      return say("wait", "");
    }
    var n = ahead(p, b), pos = n + 1, odds = words.odds(b.seatsLeft, n);
    say("title", "You are in the queue");
    say("ahead", words.ahead(n));
    say("odds", odds);
    shown("odds", odds !== "");
    progress(n);
    if (b.allHeld) return say("wait", "");
    if (words.gone(pos, b.lastsFor)) return say("wait", "The tickets may be gone before your turn.");
    var lo = wait(p, b, pos, b.secondsPerPlaceMin), hi = wait(p, b, pos, b.secondsPerPlaceMax);
    say("wait", "Your wait: " + words.wait(lo, hi, n) + ".");
  }
  // progress draws the share of the line passed since the page first saw how many were
  // ahead of the place, with the queue page's bar (queueWords.bar); that first count is
  // kept for the tab, so that a reload does not start the bar again from nothing.
  function progress(n) {
    var bar = box.querySelector('[data-d="progress"]');
    if (!bar) return;
    var name = placeKey("ahead"), seen = parseInt(recall(name), 10) || 0;
    var total = words.bar(bar, n, seen);
    if (total !== seen) keep(name, String(total));
    shown("bar", true);
  }
  // placeKey names what the tab keeps about its place in sessionStorage.
  function placeKey(what) { return what + ":" + attr("claim") + ":" + place.group + ":" + place.tiebreak; }
  function recall(name) {
    try { return sessionStorage.getItem(name) || ""; } catch (e) { return ""; }
  }
  function keep(name, value) {
    try { sessionStorage.setItem(name, value); } catch (e) { /* this page keeps it */ }
  }

  function follow() {
    fetch(board(), { credentials: "omit" }).then(function (r) { return r.ok ? r.json() : null; }).then(function (b) {
      if (!b) return later(follow);
      if (b.epoch && place.epoch && b.epoch !== place.epoch) return take("", follow);
      if (passed(place, b)) return claim();
      show(place, b);
      later(follow, paceOf(place, b));
    }, function () { later(follow); });
  }
  // claimKey is the place's claim's Idempotency-Key, kept for the tab: a claim whose
  // answer (and the session it made) was lost on the way is sent again with it and
  // admitted as the buyer the first one made, not refused as another visitor's.
  function claimKey() {
    var name = placeKey("claim"), k = keys[name] || recall(name);
    if (!k && window.crypto && crypto.getRandomValues) {
      var b = new Uint8Array(16);
      crypto.getRandomValues(b);
      k = Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
      keep(name, k);
    }
    return (keys[name] = k || "");
  }
  function claim() {
    say("title", "It is your turn");
    api("POST", attr("claim"), "", claimKey()).then(function (a) {
      if (a.status === 200 && a.body.admitted) return location.assign(attr("seats"));
      // A place spent (its admission ended) is dropped by the server: start afresh.
      if (a.status === 409 && a.body.error === "place_used") return location.reload();
      if (a.status === 409) return say("ahead", a.body.message || ""), say("wait", "");
      // Its turn, but every slot is taken (a claim after its window): asked again.
      if (a.status === 200 && a.body.turn) say("ahead", "Every shopper's slot is taken just now: you go in as soon as one frees up.");
      later(follow);
    }, function () { later(follow); });
  }
  // take takes or keeps the visitor's place. A browser that sends no Sec-Fetch-Site
  // is refused by the CSRF check: it fetches the token (GET …/queue/place) and asks
  // again. A new place the proof of work guards is asked again with the solution.
  function take(proof, then) {
    api("POST", attr("place"), proof).then(function (a) {
      if (unverified(a)) return location.assign(attr("verify"));
      if (needsCode(a)) return location.assign(attr("code"));
      if (a.status === 200 && a.body.admitted) return location.assign(attr("seats")); // the room is off
      if (a.status === 200 && a.body.placed) {
        place = a.body;
        var form = box.querySelector("form[data-door-proof]");
        if (form) form.hidden = true;
        return then();
      }
      if (a.status === 403 && a.body && a.body.error === "csrf_failed" && !csrf) {
        // Once: a GET that gives no token leaves the refusal said, not asked again.
        return token(function () { if (csrf) take(proof, then); else say("ahead", a.body.message || ""); });
      }
      say("ahead", (a.body && a.body.message) || "The queue could not be joined just now.");
      // Paused: asked again; any other refusal (a limit, a spent proof) is said and
      // left to the visitor, who reloads.
      if (a.status === 503) later(function () { take(proof, then); });
    }, function () { later(function () { take(proof, then); }); });
  }
  // token is the place call's GET: the CSRF token (for a browser that sends no
  // Sec-Fetch-Site) and the place the visitor has, if any.
  function token(then) {
    api("GET", attr("place")).then(function (a) {
      if (unverified(a)) return location.assign(attr("verify"));
      if (needsCode(a)) return location.assign(attr("code"));
      csrf = (a.body && a.body.csrfToken) || "";
      then(a);
    }, function () { later(function () { token(then); }); });
  }
  // start takes a place with one POST when no proof of work is asked. With one, it
  // first asks whether the visitor has a place already (GET), so that a returning
  // visitor is not asked to solve another.
  function start() {
    box = document.querySelector("[data-door]");
    words = window.queueWords;
    if (!box || !window.fetch || !words) return;
    var form = box.querySelector("form[data-door-proof]");
    if (!form) return take("", follow);
    token(function (a) {
      if (a.body && a.body.admitted) return location.assign(attr("seats")); // the room is off
      if (a.body && a.body.placed) return (place = a.body), follow();
      say("title", "Joining the queue");
      form.addEventListener("submit", function (e) {
        e.preventDefault();
        take(String(new FormData(form).get("altcha") || ""), follow);
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
