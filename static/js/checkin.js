// checkin.js: the door's page, on top of a form that works by typing alone.
//   - After each answer htmx swaps in, the code field is emptied and focused for the
//     next scan (a handheld scanner types the code and Enter into it).
//   - Camera scanning with the BarcodeDetector API, only where the browser has it and
//     reads QR codes: a button starts the rear camera; a code seen is put in the field
//     and the form submitted, once per code until another is seen (the same ticket held
//     in front of the camera is one scan, not thirty).
// No eval, no inline script or style: it runs under the page's strict CSP.
(function () {
  "use strict";
  function ready(fn) {
    if (document.readyState !== "loading") fn(); else document.addEventListener("DOMContentLoaded", fn);
  }
  ready(function () {
    var form = document.getElementById("checkin-form");
    if (!form) return;
    var code = document.getElementById("code");

    document.body.addEventListener("htmx:afterRequest", function (e) {
      if (e.detail.elt !== form) return;
      code.value = "";
      code.focus();
    });

    var box = document.getElementById("checkin-camera");
    var toggle = document.getElementById("camera-toggle");
    var video = document.getElementById("camera-view");
    if (!("BarcodeDetector" in window) || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) return;
    window.BarcodeDetector.getSupportedFormats().then(function (formats) {
      if (formats.indexOf("qr_code") < 0) return;
      box.hidden = false;
      var detector = new window.BarcodeDetector({ formats: ["qr_code"] });
      var stream = null, last = "", timer = 0;

      function stop() {
        if (stream) stream.getTracks().forEach(function (t) { t.stop(); });
        stream = null;
        clearTimeout(timer);
        video.hidden = true;
        toggle.setAttribute("aria-pressed", "false");
        toggle.textContent = "Scan with the camera";
      }
      function look() {
        if (!stream) return;
        detector.detect(video).then(function (found) {
          var seen = found.length ? found[0].rawValue.trim() : "";
          if (seen && seen !== last) {
            last = seen;
            code.value = seen;
            form.requestSubmit();
          }
        }).catch(function () { /* a frame not ready yet: look again */ })
          .then(function () { timer = setTimeout(look, 250); });
      }
      toggle.addEventListener("click", function () {
        if (stream) { stop(); return; }
        navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false })
          .then(function (s) {
            stream = s;
            last = "";
            video.srcObject = s;
            video.hidden = false;
            toggle.setAttribute("aria-pressed", "true");
            toggle.textContent = "Stop the camera";
            return video.play();
          })
          .then(look)
          .catch(function () {
            stop();
            toggle.textContent = "Camera not available: type the code";
            toggle.disabled = true;
          });
      });
    }).catch(function () { /* no formats: typing it is */ });
  });
})();
