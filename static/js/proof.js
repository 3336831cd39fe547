// proof.js: the proof of work a page asks for before a queue join or a session's first
// hold (web/proof.go, views/proof.templ). For each box marked data-proof it loads
// ALTCHA's widget (static/js/vendor: the build without inline styles or blob: workers,
// so the page's CSP stays 'self'), gives it the vendored SHA worker, and puts a widget
// in the box, which fetches a challenge and solves it in the background at once. The
// widget keeps its own checkbox, labels and states (verifying, verified, an error with
// a retry), which keyboards and screen readers know.
//   - The solution goes with the page's htmx POSTs to …/holds and …/queue in X-Altcha;
//     such a request made before it is ready waits for it (htmx:confirm).
//   - A join form in a box (data-proof-submit) is sent as soon as its proof is ready.
//   - A challenge that expires is solved afresh; so is one the server refused (403).
//   - After a hold the server accepted (2xx), the session has proved: the box goes.
// No eval, no inline script or style.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  var loading = null; // the widget's module, imported once
  var current = null; // the box whose widget solves: {box, widget, payload, failed}
  var waiting = []; // requests held until the payload is ready

  function load(box) {
    if (loading) return loading;
    var css = box.getAttribute("data-proof-css");
    if (css && !document.querySelector('link[href="' + css + '"]')) {
      var l = document.createElement("link");
      l.rel = "stylesheet";
      l.href = css;
      document.head.appendChild(l);
    }
    var worker = box.getAttribute("data-proof-worker");
    loading = import(box.getAttribute("data-proof-module")).then(function () {
      globalThis.$altcha.algorithms.set("SHA-256", function () { return new Worker(worker); });
    });
    return loading;
  }

  function release() {
    var go = waiting;
    waiting = [];
    for (var i = 0; i < go.length; i++) go[i](true);
  }

  function start(box) {
    if (box.hasAttribute("data-proof-started")) return;
    box.setAttribute("data-proof-started", "");
    var cur = { box: box, widget: null, payload: "", failed: false, sent: 0 };
    current = cur;
    load(box).then(function () {
      var w = document.createElement("altcha-widget");
      w.setAttribute("challenge", box.getAttribute("data-proof-challenge"));
      w.setAttribute("auto", "onload");
      w.setAttribute("name", "altcha");
      // No waiting on top of the work, no record of the pointer and keys, no link
      // to ALTCHA's site (footer, logo).
      w.setAttribute("configuration", JSON.stringify({ minDuration: 0, humanInteractionSignature: false, hideFooter: true, hideLogo: true }));
      cur.widget = w;
      w.addEventListener("verified", function (e) {
        cur.payload = (e.detail && e.detail.payload) || "";
        cur.failed = false;
        box.setAttribute("data-proof-state", "verified");
        if (current !== cur) return;
        release();
        // Sent by itself a few times at most: a server that keeps refusing the proof
        // is not asked again and again; the button stays.
        var form = box.closest("form[data-proof-submit]");
        if (form && form.isConnected && cur.sent++ < 3) {
          if (form.requestSubmit) form.requestSubmit();
          else htmx.trigger(form, "submit");
        }
      });
      w.addEventListener("expired", function () { again(cur); });
      w.addEventListener("statechange", function (e) {
        var state = e.detail && e.detail.state;
        if (state) box.setAttribute("data-proof-state", state);
        if (state === "error" && current === cur) {
          // Requests held for it go without: the server says what is wrong, and the
          // widget offers a retry.
          cur.failed = true;
          release();
        }
      });
      box.querySelector("[data-proof-widget]").appendChild(w);
    }).catch(function () {
      cur.failed = true;
      box.setAttribute("data-proof-state", "error");
      release();
    });
  }

  // again solves a fresh challenge in the same widget.
  function again(cur) {
    cur.payload = "";
    cur.failed = false;
    if (!cur.widget || !cur.widget.verify) return;
    if (cur.widget.reset) cur.widget.reset();
    cur.widget.verify();
  }

  function scan(root) {
    root = root && root.querySelectorAll ? root : document;
    if (current && !current.box.isConnected) current = null;
    if (root.matches && root.matches("[data-proof]")) start(root);
    var boxes = root.querySelectorAll("[data-proof]");
    for (var i = 0; i < boxes.length; i++) start(boxes[i]);
  }

  // needs: an htmx request that takes the proof.
  function needs(d) {
    var cfg = (d && d.requestConfig) || d;
    return !!(current && cfg && /^post$/i.test(cfg.verb || "") && /\/(holds|queue)$/.test((cfg.path || "").split("?")[0]));
  }
  document.addEventListener("htmx:confirm", function (e) {
    if (!needs(e.detail) || current.payload || current.failed) return;
    e.preventDefault();
    waiting.push(e.detail.issueRequest);
  });
  document.addEventListener("htmx:configRequest", function (e) {
    if (needs(e.detail) && current.payload) e.detail.headers["X-Altcha"] = current.payload;
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    if (!needs(e.detail)) return;
    var cur = current, status = e.detail.xhr ? e.detail.xhr.status : 0;
    if (status === 403) return again(cur);
    if (status >= 200 && status < 300 && /\/holds$/.test(e.detail.requestConfig.path)) {
      current = null; // proved: later holds of this session need nothing
      cur.box.remove();
    }
  });
  document.addEventListener("htmx:load", function (e) { scan(e.target); });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { scan(); });
  else scan();
})();
