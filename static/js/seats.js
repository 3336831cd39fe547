// seats.js: the seat page's small enhancements on top of htmx. The page works without
// it; with it (and countdown.js, which counts holds down):
//   - the buyer's own seats stay marked as theirs after the live stream replaced them
//     with their public state ("held"): the stream sends one rendering to everyone;
//     they stay ticked, and unticking one takes it out of the basket;
//   - the map is one tab stop and arrow keys move between seats (roving tabindex);
//     focus survives a seat being replaced under it;
//   - the focused or hovered seat's name and price show in a tooltip;
//   - seats that cannot be ticked (aria-disabled) ignore clicks; a tap dismisses the
//     message;
//   - seats the live stream sends that are not on this page (another section of a big
//     venue) are dropped before htmx looks for them, which it would log as errors.
// No eval, no inline script or style: it runs under the page's strict CSP.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // The stream carries every changed seat of the event; a section's page shows only its
  // own. The extension "seats-on-page" (hx-ext on the live map) filters the stream's
  // messages, and only those: htmx's own requests pass untouched.
  if (window.htmx) {
    htmx.defineExtension("seats-on-page", {
      transformResponse: function (text, xhr, elt) {
        if (xhr || !elt || !elt.hasAttribute || !elt.hasAttribute("sse-swap")) return text;
        var t = document.createElement("template");
        t.innerHTML = text;
        var seats = t.content.querySelectorAll("[hx-swap-oob][id]");
        var dropped = false;
        for (var i = 0; i < seats.length; i++) {
          if (!document.getElementById(seats[i].id)) {
            seats[i].remove();
            dropped = true;
          }
        }
        return dropped ? t.innerHTML : text;
      }
    });
  }

  // The buyer's seats, marked again after live swaps.
  function markMine() {
    var panel = document.getElementById("hold-panel");
    if (!panel) return;
    var ids = (panel.getAttribute("data-mine") || "").split(" ");
    for (var i = 0; i < ids.length; i++) {
      var g = ids[i] && document.getElementById(ids[i]);
      if (!g || !g.classList.contains("held") || g.classList.contains("mine")) continue;
      g.classList.add("mine");
      var input = g.querySelector("input");
      var label = input && input.getAttribute("aria-label");
      if (label) {
        label = label.replace(/, held$/, ", held by you");
        input.setAttribute("aria-label", label);
        input.setAttribute("title", label);
      }
      if (input) {
        // As the server draws the buyer's seat (views.Seat): ticked, and unticking it
        // takes it out of the basket.
        var seat = ids[i].replace(/^seat-/, "");
        input.removeAttribute("aria-disabled");
        input.name = "keep";
        input.value = seat;
        input.checked = true;
        var shown = document.createElement("input");
        shown.type = "hidden";
        shown.name = "mine";
        shown.value = seat;
        input.parentNode.appendChild(shown);
      }
    }
  }

  // Keyboard: one tab stop for the map, arrows within it.
  var current = null; // the element id of the seat last focused
  var focusInMap = false;
  function seatOf(el) { return el && el.closest ? el.closest(".map .seat") : null; }
  function inputOf(g) { return g ? g.querySelector("input") : null; }
  function xOf(g) {
    var m = /translate\(([-\d.]+)/.exec(g.getAttribute("transform") || "");
    return m ? parseFloat(m[1]) : 0;
  }
  function rove() {
    var maps = document.querySelectorAll(".map.seats");
    for (var i = 0; i < maps.length; i++) {
      // Rows of sections a phone does not show (class "off", sections.js) are skipped.
      var inputs = maps[i].querySelectorAll(".row:not(.off) .seat input");
      if (!inputs.length) continue;
      var keep = current && document.getElementById(current);
      keep = keep && maps[i].contains(keep) && !keep.closest(".off") ? inputOf(keep) : null;
      if (!keep) keep = maps[i].querySelector(".row:not(.off) .seat.avail input") || inputs[0];
      for (var j = 0; j < inputs.length; j++) inputs[j].tabIndex = inputs[j] === keep ? 0 : -1;
    }
  }
  function move(from, key) {
    var row = from.closest(".row");
    if (!row) return null;
    var seats = Array.prototype.slice.call(row.querySelectorAll(".seat"));
    var at = seats.indexOf(from);
    switch (key) {
      case "ArrowLeft": return seats[at - 1] || null;
      case "ArrowRight": return seats[at + 1] || null;
      case "Home": return seats[0];
      case "End": return seats[seats.length - 1];
    }
    var rows = Array.prototype.slice.call(row.parentNode.querySelectorAll(".row:not(.off)"));
    var next = rows[rows.indexOf(row) + (key === "ArrowUp" ? -1 : 1)];
    if (!next) return null;
    var x = xOf(from), best = null, dist = Infinity;
    var cands = next.querySelectorAll(".seat");
    for (var i = 0; i < cands.length; i++) {
      var d = Math.abs(xOf(cands[i]) - x);
      if (d < dist) { dist = d; best = cands[i]; }
    }
    return best;
  }
  document.addEventListener("keydown", function (e) {
    var g = seatOf(e.target);
    if (!g || ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"].indexOf(e.key) < 0) return;
    var to = inputOf(move(g, e.key));
    if (!to) return;
    e.preventDefault();
    to.focus();
  });

  // Tooltip and focus tracking.
  function info(text) {
    var el = document.getElementById("seat-info");
    if (el && el.textContent !== text) el.textContent = text;
  }
  document.addEventListener("focusin", function (e) {
    var g = seatOf(e.target);
    focusInMap = !!g;
    if (!g) return;
    current = g.id;
    rove();
    info(e.target.getAttribute("aria-label") || "");
  });
  document.addEventListener("focusout", function (e) { if (seatOf(e.target)) info(""); });
  document.addEventListener("pointerover", function (e) {
    var g = seatOf(e.target);
    if (g) info(inputOf(g).getAttribute("aria-label") || "");
  });
  document.addEventListener("pointerout", function (e) { if (seatOf(e.target)) info(""); });

  // Seats that cannot be ticked stay unticked. A tap on the message dismisses it: on
  // the buyer's page it floats over the map (app.css) until the next one replaces it.
  document.addEventListener("click", function (e) {
    if (seatOf(e.target) && e.target.getAttribute("aria-disabled") === "true") e.preventDefault();
    var msg = e.target.closest && e.target.closest("#seat-message .msg");
    if (msg && !e.target.closest("a, button")) msg.remove();
  });

  // After htmx replaced parts of the page: mark, rove, and give focus back to the
  // seat it was on if that seat was replaced.
  var pending = false;
  function settle() {
    pending = false;
    markMine();
    rove();
    var active = document.activeElement;
    if (focusInMap && current && (!active || active === document.body)) {
      var input = inputOf(document.getElementById(current));
      if (input) input.focus();
    }
  }
  function soon() {
    if (!pending) { pending = true; requestAnimationFrame(settle); }
  }
  document.addEventListener("htmx:load", soon);
  document.addEventListener("htmx:afterSettle", soon);
  document.addEventListener("htmx:oobAfterSwap", soon);
  document.addEventListener("sections:shown", soon); // a phone shows other rows (sections.js)
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", settle);
  else settle();
})();
