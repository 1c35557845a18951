(function () {
  "use strict";
  // Search as you type: the form works without this; with it, hits come from /api/search.
  var form = document.getElementById("search-form");
  var results = document.getElementById("results");
  if (form && results) {
    var input = form.querySelector("input[name=q]");
    var timer = null;
    var latest = 0;
    var el = function (tag, cls, text) {
      var e = document.createElement(tag);
      if (cls) { e.className = cls; }
      if (text !== undefined && text !== null) { e.textContent = text; }
      return e;
    };
    // As the server writes times: 2026-11-20 09:00.
    var when = function (t) { return t && t.length >= 16 ? t.slice(0, 10) + " " + t.slice(11, 16) : (t || ""); };
    var show = function (status, body, q, correction) {
      results.textContent = "";
      if (correction) {
        results.appendChild(el("p", "muted correction", correction));
      }
      if (status !== 200) {
        results.appendChild(el("p", "error-message", body && body.error ? body.error : "search failed"));
        return;
      }
      if (!body.length) {
        results.appendChild(el("p", "muted", "No matches."));
        return;
      }
      var list = el("ol", "hits");
      body.forEach(function (h) {
        var item = el("li", "hit");
        var link = el("a", "hit-title", h.title || "(untitled)");
        var href = "/sessions/" + encodeURIComponent(h.session_id) + "?q=" + encodeURIComponent(q);
        if (h.turn !== null && h.turn !== undefined) { href += "#turn-" + h.turn; }
        link.setAttribute("href", href);
        item.appendChild(link);
        var facts = [h.source, h.repository || h.cwd || "", h.turn === null ? "" : "turn " + h.turn, when(h.timestamp)];
        item.appendChild(el("span", "muted", " " + facts.filter(Boolean).join(" · ")));
        var snippet = el("div", "snippet");
        String(h.snippet).split("**").forEach(function (part, i) {
          snippet.appendChild(i % 2 ? el("mark", null, part) : document.createTextNode(part));
        });
        item.appendChild(snippet);
        list.appendChild(item);
      });
      results.appendChild(list);
    };
    var run = function () {
      var params = new URLSearchParams(new FormData(form));
      var q = (params.get("q") || "").trim();
      if (!q) { return; }
      var mine = ++latest;
      fetch("/api/search?" + params.toString(), { headers: { "Accept": "application/json" } })
        .then(function (r) {
          // Words replaced by near spellings (issue 43): said above the hits.
          var c = r.headers.get("X-Trail-Correction");
          return r.json().then(function (j) { return [r.status, j, c ? decodeURIComponent(c) : null]; });
        })
        .then(function (res) {
          if (mine !== latest) { return; }
          show(res[0], res[1], q, res[2]);
          history.replaceState(null, "", "/search?" + params.toString());
        })
        .catch(function () { /* the plain form still works */ });
    };
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(run, 200);
    });
  }
  // New sessions while the page is open (the server indexes with --watch).
  var notice = document.getElementById("new-sessions");
  if (notice && window.EventSource) {
    var known = Number(notice.getAttribute("data-sessions"));
    var events = new EventSource("/api/events");
    events.addEventListener("index", function (ev) {
      var state = JSON.parse(ev.data);
      if (state.sessions > known) {
        notice.querySelector(".count").textContent = String(state.sessions - known);
        notice.hidden = false;
      }
    });
  }
})();
