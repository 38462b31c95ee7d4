// {{NAME}}: a koikoi/1 bot. It reads one JSON message per line on stdin and answers requests on stdout.
"use strict";
const readline = require("readline");

/** @typedef {{play?: string, capture?: string, koikoi?: boolean}} Action  one element of a request's legal list */
/** @typedef {{seat: number, hand: string[], field: string[], drawn: string | null}} View */
/** @typedef {{type: "request", id: number, decision: "play" | "capture" | "koikoi", view: View, legal: Action[]}} Request */

/** Debug output goes to stderr: the referee keeps it in a log file (stdout is for protocol lines only). */
function log(...parts) {
  process.stderr.write(`[{{NAME}}] ${parts.join(" ")}\n`);
}

/** @param {string} cardId @returns {string} the month: "pine" for "pine-crane" */
const month = (cardId) => cardId.split("-")[0];

/**
 * The strategy: stop at the first yaku, else play a card that takes something from the field.
 * @param {Request} request
 * @returns {Action}
 */
function choose(request) {
  const { legal } = request;
  if (request.decision === "koikoi") return legal.find((a) => a.koikoi === false);
  const onField = new Set(request.view.field.map(month));
  return legal.find((a) => "capture" in a || onField.has(month(a.play || ""))) || legal[0];
}

/** Write one line; node writes it at once to the pipe. */
function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (line) => {
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      log("seat", message.seat, "rules", message.rules.name);
      send({ type: "hello", name: "{{NAME}}", version: "0.1", protocol: "koikoi/1" });
      break;
    case "new_match":
      log("new match", message.match.id);
      break;
    case "request":
      send({ type: "action", id: message.id, action: choose(message) });
      break;
    case "error":
      log("referee:", message.message);
      break;
    case "bye":
      process.exit(0);
  }
});
