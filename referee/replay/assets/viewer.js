// Draws one picture at a time; every picture was computed by koikoi-referee with its rules engine and observer
// (referee/replay/pictures.py). A page made for one seat holds only that seat's pictures: no hidden card is in it.
// Replay text is only ever set with textContent, never parsed as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var parts = data.cards, steps = data.steps, match = data.match;
  var KINDS = [["bright", "Brights"], ["animal", "Animals"], ["ribbon", "Ribbons"], ["chaff", "Chaff"]];
  var view = document.body.getAttribute("data-seat-view");
  var at = 0;
  if (view !== "1" && view !== "2") view = "all";
  if (match.seat === 1 || match.seat === 2) view = String(match.seat);

  // How to draw a card, from its id "flower-subject" alone.
  function info(id) {
    var cut = id.indexOf("-"), flower = id.slice(0, cut), subject = id.slice(cut + 1);
    var month = parts.months[flower], kind = parts.kinds[subject];
    var name = id.replace(/-/g, " ");
    return {
      id: id, month: month, kind: kind, colour: parts.colours[month - 1],
      flower: flower === "chrysanthemum" ? "chrysanth." : flower,
      ribbon: kind === "ribbon" ? parts.ribbons[flower] : "",
      label: kind === "ribbon" ? "ribbon" : subject.indexOf("chaff") === 0 ? "" : subject,
      name: name.charAt(0).toUpperCase() + name.slice(1)
    };
  }

  // A small picture of each card (viewBox 40 x 30): the month's plant, then the card's bright, animal or ribbon
  // over it. Drawn with DOM calls only (no markup parsed, nothing loaded).
  var SVG_NS = "http://www.w3.org/2000/svg";
  var C = function (x, y, r, f, s) { return ["circle", {cx: x, cy: y, r: r, fill: f, stroke: s || "none"}]; };
  var P = function (d, f, s, w) { return ["path", {d: d, fill: f || "none", stroke: s || "none", "stroke-width": w || 1}]; };
  var PLANTS = {
    1: [P("M19 30V18h2v12z", "#5d3a1a"), P("M20 3L9 13h22z", "#1b5e20"), P("M20 8L6 19h28z", "#1b5e20"),
        P("M20 13L4 24h32z", "#2e7d32")],
    2: [P("M2 27Q18 19 38 5", "none", "#4e342e", 2), C(9, 22, 3.5, "#fff0f5", "#ad1457"), C(20, 16, 3.5, "#fff0f5", "#ad1457"),
        C(31, 10, 3.5, "#fff0f5", "#ad1457")],
    3: [C(8, 8, 4.5, "#fce4ec", "#d81b60"), C(20, 6, 4.5, "#fce4ec", "#d81b60"), C(32, 9, 4.5, "#fce4ec", "#d81b60"),
        C(14, 17, 4.5, "#fce4ec", "#d81b60"), C(27, 16, 4.5, "#fce4ec", "#d81b60")],
    4: [P("M2 2H38", "none", "#4e342e", 2), C(10, 7, 2.6, "#7e57c2"), C(10, 12, 2.6, "#9575cd"), C(10, 17, 2.6, "#b39ddb"),
        C(20, 7, 2.6, "#7e57c2"), C(20, 12, 2.6, "#9575cd"), C(20, 17, 2.6, "#b39ddb"), C(20, 22, 2.6, "#d1c4e9"),
        C(30, 7, 2.6, "#7e57c2"), C(30, 12, 2.6, "#9575cd"), C(30, 17, 2.6, "#b39ddb")],
    5: [P("M9 30L13 9l2 21z", "#2e7d32"), P("M22 30l5-24 2 24z", "#2e7d32"), P("M31 30l3-16 2 16z", "#388e3c"),
        C(13, 9, 4.5, "#4527a0", "#b39ddb"), C(27, 7, 4.5, "#4527a0", "#b39ddb")],
    6: [P("M4 28Q12 18 20 28z", "#2e7d32"), C(13, 14, 7, "#c62828", "#ffcdd2"), C(13, 14, 2.5, "#ffcdd2"),
        C(29, 15, 6, "#e53935", "#ffcdd2"), C(29, 15, 2.2, "#ffcdd2")],
    7: [P("M3 29Q12 5 37 9", "none", "#33691e", 1.6), P("M8 29Q20 14 38 20", "none", "#33691e", 1.6),
        C(8, 19, 2, "#ad1457"), C(12, 13, 2, "#ad1457"), C(18, 9, 2, "#ad1457"), C(25, 8, 2, "#ad1457"),
        C(32, 8, 2, "#ad1457"), C(20, 19, 2, "#ad1457"), C(28, 17, 2, "#ad1457")],
    8: [P("M0 30Q20 8 40 30z", "#3e2723"), P("M8 30L12 14M16 30l2-18M24 30l-1-19M32 30l-3-15", "none", "#d7ccc8", 1)],
    9: [C(20, 15, 9, "#fdd835", "#f57f17"), C(20, 15, 5.5, "#fbc02d", "#f57f17"), C(20, 15, 2.5, "#f57f17")],
    10: [P("M10 4l3 6 6-1-4 5 4 5-6-1-3 6-3-6-6 1 4-5-4-5 6 1z", "#d84315"),
         P("M29 12l3 6 6-1-4 5 4 5-6-1-3 6-3-6-6 1 4-5-4-5 6 1z", "#bf360c")],
    11: [P("M5 0Q11 15 6 30M15 0Q21 14 17 30M26 0Q31 13 28 30M35 0Q39 12 37 26", "none", "#33691e", 2)],
    12: [P("M4 28Q8 14 18 20Q12 30 4 28z", "#33691e"), P("M36 28Q32 14 22 20Q28 30 36 28z", "#33691e"),
         C(20, 5, 3, "#8e24aa"), C(15, 9, 3, "#8e24aa"), C(25, 9, 3, "#8e24aa"), C(20, 12, 3, "#ab47bc")]
  };
  var SUBJECTS = {
    crane: [P("M8 24Q20 12 34 14L30 18Q20 18 12 26z", "#fafafa", "#212121"), C(33, 9, 2.4, "#d32f2f"),
            P("M33 11V16", "none", "#212121", 1.4), C(9, 7, 5.5, "#d32f2f")],
    curtain: [P("M3 4H37V17Q28 13 20 17Q12 21 3 17z", "#b71c1c", "#ffd54f", 1.2)],
    moon: [C(27, 9, 7, "#fff8e1", "#ffb300")],
    rainman: [P("M6 2Q14 6 22 2V8H6z", "#d32f2f"), P("M16 10l5 12h-8z", "#1a237e"), C(17, 9, 2.5, "#ffe0b2")],
    phoenix: [P("M6 26Q14 6 34 4Q26 12 30 18Q20 16 14 28z", "#ff7043", "#ffd600", 1.2), C(32, 6, 2, "#ffd600")],
    warbler: [P("M10 16Q20 8 30 14Q22 20 10 16z", "#7cb342", "#33691e"), C(29, 12, 2.5, "#7cb342", "#33691e")],
    cuckoo: [P("M6 10Q18 16 34 8Q24 18 10 16z", "#37474f"), C(33, 8, 2.2, "#37474f")],
    geese: [P("M8 8l5 3 5-3M20 5l5 3 5-3M14 15l5 3 5-3", "none", "#212121", 1.8)],
    swallow: [P("M6 8L20 15L34 6L24 16L28 26L18 17z", "#263238")],
    butterfly: [C(16, 12, 4, "#ffeb3b", "#5d4037"), C(24, 12, 4, "#ffeb3b", "#5d4037"), C(17, 19, 2.8, "#ffeb3b", "#5d4037"),
                C(23, 19, 2.8, "#ffeb3b", "#5d4037")],
    boar: [P("M8 22Q10 12 22 12Q32 12 33 20L30 22z", "#4e342e"), P("M12 22v4M18 22v4M26 22v4M30 21v4", "none", "#4e342e", 2)],
    deer: [P("M9 20Q12 14 22 14Q28 14 29 19z", "#8d6e63"), P("M11 20v7M15 20v7M24 19v7M28 19v7", "none", "#6d4c41", 1.6),
           C(29, 11, 2.5, "#8d6e63"), P("M28 9l-2-5M30 9l2-5", "none", "#5d4037", 1.2)],
    bridge: [P("M2 24Q20 10 38 24", "none", "#6d4c41", 3), P("M8 20v8M20 15v12M32 20v8", "none", "#6d4c41", 2)],
    sake: [P("M10 9H30L26 19H14z", "#d32f2f", "#ffd54f", 1.2), P("M17 19H23V24H17z", "#b71c1c")],
    lightning: [P("M0 4H40V10H0z", "#37474f"), P("M18 10l6 5-4 1 5 6-8-5 3-1z", "#ffd600")]
  };
  var RIBBON_COLOURS = {red: "#d32f2f", blue: "#1e4fa3", poetry: "#d32f2f"};

  function art(card) {
    var svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("viewBox", "0 0 40 30");
    svg.setAttribute("class", "art");
    svg.setAttribute("aria-hidden", "true");
    var subject = card.id.slice(card.id.indexOf("-") + 1);
    var backdrop = ["rect", {x: 1, y: 1, width: 38, height: 28, rx: 4, fill: "#fffdf6", "fill-opacity": 0.35}];
    var shapes = [backdrop].concat(PLANTS[card.month] || [], SUBJECTS[subject] || []);
    if (card.kind === "ribbon") {
      shapes = shapes.concat([P("M15 3H25L24 27L20 24L16 27z", RIBBON_COLOURS[card.ribbon] || "#d32f2f", "#fff", 0.8)]);
      if (card.ribbon === "poetry") shapes.push(P("M18 8H22M18 12H22M18 16H22", "none", "#ffe27a", 1.4));
    }
    shapes.forEach(function (s) {
      var e = document.createElementNS(SVG_NS, s[0]);
      for (var k in s[1]) if (Object.prototype.hasOwnProperty.call(s[1], k)) e.setAttribute(k, String(s[1][k]));
      svg.appendChild(e);
    });
    return svg;
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function badge(info) {
    if (info.kind === "bright") return "\u2605 bright";
    if (info.kind === "ribbon") return info.ribbon;
    return info.kind;
  }

  function cardEl(c, marked) {
    var card = info(c), e = el("div", "card k-" + card.kind);
    e.setAttribute("data-card", card.id);
    e.setAttribute("data-month", card.month);
    e.setAttribute("data-kind", card.kind);
    e.title = card.name + " (month " + card.month + ", " + badge(card) + ")";
    e.style.setProperty("--mc", card.colour);
    e.appendChild(el("span", "num", card.month));
    e.appendChild(el("span", "flower", card.flower));
    e.appendChild(art(card));
    e.appendChild(el("span", "badge" + (card.ribbon ? " r-" + card.ribbon : ""), badge(card)));
    if (marked && marked.indexOf(c) >= 0) e.classList.add("marked");
    return e;
  }

  function backEl() {
    var e = el("div", "card back");
    e.setAttribute("data-hidden", "1");
    e.title = "hidden card";
    return e;
  }

  function fill(box, list, marked) {
    box.textContent = "";
    box.setAttribute("data-count", list.length);
    if (!list.length) box.appendChild(el("span", "empty", "none"));
    list.forEach(function (c) { box.appendChild(cardEl(c, marked)); });
  }

  function drawSeat(box, seat, s) {
    var n = seat + 1, hidden = (view !== "all" && view !== String(n)) || s.hands[seat] === null;
    box.textContent = "";
    box.setAttribute("data-seat", n);
    box.setAttribute("data-score", s.scores[seat]);
    box.setAttribute("data-hand-size", s.sizes[seat]);
    box.setAttribute("data-calls", s.calls[seat]);
    box.classList.toggle("actor", s.actor === n);
    var head = el("div", "seat-head");
    head.appendChild(el("span", "name", match.names[seat]));
    head.appendChild(el("span", "who", "seat " + n + (s.dealer === n ? " \u00b7 dealer" : "") + (hidden ? " \u00b7 hidden" : "")));
    head.appendChild(el("span", "score", "Score " + s.scores[seat]));
    if (s.calls[seat]) head.appendChild(el("span", "calls", "koi-koi \u00d7" + s.calls[seat]));
    head.appendChild(el("span", "total", s.totals[seat] ? "a stop scores " + s.totals[seat] : ""));
    box.appendChild(head);

    var body = el("div", "seat-body");
    var handZone = el("div", "zone");
    handZone.appendChild(el("h2", null, "Hand (" + s.sizes[seat] + ")"));
    var hand = el("div", "hand cards");
    hand.setAttribute("data-seat", n);
    if (hidden) {
      hand.setAttribute("data-count", s.sizes[seat]);
      for (var i = 0; i < s.sizes[seat]; i++) hand.appendChild(backEl());
    } else {
      fill(hand, s.hands[seat], s.marked);
    }
    handZone.appendChild(hand);
    body.appendChild(handZone);

    var pileZone = el("div", "zone");
    pileZone.appendChild(el("h2", null, "Captured (" + s.captured[seat].length + ")"));
    var pile = el("div", "pile");
    pile.setAttribute("data-seat", n);
    pile.setAttribute("data-count", s.captured[seat].length);
    KINDS.forEach(function (k) {
      var group = s.captured[seat].filter(function (c) { return info(c).kind === k[0]; });
      if (!group.length) return;
      var g = el("div", "group");
      g.setAttribute("data-kind", k[0]);
      g.appendChild(el("h3", null, k[1] + " " + group.length));
      var row = el("div", "cards");
      group.forEach(function (c) { row.appendChild(cardEl(c, s.marked)); });
      g.appendChild(row);
      pile.appendChild(g);
    });
    if (!s.captured[seat].length) pile.appendChild(el("span", "empty", "nothing yet"));
    pileZone.appendChild(pile);
    body.appendChild(pileZone);

    var yakuZone = el("div", "zone");
    yakuZone.appendChild(el("h2", null, "Yaku"));
    var yaku = el("ul", "yaku");
    yaku.setAttribute("data-seat", n);
    yaku.setAttribute("data-total", s.totals[seat]);
    s.yaku[seat].forEach(function (y) { yaku.appendChild(el("li", null, y[0] + " \u2014 " + y[1])); });
    if (!s.yaku[seat].length) yaku.appendChild(el("span", "empty", "none"));
    yakuZone.appendChild(yaku);
    body.appendChild(yakuZone);
    box.appendChild(body);
  }

  function render() {
    var s = steps[at], bottom = view === "2" ? 1 : 0;
    document.body.setAttribute("data-step", at);
    document.body.setAttribute("data-steps", steps.length);
    document.body.setAttribute("data-seat-view", view);
    document.body.setAttribute("data-round", s.round);
    document.getElementById("counter").textContent = "Step " + (at + 1) + " / " + steps.length + " \u00b7 round " + s.round + " of " + match.rounds;
    document.getElementById("move").textContent = s.text;
    drawSeat(document.getElementById("seat-top"), 1 - bottom, s);
    drawSeat(document.getElementById("seat-bottom"), bottom, s);
    fill(document.getElementById("field"), s.field, s.marked);
    fill(document.getElementById("drawn"), s.drawn === null ? [] : [s.drawn], s.marked);
    var stock = document.getElementById("stock");
    stock.textContent = "";
    stock.setAttribute("data-count", s.stock);
    if (s.stock) stock.appendChild(view === "all" && s.next !== null ? cardEl(s.next, null) : backEl());
    stock.appendChild(el("span", "stock-count", s.stock + " left" + (view === "all" && s.stock ? " (next shown)" : "")));
    document.getElementById("round").value = String(s.round);
    document.getElementById("first").disabled = document.getElementById("prev").disabled = at === 0;
    document.getElementById("last").disabled = document.getElementById("next").disabled = at === steps.length - 1;
  }

  function go(i) {
    at = Math.max(0, Math.min(steps.length - 1, i));
    render();
  }

  var rounds = document.getElementById("round"), firstOf = {};
  steps.forEach(function (s, i) {
    if (firstOf[s.round] !== undefined) return;
    firstOf[s.round] = i;
    var o = el("option", null, s.round);
    o.value = String(s.round);
    rounds.appendChild(o);
  });
  rounds.addEventListener("change", function () { go(firstOf[rounds.value]); });
  var seatSel = document.getElementById("seat");
  seatSel.value = view;
  if (match.seat === 1 || match.seat === 2) seatSel.disabled = true;  // the other pictures are not in this page
  seatSel.addEventListener("change", function () { view = seatSel.value; render(); });
  document.getElementById("first").addEventListener("click", function () { go(0); });
  document.getElementById("prev").addEventListener("click", function () { go(at - 1); });
  document.getElementById("next").addEventListener("click", function () { go(at + 1); });
  document.getElementById("last").addEventListener("click", function () { go(steps.length - 1); });
  document.addEventListener("keydown", function (ev) {
    if (ev.target && ev.target.tagName === "SELECT") return;
    var moves = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: steps.length - 1 };
    if (!(ev.key in moves)) return;
    ev.preventDefault();
    go(moves[ev.key]);
  });

  var res = match.result, facts = "match " + match.id + " \u00b7 rules " + match.rules + " (" + match.rounds + (match.rounds === 1 ? " round)" : " rounds)");
  if (match.seed !== null) facts += " \u00b7 seed " + match.seed;
  if (res) {
    var sc = res.scores.join("\u2013");
    facts += " \u00b7 " + (res.winner ? match.names[res.winner - 1] + " wins " + sc : "draw " + sc) + " (" + res.reason + ")";
  } else {
    facts += " \u00b7 unfinished";
  }
  document.getElementById("title").textContent = match.names[0] + " vs " + match.names[1];
  document.getElementById("facts").textContent = facts;
  render();
})();
