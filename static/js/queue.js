// queue.js: the queue page asks where its visitor stands at the pace the server sets
// (data-poll-after, in seconds, on the status it answered): every second when the turn
// may come within a few seconds, every few seconds further back. htmx makes the request
// (the section's hx-trigger="queuepoll"); this only says when, counting the pace from
// when the last request went out, so that a slow answer does not stretch the page's
// refresh past the pace. A request that fails (the network, a 5xx) is tried again at
// the last pace given.
// No eval, no inline script or style: it runs under the page's strict CSP.
(function () {
  "use strict";
  var timer = 0, pace = 3, sentAt = 0;
  function schedule() {
    var q = document.getElementById("queue");
    if (!q || !window.htmx) return;
    var el = q.querySelector("[data-poll-after]");
    var s = el ? parseInt(el.getAttribute("data-poll-after"), 10) : NaN;
    if (s > 0) pace = s;
    var wait = pace * 1000 - (sentAt ? Date.now() - sentAt : 0);
    clearTimeout(timer);
    timer = setTimeout(function () { htmx.trigger(q, "queuepoll"); }, Math.max(wait, 250));
  }
  function fromQueue(e) { return e.target && e.target.id === "queue"; }
  document.addEventListener("htmx:beforeRequest", function (e) { if (fromQueue(e)) sentAt = Date.now(); });
  // afterRequest comes for every ending, success or not; afterSettle once a new status
  // is in place, with its own pace.
  document.addEventListener("htmx:afterRequest", function (e) { if (fromQueue(e)) schedule(); });
  document.addEventListener("htmx:afterSettle", function (e) { if (fromQueue(e)) schedule(); });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", schedule);
  else schedule();
})();
