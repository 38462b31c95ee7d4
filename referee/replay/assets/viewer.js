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
    e.appendChild(el("span", "label", card.label));
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
