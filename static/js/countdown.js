// countdown.js: live countdowns on top of times the server already wrote as text, so a
// page reads right without it.
//   - .countdown[data-expires-at]: a hold's time left, "(9:58 left)"; once it has run
//     out, the element fires "holdexpired" (bubbling) so that htmx can ask the server,
//     whose database clock decides, for the hold panel again.
//   - [data-countdown-to]: the time until a moment (the onsale), written into the
//     element's <time> child as "in 2 days", "in 3 hours 5 minutes", "in 4:59", then
//     "now".
// No eval, no inline script or style: it runs under the page's strict CSP.
(function () {
  "use strict";
  var lastExpiredAsk = 0;
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function count(n, what) { return n + " " + what + (n === 1 ? "" : "s"); }
  // As the server words it (web/page_events.go untilText), but to the second in the
  // last hour.
  function until(s) {
    if (s <= 0) return "now";
    if (s >= 2 * 86400) return "in " + count(Math.floor(s / 86400), "day");
    if (s >= 3600) {
      var m = Math.floor(s % 3600 / 60);
      return "in " + count(Math.floor(s / 3600), "hour") + (m ? " " + count(m, "minute") : "");
    }
    return "in " + Math.floor(s / 60) + ":" + two(s % 60);
  }
  function tick() {
    var now = Date.now(), i, el, end, left, text;
    var holds = document.querySelectorAll(".countdown[data-expires-at]");
    for (i = 0; i < holds.length; i++) {
      el = holds[i];
      end = Date.parse(el.getAttribute("data-expires-at"));
      if (isNaN(end)) continue;
      left = Math.max(0, Math.round((end - now) / 1000));
      text = left > 0 ? "(" + Math.floor(left / 60) + ":" + two(left % 60) + " left)" : "(run out)";
      if (el.textContent !== text) el.textContent = text;
      el.classList.toggle("urgent", left > 0 && left <= 60);
      // The database's clock decides; ask a moment after ours says so, and not often.
      if (end - now < -2000 && now - lastExpiredAsk > 10000) {
        lastExpiredAsk = now;
        el.dispatchEvent(new CustomEvent("holdexpired", { bubbles: true }));
      }
    }
    var moments = document.querySelectorAll("[data-countdown-to]");
    for (i = 0; i < moments.length; i++) {
      el = moments[i];
      end = Date.parse(el.getAttribute("data-countdown-to"));
      var out = el.querySelector("time") || el;
      if (isNaN(end)) continue;
      text = until(Math.max(0, Math.round((end - now) / 1000)));
      if (out.textContent !== text) out.textContent = text;
    }
  }
  window.boxofficeCountdown = tick; // for scripts that swap countdowns in
  setInterval(tick, 1000);
  document.addEventListener("htmx:afterSettle", tick);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", tick);
  else tick();
})();
