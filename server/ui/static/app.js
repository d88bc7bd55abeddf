// mnemo memory viewer: live refresh and confirmations. Plain script, no
// library; the page works without it (except live refresh).
(function () {
  "use strict";

  // Confirm destructive forms (data-confirm holds the question).
  document.addEventListener("submit", function (e) {
    var q = e.target.getAttribute("data-confirm");
    if (q && !window.confirm(q)) {
      e.preventDefault();
    }
  });

  // After a change the page comes back with the changed item's edit
  // control in its fragment: the focus goes back to it, not to the top.
  if (location.hash.length > 1) {
    var back = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (back) {
      back.focus();
    }
  }

  // The scope switcher changes page only with its Show button: an arrow
  // key on a select fires "change", and must not leave the page.

  // Live: poll the scope's revision; when it changes, fetch this page
  // again and swap its main content, unless the person is typing in it.
  var revURL = document.body.getAttribute("data-rev-url");
  var meta = document.querySelector('meta[name="mnemo-rev"]');
  if (!revURL || !meta || !window.fetch) {
    return;
  }
  var rev = meta.getAttribute("content");
  var live = document.getElementById("live");
  var busy = false;

  function editing() {
    var a = document.activeElement;
    if (!a || !a.closest("main")) {
      return false;
    }
    if (a.matches("textarea, input:not([type=hidden]), select")) {
      return true;
    }
    var open = document.querySelector("main details.edit[open]");
    return open !== null;
  }

  function say(text) {
    if (live) {
      live.textContent = text;
    }
  }

  function refresh() {
    return fetch(location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (!r.ok) {
          throw new Error(String(r.status));
        }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("main");
        var m = doc.querySelector('meta[name="mnemo-rev"]');
        if (!fresh) {
          return;
        }
        // Keep the keyboard focus on the same control (by id) when it is
        // still there, else on the content.
        var focused = document.activeElement;
        var id = focused && focused.id && focused.closest("main") ? focused.id : "";
        var hadFocus = focused && focused.closest("main") !== null;
        document.querySelector("main").replaceWith(document.adoptNode(fresh));
        if (hadFocus) {
          var again = id ? document.getElementById(id) : null;
          (again || document.getElementById("main")).focus();
        }
        if (m) {
          rev = m.getAttribute("content");
          meta.setAttribute("content", rev);
        }
        say("Updated at " + new Date().toLocaleTimeString() + " with changes made elsewhere.");
        window.setTimeout(function () {
          say("");
        }, 8000);
      });
  }

  function poll() {
    if (busy || document.hidden) {
      return;
    }
    busy = true;
    fetch(revURL, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        return r.ok ? r.text() : rev;
      })
      .then(function (v) {
        if (v === rev) {
          return null;
        }
        if (editing()) {
          say("The memory changed elsewhere; reload to see it (you are editing).");
          return null;
        }
        return refresh();
      })
      .catch(function () {
        say("Live updates paused: the viewer does not answer.");
      })
      .then(function () {
        busy = false;
      });
  }

  window.setInterval(poll, 2000);
  document.addEventListener("visibilitychange", poll);
})();
