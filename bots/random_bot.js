#!/usr/bin/env node
// A koikoi/1 bot that plays a uniformly random legal action. Node.js, no npm packages; copy it freely.
// Run: node bots/random_bot.js [--seed N]. One JSON object per line on stdin and stdout; logs go to stderr.
"use strict";

const readline = require("readline");

// mulberry32: a small seeded generator, so that --seed makes the bot repeatable.
function makeRandom(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const seedAt = process.argv.indexOf("--seed");
const random =
  seedAt >= 0 ? makeRandom(Number(process.argv[seedAt + 1])) : makeRandom(Math.floor(Math.random() * 2 ** 32));

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n"); // pipes are written synchronously on Linux
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });

rl.on("line", (line) => {
  const msg = JSON.parse(line);
  switch (msg.type) {
    case "hello":
      send({ type: "hello", name: "random-js", version: "1.0", protocol: "koikoi/1" });
      break;
    case "request": {
      const legal = msg.legal;
      send({ type: "action", id: msg.id, action: legal[Math.floor(random() * legal.length)] });
      break;
    }
    case "error":
      console.error("referee error: " + msg.message);
      break;
    case "bye":
      rl.close();
      process.exit(0);
      break;
    default: // new_match and event need no answer
      break;
  }
});

rl.on("close", () => process.exit(0)); // EOF: the referee is gone
